"""Layer 3: benchmark output (nccl-tests, perftest) — parsers, comparison, calibration."""
