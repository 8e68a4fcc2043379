"""Whether link-level flow control holds a class back on a link now: a PFC pause (that the
watchdog does not override) or, under IB credits, too few credits for the packet."""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import has_credit
from fabricplan.sim.packet.pfc import paused
from fabricplan.sim.packet.state import FC_CREDIT, FC_PFC, PI_FC, SimState


@jit
def held_back(s: SimState, link: int, cls: int, size: int, now: int) -> bool:
    """``link`` may not send a ``size``-byte packet of class ``cls`` now."""
    if s.class_lossless[cls] == 0:
        return False
    fc = s.prm_i[PI_FC]
    if fc == FC_PFC:
        return paused(s, link, cls, now)
    if fc == FC_CREDIT:
        return not has_credit(s, link, cls, size)
    return False
