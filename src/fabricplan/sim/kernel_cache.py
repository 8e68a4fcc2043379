"""Whether a simulation level's compiled kernels are in numba's disk cache yet.

Both levels compile their hot loops with numba, ``cache=True`` (``sim/flow/solver.py``,
``sim/packet/compiled.py``): the first run after an install or a change of their sources
compiles them (about 38 s for the packet level and a few seconds for the flow level on this
project's 2-core machine), later runs load the machine code in well under a second. The
compilation happens inside the first call, with no word of its own; :func:`compile_notice`
gives the one line a command prints before it starts, when something will compile, and
:func:`watching_compilation` reports, while it runs, how many of the level's functions have
their machine code in the cache (numba writes each function's as soon as it is compiled), so
that a command can show the compilation's progress
(:func:`fabricplan.sim.run.compile_kernels` compiles a level ahead of its first run).

A kernel counts as cached when numba's index file for it exists and was written for its
current source (numba's own staleness check, the source file's time stamp and size). This reads
numba's cache layout (``Dispatcher._cache``), which is not a public API: anything unexpected
counts as "will compile", so at worst the notice is shown once too often.

>>> compile_notice("analytic") is None
True
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Literal

__all__ = [
    "COMPILED_LEVELS",
    "CompileProgress",
    "compile_notice",
    "uncompiled_in",
    "uncompiled_kernels",
    "watching_compilation",
]

CompiledLevel = Literal["flow", "packet"]

COMPILED_LEVELS: dict[str, tuple[str, str]] = {
    "flow": ("fabricplan.sim.flow", "a few seconds"),
    "packet": ("fabricplan.sim.packet", "about 40 s"),
}
"""Package of each level's kernels, and how long their compilation took here (measured on a
2-core AMD EPYC: the first packet ``simulate`` after install 45.5 s, of which about 38 s
compiling; the first flow ``simulate`` 4.6 s)."""


def _modules(package: str) -> list[ModuleType]:
    root = importlib.import_module(package)
    found = [root]
    for info in pkgutil.iter_modules(getattr(root, "__path__", []), prefix=f"{package}."):
        found.append(importlib.import_module(info.name))
    return found


def _cached(dispatcher: object) -> bool:
    try:
        cache_file = dispatcher._cache._cache_file  # type: ignore[attr-defined]
        return bool(cache_file._load_index())
    except Exception:  # numba's layout changed: assume it will compile
        return False


def _dispatchers(package: str) -> list[Any]:
    from numba.core.dispatcher import Dispatcher

    return [
        value
        for module in _modules(package)
        for value in vars(module).values()
        if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__
    ]


def uncompiled_in(package: str) -> int:
    """How many numba functions defined in ``package`` (a package or a module, imported here)
    have no machine code in the disk cache for their current source."""
    return sum(not _cached(dispatcher) for dispatcher in _dispatchers(package))


CompileProgress = Callable[[int, int], None]
"""Told the functions with machine code in the cache so far and the functions in all."""

WATCH_PERIOD_S = 0.5
"""How often :func:`watching_compilation` reads the cache's index files."""


@contextmanager
def watching_compilation(
    package: str, report: CompileProgress, period_s: float = WATCH_PERIOD_S
) -> Iterator[None]:
    """While the body runs, call ``report(cached, total)`` for ``package``'s numba functions
    every ``period_s`` and once at the end (from a thread of its own, stopped on leaving).

    Parameters
    ----------
    package
        A package or module whose numba functions to count (imported here).
    report
        Called with the functions cached so far and the functions in all.
    period_s
        Seconds between two counts.

    Examples
    --------
    >>> seen = []
    >>> with watching_compilation("fabricplan.sim.flow.solver", lambda d, n: seen.append(n)):
    ...     pass
    >>> seen[-1] > 0
    True
    """
    dispatchers = _dispatchers(package)
    stop = threading.Event()

    def count() -> None:
        report(sum(_cached(d) for d in dispatchers), len(dispatchers))

    def watch() -> None:
        while not stop.wait(period_s):
            count()

    watcher = threading.Thread(target=watch, name="fabricplan-compile-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        count()


def uncompiled_kernels(level: CompiledLevel) -> int:
    """How many of ``level``'s numba functions have no machine code in the disk cache.

    Examples
    --------
    >>> uncompiled_kernels("flow") >= 0
    True
    """
    return uncompiled_in(COMPILED_LEVELS[level][0])


def compile_notice(level: str) -> str | None:
    """The line to print before a run of ``level`` whose kernels will compile first, or
    ``None`` (nothing to compile, or a level without compiled kernels).

    Examples
    --------
    >>> notice = compile_notice("flow")
    >>> notice is None or notice.startswith("compiling the flow simulator")
    True
    """
    if level not in COMPILED_LEVELS:
        return None
    missing = uncompiled_kernels(level)  # type: ignore[arg-type]
    if not missing:
        return None
    _, took = COMPILED_LEVELS[level]
    return (
        f"compiling the {level} simulator's kernels ({missing} functions, {took}): once after"
        " an install or an update; later runs load them from numba's cache"
    )
