"""Lossless-fabric configuration, in wings over one normalized model.

- :mod:`.model` (the normalized device configuration), :mod:`.value` (input errors and value
  parsing), :mod:`.headroom` (PFC headroom and buffer arithmetic) and :mod:`.vendor_default`
  are the floor every wing shares;
- :mod:`.reading`: one reader per device format into the model;
- :mod:`.checking`: the rules and one check module per mechanism, and the linter that runs them;
- :mod:`.baselines`: the baseline configurations a team starts from;
- :mod:`.operations`: what a fabric asks of its operators, which ``evaluate`` calls once.
"""
