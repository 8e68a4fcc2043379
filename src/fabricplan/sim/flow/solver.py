"""Max-min fair rates of flows on shared resources, with lossless back-pressure (numba).

:func:`maxmin_rates` is progressive filling done in bottleneck order: the resource with the
smallest fair share (remaining capacity / unfrozen flows) is the next bottleneck; its flows
freeze at that share and the other resources they cross are updated. A binary heap keyed by
fair share makes one solve ``O(nnz log R)`` for ``nnz`` flow-resource incidences.

With ``hol=True`` (lossless links and no congestion control yet), a congested resource also
back-pressures every resource upstream of it on its flows' paths: those links are paused
part of the time, and every flow that shares a paused link's buffer waits behind the blocked
packets, so it freezes at the same rate (head-of-line blocking, congestion spreading to
victim flows; Pfister and Norton, "Hot Spot Contention and Combining in Multistage
Interconnection Networks", IEEE Trans. Computers 1985; Zhu et al., SIGCOMM 2015, §2). The
pause spreads on from each victim's own upstream links.

>>> import numpy as np
>>> paths = np.array([[0, 2], [1, 2], [1, -1]], dtype=np.int32)   # flows 0, 1 meet at 2
>>> capacity = np.array([10.0, 10.0, 4.0])
>>> maxmin_rates(paths, np.arange(3), capacity, hol=False)[0].tolist()
[2.0, 2.0, 8.0]
>>> rates, paused = maxmin_rates(paths, np.arange(3), capacity, hol=True)
>>> rates.tolist(), paused.tolist()   # flow 2 waits behind flow 1 on paused resource 1
([2.0, 2.0, 2.0], [True, True, False])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
from numba import njit as _numba_njit
from numpy.typing import NDArray

F = TypeVar("F", bound=Callable[..., Any])


def _jit(func: F) -> F:
    """Compile a hot loop with numba (a required dependency), cached on disk."""
    return cast(F, _numba_njit(cache=True, nogil=True)(func))


@_jit
def _push(keys: Any, ids: Any, size: int, key: float, rid: int) -> int:
    i = size
    keys[i] = key
    ids[i] = rid
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] < keys[i] or (keys[parent] == keys[i] and ids[parent] <= ids[i]):
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        ids[i], ids[parent] = ids[parent], ids[i]
        i = parent
    return size + 1


@_jit
def _pop(keys: Any, ids: Any, size: int) -> tuple[float, int, int]:
    key, rid = keys[0], ids[0]
    size -= 1
    keys[0], ids[0] = keys[size], ids[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        right = left + 1
        if right < size and (
            keys[right] < keys[left] or (keys[right] == keys[left] and ids[right] < ids[left])
        ):
            child = right
        if keys[i] < keys[child] or (keys[i] == keys[child] and ids[i] <= ids[child]):
            break
        keys[i], keys[child] = keys[child], keys[i]
        ids[i], ids[child] = ids[child], ids[i]
        i = child
    return key, rid, size


_STALE_RELATIVE = 1e-12
"""A popped fair share this much below the resource's current one is stale and re-queued."""


