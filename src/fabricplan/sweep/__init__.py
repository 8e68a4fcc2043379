"""Layer 5: many scenarios at once (local processes; Ray when one machine is not enough)."""
