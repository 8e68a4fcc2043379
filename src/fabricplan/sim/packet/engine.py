"""The event engine: integer-picosecond time and event kinds, nothing about networks.

Pending events are rows of one ``int64`` table kept as a binary min-heap on ``(time, key)``
(:func:`event_heap`), pushed and popped by compiled :func:`heap_push` / :func:`heap_pop`. An
event is a *kind* (a small integer) plus three arguments; the packet simulator's dispatch loop
(:mod:`fabricplan.sim.packet.kernel`) maps each kind to the component function that handles it.
Ties are broken by priority and then by the order of scheduling, so a run is deterministic.

Life cycle of an event: scheduled (pushed with a time not before *now*), pending in the heap,
popped in ``(time, priority, seq)`` order, handled once. Nothing cancels an event; components
that need to forget one keep an epoch number and ignore stale events when they fire.

>>> rows, meta = event_heap(4)
>>> heap_push(rows, meta, 2_000, 0, 7, 0, 0, 0)
>>> heap_push(rows, meta, 1_000, 0, 8, 0, 0, 0)
>>> [int(rows[heap_pop(rows, meta), EV_KIND]) for _ in range(2)], int(meta[HEAP_NOW])
([8, 7], 2000)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.compiled import jit

SEQ_BITS = 40
"""Bits of the tie-break key given to the scheduling sequence number (2**40 events a run); the
bits above hold the event's priority."""


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
