"""Test-session set-up."""

from __future__ import annotations

import pytest
from hypothesis import settings

# Property tests are deterministic (a fixed derivation of examples from each test's source) and
# judged by what they assert, never by how long one example takes on a loaded machine.
settings.register_profile("fabricplan", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("fabricplan")


def pytest_configure(config: pytest.Config) -> None:
    """On a source checkout, forget the packet kernels' cached machine code when any of their
    sources changed (numba checks only a function's own file; the dispatch loop links them
    all). Nothing does this at import."""
    from fabricplan.sim.packet.compiled import drop_stale_cache

    drop_stale_cache()
