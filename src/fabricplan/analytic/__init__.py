"""Closed forms — latency, collectives, training step, cost."""
