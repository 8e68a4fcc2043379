"""The event engine: integer-picosecond time and callbacks, nothing about networks.

Two forms of one idea live here.

- :class:`Engine` is the readable reference: a binary heap of ``(time_ps, priority, seq,
  callback)``; :meth:`Engine.run` pops the earliest entry and calls it. Ties are broken by
  ``priority`` and then by the order of scheduling (``seq``), so a run is deterministic. It is
  what the components would look like as Python objects, and the baseline that
  ``benchmarks/packet_engine.py`` measures the fast form against.
- The fast form is the same heap as rows of one numpy table (:func:`event_heap`) with
  :func:`heap_push` / :func:`heap_pop` compiled by numba. A "callback" is an event *kind*
  (a small integer) plus three arguments; the packet simulator's dispatch loop
  (:mod:`fabricplan.sim.packet.kernel`) maps each kind to the component function that handles
  it. Numba is the optional ``fast`` extra: without it the same functions run as plain Python
  (slowly, but with the same results).

Life cycle of an event: scheduled (pushed with a time not before *now*), pending in the heap,
popped in ``(time, priority, seq)`` order, handled once. Nothing cancels an event; components
that need to forget one keep an epoch number and ignore stale events when they fire.

>>> engine = Engine()
>>> seen = []
>>> engine.schedule(2_000, lambda: seen.append(("b", engine.now_ps)))
>>> engine.schedule(1_000, lambda: seen.append(("a", engine.now_ps)))
>>> engine.run()
2
>>> seen
[('a', 1000), ('b', 2000)]
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

F = TypeVar("F", bound=Callable[..., Any])


def _drop_stale_cache() -> None:
    """Numba's disk cache notices a change only in a function's own file; the dispatch loop
    links code from every module of this package. Forget the package's cached machine code
    whenever any of its sources changes."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    cache = here / "__pycache__"
    stamp = cache / "numba-sources.sha256"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        for stale in (*cache.glob("*.nbi"), *cache.glob("*.nbc")):
            stale.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only install keeps what it has
        return


_drop_stale_cache()

try:  # numba is the optional "fast" extra; without it the same code runs as plain Python.
    from numba import njit as _numba_njit

    HAVE_NUMBA = True

    # Nothing is allocated inside compiled code, so it runs without the runtime's reference
    # counting (``_nrt=False``): with it, passing the run's arrays between functions cost
    # 40 % of the time in atomic increments.
    _OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}

    def jit(func: F) -> F:
        """Compile ``func`` with numba (cached on disk), or leave it as Python."""
        return cast(F, _numba_njit(**_OPTIONS)(func))

except ImportError:  # pragma: no cover - exercised only where numba is missing
    HAVE_NUMBA = False

    def jit(func: F) -> F:
        """Compile ``func`` with numba (cached on disk), or leave it as Python."""
        return func


SEQ_BITS = 40
"""Bits of the tie-break key given to the scheduling sequence number (2**40 events a run); the
bits above hold the event's priority."""


class Engine:
    """A minimal discrete-event engine: time in integer picoseconds, callbacks, no networking.

    Examples
    --------
    >>> e = Engine()
    >>> order = []
    >>> for name in "xyz":
    ...     e.schedule(5, lambda n=name: order.append(n))   # same time: scheduling order
    >>> e.run(), order
    (3, ['x', 'y', 'z'])
    """

    def __init__(self) -> None:
        self.now_ps = 0
        self._seq = 0
        self._heap: list[tuple[int, int, int, Callable[[], None]]] = []

    def schedule(self, at_ps: int, callback: Callable[[], None], priority: int = 0) -> None:
        """Call ``callback`` at ``at_ps`` (not before now)."""
        if at_ps < self.now_ps:
            raise ValueError(f"cannot schedule in the past ({at_ps} < {self.now_ps})")
        self._seq += 1
        heapq.heappush(self._heap, (at_ps, priority, self._seq, callback))

    def run(self, until_ps: int | None = None) -> int:
        """Handle events in time order until none is left (or the next is after ``until_ps``);
        returns the number handled."""
        handled = 0
        heap = self._heap
        while heap:
            if until_ps is not None and heap[0][0] > until_ps:
                break
            at_ps, _, _, callback = heapq.heappop(heap)
            self.now_ps = at_ps
            callback()
            handled += 1
        return handled


EV_TIME, EV_KEY, EV_KIND, EV_A, EV_B, EV_C = range(6)
"""Columns of a heap row: time (ps), tie-break key, kind, and the kind's three arguments."""
EV_COLS = 6
HEAP_SIZE, HEAP_SEQ, HEAP_NOW = range(3)
"""Slots of the heap's ``meta`` array: pending events, next sequence number, current time."""


