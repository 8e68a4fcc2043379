"""Benchmark output (nccl-tests, perftest) — parsers, comparison, calibration."""
