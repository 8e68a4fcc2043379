"""The command-line edge.

It loads input, calls the library and renders; nothing imports it.
"""