@_jit
def _maxmin(paths: Any, active: Any, cap: Any, hol: bool) -> tuple[Any, Any]:
    n = active.size
    hops = paths.shape[1]
    nres = cap.size
    count = np.zeros(nres, np.int64)
    for i in range(n):
        f = active[i]
        for h in range(hops):
            r = paths[f, h]
            if r < 0:
                break
            count[r] += 1
    ptr = np.zeros(nres + 1, np.int64)
    for r in range(nres):
        ptr[r + 1] = ptr[r] + count[r]
    members = np.empty(ptr[nres], np.int32)  # half the bytes the scatter below touches
    fill = ptr[:nres].copy()
    for i in range(n):
        f = active[i]
        for h in range(hops):
            r = paths[f, h]
            if r < 0:
                break
            members[fill[r]] = i
            fill[r] += 1
    rem = cap.copy()
    nact = count.copy()
    # Fair shares only grow as flows freeze (each freezes at most at every share it crosses),
    # so one heap entry per resource suffices: a popped entry below the current share is
    # re-queued with the current one.
    keys = np.empty(nres + 1, np.float64)
    ids = np.empty(nres + 1, np.int64)
    size = 0
    for r in range(nres):
        if nact[r] > 0:
            size = _push(keys, ids, size, rem[r] / nact[r], r)
    rate = np.zeros(n, np.float64)
    frozen = np.zeros(n, np.bool_)
    paused = np.zeros(nres, np.bool_)
    stack = np.empty(nres + 1, np.int64)
    while size > 0:
        key, r, size = _pop(keys, ids, size)
        if nact[r] == 0:
            continue
        share = rem[r] / nact[r]
        if share > key * (1.0 + _STALE_RELATIVE) + 1e-300:
            size = _push(keys, ids, size, share, r)
            continue
        top = 0
        # Flows bottlenecked at r first, then (with hol) flows behind paused links.
        q = r
        while True:
            for j in range(ptr[q], ptr[q + 1]):
                i = members[j]
                if frozen[i]:
                    continue
                frozen[i] = True
                rate[i] = share
                f = active[i]
                upstream = True
                for h in range(hops):
                    r2 = paths[f, h]
                    if r2 < 0:
                        break
                    if r2 == q:
                        upstream = False
                    if hol and upstream and not paused[r2]:
                        paused[r2] = True
                        stack[top] = r2
                        top += 1
                    nact[r2] -= 1
                    rem[r2] = max(rem[r2] - share, 0.0)
            if top == 0:
                break
            top -= 1
            q = stack[top]
    return rate, paused


@_jit
def _add_along(paths: Any, active: Any, values: Any, out: Any) -> None:
    hops = paths.shape[1]
    for i in range(active.size):
        f = active[i]
        for h in range(hops):
            r = paths[f, h]
            if r < 0:
                break
            out[r] += values[i]


def add_along_paths(
    paths: NDArray[np.int32],
    active: NDArray[np.int64],
    values: NDArray[np.float64],
    out: NDArray[np.float64],
) -> None:
    """Add ``values[i]`` to ``out`` at every resource on the path of flow ``active[i]``.

    >>> import numpy as np
    >>> out = np.zeros(3)
    >>> add_along_paths(np.array([[0, 2], [1, -1]], dtype=np.int32), np.arange(2),
    ...                 np.array([1.0, 5.0]), out)
    >>> out.tolist()
    [1.0, 5.0, 1.0]
    """
    _add_along(
        np.ascontiguousarray(paths, dtype=np.int32),
        np.ascontiguousarray(active, dtype=np.int64),
        np.ascontiguousarray(values, dtype=np.float64),
        out,
    )


def maxmin_rates(
    paths: NDArray[np.int32],
    active: NDArray[np.int64],
    capacity: NDArray[np.float64],
    hol: bool,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Max-min fair rates of the ``active`` flows, optionally with head-of-line blocking.

    Parameters
    ----------
    paths
        ``(flows, hops)`` resource ids of every flow's path in order, ``-1`` padded.
    active
        Rows of ``paths`` to allocate.
    capacity
        Capacity of every resource (any rate unit; rates come back in it).
    hol
        Lossless back-pressure without congestion control (see the module docstring).

    Returns
    -------
    rates
        One rate per active flow; no resource carries more than its capacity.
    paused
        Resources paused by back-pressure (always ``False`` without ``hol``).
    """
    rates, paused = _maxmin(
        np.ascontiguousarray(paths, dtype=np.int32),
        np.ascontiguousarray(active, dtype=np.int64),
        np.ascontiguousarray(capacity, dtype=np.float64),
        bool(hol),
    )
    return cast(NDArray[np.float64], rates), cast(NDArray[np.bool_], paused)
