"""Layer 2: closed forms — latency, collectives, training step, cost."""
