"""Compilation of the packet level's kernels with numba (a required dependency).

Every component function is ``@jit``: compiled once, cached on disk, with no reference counting
in compiled code (nothing is allocated there). Numba's disk cache notices a change only in a
function's own file, while the dispatch loop links code from every module of this package:
:func:`drop_stale_cache` forgets the package's cached machine code when any source changed. It
is called by the test session and the benchmarks on a source checkout, never at import (an
installed package's sources do not change, and nothing writes into it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from llvmlite import ir
from numba import njit as _numba_njit
from numba import types
from numba.extending import intrinsic

F = TypeVar("F", bound=Callable[..., Any])

JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}
"""``_nrt=False``: with numba's runtime reference counting, passing the run's arrays between
functions cost 40 % of the time in atomic increments (benchmarks/packet_engine.py)."""

SOURCES = Path(__file__).resolve().parent
"""This package's sources, whose cached machine code :func:`drop_stale_cache` checks."""


def jit(func: F) -> F:
    """Compile ``func`` with numba (cached on disk)."""
    return cast(F, _numba_njit(**JIT_OPTIONS)(func))


def drop_stale_cache(sources: Path = SOURCES) -> bool:
    """Delete the numba cache of ``sources`` when any ``*.py`` there changed since the last
    check; returns whether it did. A read-only tree is left as it is.

    Parameters
    ----------
    sources
        A package directory holding ``@jit`` functions.

    Returns
    -------
    bool
        True when cached machine code was dropped.
    """
    digest = hashlib.sha256()
    for source in sorted(sources.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    cache = sources / "__pycache__"
    stamp = cache / "numba-sources.sha256"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return False
        for stale in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
            stale.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        return False
    return True


@intrinsic
def _prefetch(typingctx: Any, table: Any, row: Any, byte: Any) -> Any:
    """Ask the CPU to bring the cache line holding byte ``byte`` of row ``row`` of ``table``
    into its caches, without waiting for it (x86 ``prefetcht0``; a hint: it never faults and
    changes no value).

    The dispatch loop's time at 1,024 hosts goes to waiting for the lines of rows it reads at
    random (docs/performance.md); issuing the next event's loads early lets those waits overlap
    the current event's work.
    """
    if not isinstance(table, types.Array) or not isinstance(row, types.Integer):
        return None
    if not isinstance(byte, types.Integer):
        return None
    signature = types.void(table, row, byte)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        array = context.make_array(sig.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], sig.args[1], types.intp)
        offset = context.cast(builder, args[2], sig.args[2], types.intp)
        stride = builder.extract_value(array.strides, 0)
        base = builder.bitcast(array.data, ir.IntType(8).as_pointer())
        address = builder.gep(base, [builder.add(builder.mul(index, stride), offset)])
        i32 = ir.IntType(32)
        hint = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [address.type], hint)
        # read (0), keep in every cache level (3), data cache (1): LLVM LangRef, llvm.prefetch
        builder.call(fn, [address, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return signature, codegen


prefetch = cast(Callable[[Any, int, int], None], _prefetch)
"""``prefetch(table, row, byte)`` in compiled code (:func:`_prefetch`, typed for callers)."""
