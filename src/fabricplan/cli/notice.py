"""What a command prints on stderr before a long wait starts: the numba compilation of a
simulation level's kernels, announced in one line and then shown as it goes."""

from __future__ import annotations

import sys
from typing import Literal


def announce_compilation(level: str) -> None:
    """When ``level``'s compiled kernels are not in numba's cache yet (the first flow or packet
    run after an install compiles them, up to about 40 s, with no output of its own), say so
    on stderr and compile them ahead of the run: a progress bar of the functions compiled so
    far on a terminal, a line with the time taken otherwise
    (:func:`fabricplan.sim.kernel_cache.compile_notice`,
    :func:`fabricplan.sim.run.compile_kernels`).

    >>> announce_compilation("analytic")   # nothing compiles for the closed forms
    """
    if level not in ("flow", "packet"):
        return
    from fabricplan.sim.kernel_cache import COMPILED_LEVELS, compile_notice, watching_compilation
    from fabricplan.sim.run import compile_kernels

    notice = compile_notice(level)
    if notice is None:
        return
    print(f"fabricplan: {notice}", file=sys.stderr, flush=True)
    chosen: Literal["flow", "packet"] = "packet" if level == "packet" else "flow"
    if not sys.stderr.isatty():
        took = compile_kernels(chosen)
        print(f"fabricplan: compiled in {took:.0f} s", file=sys.stderr, flush=True)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "compiling",
        BarColumn(),
        MofNCompleteColumn(),
        "functions",
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("compiling", total=None)

        def show(cached: int, total: int) -> None:
            bar.update(task, completed=cached, total=total)

        with watching_compilation(COMPILED_LEVELS[chosen][0], show):
            took = compile_kernels(chosen)
    print(f"fabricplan: compiled in {took:.0f} s", file=sys.stderr, flush=True)
