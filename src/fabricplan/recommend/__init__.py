"""The decision — scores, ranking, reasons and what would flip it."""
