"""Checking the normalized configurations against the lossless-RoCE rules
(:mod:`.rule`: every rule, its reference and its finding), one module per mechanism, and
:mod:`.linter`, which reads files and runs the checks."""
