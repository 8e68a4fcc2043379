"""Layer 1: typed, frozen data. No I/O, no simulation."""
