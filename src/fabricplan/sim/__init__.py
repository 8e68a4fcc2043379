"""Simulators: one shared floor and two sibling levels over it.

The floor (this package's modules) holds what both levels use: traffic and named patterns
(:mod:`.traffic`, :mod:`.pattern`), mechanisms (:mod:`.mechanism`), pinned paths and flow keys
(:mod:`.path`), failures (:mod:`.failure`), seeds (:mod:`.seed`), the JSON summaries
(:mod:`.summary`) and the simulated-backend template (:mod:`.performance`). The levels,
:mod:`.flow` (fluid max-min rates) and :mod:`.packet` (an event engine and components), import
the floor and never each other; :mod:`.run` runs a named pattern at either level.
"""
