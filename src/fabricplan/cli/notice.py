"""One-line notices a command prints on stderr before a long wait starts."""

from __future__ import annotations

import sys


def announce_compilation(level: str) -> None:
    """Say so on stderr when ``level``'s compiled kernels are not in numba's cache yet (the
    first flow or packet run after an install compiles them, up to about 40 s, with no output
    of its own; :func:`fabricplan.sim.kernel_cache.compile_notice`).

    >>> announce_compilation("analytic")   # nothing compiles for the closed forms
    """
    if level not in ("flow", "packet"):
        return
    from fabricplan.sim.kernel_cache import compile_notice

    notice = compile_notice(level)
    if notice is not None:
        print(f"fabricplan: {notice}", file=sys.stderr, flush=True)
