"""The packet simulator's event kinds: what each ``(kind, a, b, c)`` on the heap means.

The engine only orders events; :mod:`fabricplan.sim.packet.kernel` hands each kind to the
component that owns it. Priorities break ties at equal times (lower first): link-level control
(pause frames, credits) before packets, packets before timers, so that a pause frame and a
packet that arrive in the same picosecond are taken in the order a real port would (the pause
is already latched when the transmitter looks).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.engine import HEAP_NOW, heap_push
from fabricplan.sim.packet.state import SimState, int64

EV_TX_DONE = int64(1)
"""a=link: the transmitter has put the last bit of its packet on the wire."""
EV_ARRIVE = int64(2)
"""a=packet, b=link: the packet has arrived at the link's far end."""
EV_FLOW_START = int64(3)
"""a=flow."""
EV_NIC_WAKE = int64(4)
"""a=host: a rate-limited flow may send again."""
EV_PAUSE = int64(5)
"""a=link, b=class, c=pause time in ps (0 = XON): a PFC frame reaches the link's sender."""
EV_KICK = int64(6)
"""a=link: look at the transmitter again (a pause expired)."""
EV_PFC_REFRESH = int64(7)
"""a=link, b=class: the receiving end repeats its XOFF while still congested."""
EV_CREDIT = int64(8)
"""a=link, b=class, c=bytes: IB flow-control credits return to the link's sender."""
EV_DCQCN_TIMER = int64(9)
"""a=flow, b=0 rate increase / 1 deferred cut, c=epoch: DCQCN timers."""
EV_IBCC_TIMER = int64(10)
"""a=flow: IB CC CCTI timer (the congestion-control table index decays)."""
EV_RTO = int64(11)
"""a=flow: check of the flow's retransmission timer (at most one pending per flow)."""
EV_SAMPLE = int64(12)
"""Probe: record every link's queue."""
EV_WATCHDOG = int64(13)
"""PFC watchdog poll."""
EV_STEP_START = int64(14)
"""a=step: the step's dependencies are done (plus its delay)."""
EV_VOQ_RELEASE = int64(15)
"""a=packet, b=link it arrived on: its grant is back, it leaves its VOQ (scheduled fabric)."""
EV_LLR_REPLAY = int64(16)
"""a=packet, b=link: the link's LLR NACK reached its sender, which replays the frame."""

_PRIORITY_CONTROL, _PRIORITY_PACKET, _PRIORITY_TIMER = int64(0), int64(1), int64(2)


@jit
def priority_of(kind: int) -> int:
    if kind in (EV_PAUSE, EV_CREDIT):
        return _PRIORITY_CONTROL
    if kind in (EV_TX_DONE, EV_ARRIVE, EV_KICK, EV_NIC_WAKE, EV_VOQ_RELEASE, EV_LLR_REPLAY):
        return _PRIORITY_PACKET
    return _PRIORITY_TIMER


@jit
def schedule(s: SimState, at_ps: int, kind: int, a: int, b: int, c: int) -> None:
    """Put event ``kind(a, b, c)`` on the heap for ``at_ps``."""
    heap_push(s.heap, s.hmeta, at_ps, priority_of(kind), kind, a, b, c)


@jit
def now_ps(s: SimState) -> int:
    return int(s.hmeta[HEAP_NOW])
