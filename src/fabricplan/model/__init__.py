"""Typed, frozen data. No I/O, no simulation."""
