"""Layer 7: the command-line edge.

It loads input, calls the library and renders; nothing imports it.
"""
