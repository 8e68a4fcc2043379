"""Traffic steps: a step's flows start once every step it waits for is done, plus its delay.

The same dependency graph the flow level runs (:class:`fabricplan.sim.traffic.Traffic`):
a collective is a chain of steps, a training iteration a graph of collectives. A step is done
when the receivers of all its flows have every byte.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_FLOW_START, EV_STEP_START, now_ps, schedule
from fabricplan.sim.packet.state import (
    F_OFFSET_PS,
    F_STEP,
    ST_COLS,
    ST_DELAY_PS,
    ST_FINISH_PS,
    ST_REMAINING,
    ST_START_PS,
    ST_WAITING,
    ZERO,
    SimState,
)
from fabricplan.sim.traffic import Traffic
from fabricplan.units import us_to_ps


@jit
def on_step_start(s: SimState, st: int) -> None:
    now = now_ps(s)
    s.st[st, ST_START_PS] = now
    for i in range(s.step_flow_ptr[st], s.step_flow_ptr[st + 1]):
        f = s.step_flows[i]
        schedule(s, now + s.fi[f, F_OFFSET_PS], EV_FLOW_START, f, ZERO, ZERO)
    if s.st[st, ST_REMAINING] == 0:
        _finish(s, st, now)


@jit
def _finish(s: SimState, st: int, now: int) -> None:
    s.st[st, ST_FINISH_PS] = now
    for i in range(s.step_dep_ptr[st], s.step_dep_ptr[st + 1]):
        d = s.step_dependents[i]
        s.st[d, ST_WAITING] -= 1
        if s.st[d, ST_WAITING] == 0:
            schedule(s, now + s.st[d, ST_DELAY_PS], EV_STEP_START, d, ZERO, ZERO)


@jit
def on_flow_received(s: SimState, f: int) -> None:
    """Flow ``f``'s receiver has every byte: its step may be done."""
    st = s.fi[f, F_STEP]
    s.st[st, ST_REMAINING] -= 1
    if s.st[st, ST_REMAINING] == 0:
        _finish(s, st, now_ps(s))


def step_tables(traffic: Traffic) -> tuple[NDArray[np.int64], ...]:
    """(st, flow_ptr, flows, dep_ptr, dependents) of the traffic's steps."""
    n_steps = len(traffic.steps)
    step = np.asarray(traffic.step, dtype=np.int64)
    order = np.argsort(step, kind="stable").astype(np.int64)
    counts = np.bincount(step, minlength=n_steps)
    flow_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    dependents: list[list[int]] = [[] for _ in range(n_steps)]
    for i, s in enumerate(traffic.steps):
        for d in s.deps:
            dependents[d].append(i)
    dep_ptr = np.concatenate([[0], np.cumsum([len(x) for x in dependents])]).astype(np.int64)
    flat = np.array([d for x in dependents for d in x] or [0], dtype=np.int64)
    st = np.zeros((n_steps, ST_COLS), dtype=np.int64)
    st[:, ST_WAITING] = [len(s.deps) for s in traffic.steps]
    st[:, ST_REMAINING] = counts
    st[:, ST_DELAY_PS] = [us_to_ps(s.delay_us) for s in traffic.steps]
    st[:, ST_START_PS] = -1
    st[:, ST_FINISH_PS] = -1
    return st, flow_ptr, order, dep_ptr, flat
