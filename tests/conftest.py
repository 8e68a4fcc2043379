"""Test-session set-up."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import settings

# Property tests are deterministic (a fixed derivation of examples from each test's source) and
# judged by what they assert, never by how long one example takes on a loaded machine.
settings.register_profile("fabricplan", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("fabricplan")


FUZZ_COUNTS = pytest.StashKey[Counter[str]]()
"""Outcomes of the hostile-input tests (tests/test_hostile_*.py), printed at the end."""


@pytest.fixture
def fuzz_counts(request: pytest.FixtureRequest) -> Counter[str]:
    """Count one hostile input per outcome (``clean error``, ``answer``...)."""
    return request.config.stash.setdefault(FUZZ_COUNTS, Counter())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = terminalreporter.config.stash.get(FUZZ_COUNTS, None)
    if counts:
        parts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        failed = [
            r for r in terminalreporter.stats.get("failed", []) if "test_hostile_" in r.nodeid
        ]
        terminalreporter.write_line(
            f"hostile inputs: {sum(counts.values())} tried ({parts}); {len(failed)} failures"
            " (traceback, undocumented exit code, long stderr or a file left behind)"
        )


def pytest_configure(config: pytest.Config) -> None:
    """On a source checkout, forget the packet kernels' cached machine code when any of their
    sources changed (numba checks only a function's own file; the dispatch loop links them
    all). Nothing does this at import."""
    from fabricplan.sim.packet.compiled import drop_stale_cache

    drop_stale_cache()


@pytest.fixture(autouse=True, scope="session")
def _performance_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Simulated results cached by ``compare --backend flow|packet`` go to a temporary
    directory, never to the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FABRICPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("performance-cache")))
        yield
