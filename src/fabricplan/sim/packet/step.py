"""Traffic steps: a step's flows start once every step it waits for is done, plus its delay.

The same dependency graph the flow level runs (:class:`fabricplan.sim.traffic.Traffic`):
a collective is a chain of steps, a training iteration a graph of collectives. A step is done
when the receivers of all its flows have every byte.
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_FLOW_START, EV_STEP_START, now_ps, schedule
from fabricplan.sim.packet.state import (
    F_OFFSET_PS,
    F_STEP,
    ST_DELAY_PS,
    ST_FINISH_PS,
    ST_REMAINING,
    ST_START_PS,
    ST_WAITING,
    ZERO,
    SimState,
)


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
