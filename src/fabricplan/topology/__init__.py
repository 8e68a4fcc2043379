"""Builders that return a designed fabric (fat tree, rail-optimized, multi-plane)."""
