"""A flow's pacing rate: what every congestion control changes, and how the change takes effect.

The NIC's rate limiter spaces a flow's packets by their wire time at the flow's rate. When the
rate changes, what is left of the current gap is rescaled to the new rate (the HPCC
simulator's ``ChangeRate`` does the same), and a flow that may now send earlier wakes its NIC.
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_NIC_WAKE, now_ps, schedule
from fabricplan.sim.packet.state import F_NEXT_SEND_PS, F_SRC, FF_RATE, H_WAKE_PS, ZERO, SimState


@jit
def set_rate(s: SimState, f: int, rate_bps: float) -> None:
    """Pace flow ``f`` at ``rate_bps`` from now on."""
    old = s.ff[f, FF_RATE]
    s.ff[f, FF_RATE] = rate_bps
    now = now_ps(s)
    due = s.fi[f, F_NEXT_SEND_PS]
    if due <= now or old <= 0 or rate_bps == old:
        return
    due = now + int((due - now) * old / rate_bps)
    s.fi[f, F_NEXT_SEND_PS] = due
    if rate_bps > old:
        h = s.fi[f, F_SRC]
        wake = s.hi[h, H_WAKE_PS]
        if wake <= now or due < wake:
            s.hi[h, H_WAKE_PS] = due
            schedule(s, due, EV_NIC_WAKE, h, ZERO, ZERO)
