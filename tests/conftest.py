"""Test-session set-up."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests are deterministic (a fixed derivation of examples from each test's source) and
# judged by what they assert, never by how long one example takes on a loaded machine.
settings.register_profile("fabricplan", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("fabricplan")

# The command-line tests may choose the ``fake`` backend, which users are not offered
# (fabricplan.backends.TEST_BACKEND_ENV); the processes they start inherit it.
os.environ["FABRICPLAN_TEST_BACKENDS"] = "1"


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


def absolute_pythonpath(value: str, base: Path) -> str:
    """``PYTHONPATH`` with every entry made absolute against ``base``.

    >>> absolute_pythonpath("src", Path("/repo")) == str(Path("/repo/src"))
    True
    """
    entries = [entry for entry in value.split(os.pathsep) if entry]
    return os.pathsep.join(str((base / entry).resolve()) for entry in entries)


def foreign_package(package_file: str, root: Path) -> str | None:
    """Why the imported ``fabricplan`` (its ``__init__.py`` at ``package_file``) is not this
    checkout's ``src/fabricplan``, or ``None`` when it is.

    A relative ``PYTHONPATH=src`` resolves against the process's working directory; where it
    finds nothing, an editable install of another checkout answers the import instead, and the
    tests run that checkout's code (a first packet run once refused spectrum_x, ddc and uec with
    FP538: the other checkout was older and did not model them yet).
    """
    wanted = (root / "src" / "fabricplan").resolve()
    found = Path(package_file).resolve().parent
    if found == wanted:
        return None
    return f"the tests import fabricplan from {found}, not this checkout's {wanted}"


def pytest_configure(config: pytest.Config) -> None:
    """Make sure the session (and every process it starts, whatever its working directory)
    runs this checkout's code; then, on a source checkout, forget the packet kernels' cached
    machine code when any of their sources changed (numba checks only a function's own file;
    the dispatch loop links them all). Nothing does this at import."""
    import fabricplan

    root = Path(str(config.rootpath))
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = absolute_pythonpath(os.environ["PYTHONPATH"], Path.cwd())
    problem = foreign_package(fabricplan.__file__ or "", root)
    if problem is not None and (root / "src" / "fabricplan").is_dir():
        pytest.exit(f"{problem}: run the tests with PYTHONPATH={root / 'src'}", returncode=4)
    from fabricplan.sim.packet.compiled import drop_stale_cache

    drop_stale_cache()


@pytest.fixture(autouse=True, scope="session")
def _performance_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Simulated results cached by ``compare --backend flow|packet`` go to a temporary
    directory, never to the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FABRICPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("performance-cache")))
        yield
