"""Layer 5: the decision — scores, ranking, reasons and what would flip it."""
