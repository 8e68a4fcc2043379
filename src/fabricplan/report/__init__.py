"""Layer 6: tables, figures and documents, from results only."""
