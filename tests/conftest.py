"""Test-session set-up."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """On a source checkout, forget the packet kernels' cached machine code when any of their
    sources changed (numba checks only a function's own file; the dispatch loop links them
    all). Nothing does this at import."""
    from fabricplan.sim.packet.compiled import drop_stale_cache

    drop_stale_cache()