def event_heap(capacity: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """An empty heap (``rows``, ``meta``) for ``capacity`` pending events.

    The fast engine's pending events are rows of one ``int64`` table kept as a binary min-heap
    on ``(time, key)``; ``key`` is ``priority << SEQ_BITS | seq``.

    >>> rows, meta = event_heap(4)
    >>> heap_push(rows, meta, 30, 0, 1, 0, 0, 0)
    >>> heap_push(rows, meta, 10, 0, 2, 0, 0, 0)
    >>> slot = heap_pop(rows, meta)
    >>> int(rows[slot, EV_KIND]), int(meta[HEAP_NOW]), int(meta[HEAP_SIZE])
    (2, 10, 1)
    """
    return np.zeros((capacity, EV_COLS), dtype=np.int64), np.zeros(3, dtype=np.int64)


@jit
def _before(rows: NDArray[np.int64], i: int, at_ps: int, key: int) -> bool:
    """Row ``i`` comes before an event with ``(at_ps, key)``."""
    ti = rows[i, EV_TIME]
    return bool(ti < at_ps or (ti == at_ps and rows[i, EV_KEY] < key))


@jit
def _move(rows: NDArray[np.int64], dst: int, src: int) -> None:
    for k in range(EV_COLS):
        rows[dst, k] = rows[src, k]


@jit
def heap_push(
    rows: NDArray[np.int64],
    meta: NDArray[np.int64],
    at_ps: int,
    priority: int,
    kind: int,
    a: int,
    b: int,
    c: int,
) -> None:
    """Schedule event ``kind(a, b, c)`` at ``at_ps``; the caller keeps room in the heap."""
    i = meta[HEAP_SIZE]
    meta[HEAP_SIZE] = i + 1
    seq = meta[HEAP_SEQ]
    meta[HEAP_SEQ] = seq + 1
    key = (priority << SEQ_BITS) | seq
    while i > 0:  # sift the hole up: parents after the new event move down
        parent = (i - 1) >> 1
        if _before(rows, parent, at_ps, key):
            break
        _move(rows, i, parent)
        i = parent
    rows[i, EV_TIME] = at_ps
    rows[i, EV_KEY] = key
    rows[i, EV_KIND] = kind
    rows[i, EV_A] = a
    rows[i, EV_B] = b
    rows[i, EV_C] = c


@jit
def heap_pop(rows: NDArray[np.int64], meta: NDArray[np.int64]) -> int:
    """Remove the earliest event, advance the clock to it, and return the row it now sits in
    (just past the heap; readable until the next push)."""
    n = meta[HEAP_SIZE] - 1
    meta[HEAP_SIZE] = n
    # The earliest event goes to row n (one past the heap); the old last one fills the hole.
    for k in range(EV_COLS):
        rows[0, k], rows[n, k] = rows[n, k], rows[0, k]
    meta[HEAP_NOW] = rows[n, EV_TIME]
    if n <= 1:
        return int(n)
    at_ps, key = rows[0, EV_TIME], rows[0, EV_KEY]
    kind, a, b, c = rows[0, EV_KIND], rows[0, EV_A], rows[0, EV_B], rows[0, EV_C]
    i = 0
    while True:  # sift the hole down: earlier children move up
        child = 2 * i + 1
        if child >= n:
            break
        right = child + 1
        if right < n and _before(rows, right, rows[child, EV_TIME], rows[child, EV_KEY]):
            child = right
        if not _before(rows, child, at_ps, key):
            break
        _move(rows, i, child)
        i = child
    rows[i, EV_TIME] = at_ps
    rows[i, EV_KEY] = key
    rows[i, EV_KIND] = kind
    rows[i, EV_A] = a
    rows[i, EV_B] = b
    rows[i, EV_C] = c
    return int(n)


SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_MIX2 = np.uint64(0x94D049BB133111EB)


@jit
def uniform01(rng: NDArray[np.uint64]) -> float:
    """The next uniform draw in [0, 1) from a SplitMix64 stream held in ``rng[0]``.

    The state lives in the run's arrays (no global generator), so two simulations in one
    process never share randomness. Reference: Steele, Lea, Flood, "Fast splittable
    pseudorandom number generators", OOPSLA 2014.

    >>> import numpy as np
    >>> state = np.array([42], dtype=np.uint64)
    >>> a, b = uniform01(state), uniform01(state)
    >>> 0.0 <= a < 1.0 and a != b
    True
    """
    x = rng[0] + SPLITMIX_GAMMA
    rng[0] = x
    x = (x ^ (x >> np.uint64(30))) * SPLITMIX_MIX1
    x = (x ^ (x >> np.uint64(27))) * SPLITMIX_MIX2
    x = x ^ (x >> np.uint64(31))
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)
