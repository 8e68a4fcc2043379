"""Layer 7: the web edge (FastAPI JSON API and a page)."""
