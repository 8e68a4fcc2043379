"""InfiniBand congestion control (IBTA Annex A10): FECN at the switch, BECN back, CCTI at the
source.

The readable model:

- **Switch.** A port whose virtual-lane queue holds at least ``threshold`` bytes (default: four
  receive buffers of that VL) *and* has
  credits to send (it is the root of the congestion, not a victim stalled by the next hop) is
  congested; it sets FECN on one in every ``marking_rate + 1`` packets it accepts for that
  queue.
- **Destination HCA.** For each FECN packet it returns a congestion notification (BECN) to the
  source at once.
- **Source HCA.** Each BECN raises the flow's congestion-control table index
  ``CCTI += ccti_increase`` (up to ``ccti_limit``). The table maps an index to an injection
  delay between packets; here it is linear, ``rate = line / (1 + CCTI x ipd_step)``. A timer of
  period ``ccti_timer`` lowers the index by one (down to ``ccti_min``): the rate recovers.

OpenSM ships congestion control disabled (``congestion_control FALSE``, docs/refs.md B.4)
and NVIDIA does not publish the values its SM programs, so the defaults are chosen inside the
Annex A10 ranges and are inputs (the sweep over them is the honest use); the mechanism is the
specification's. Reference: IBTA InfiniBand Architecture Specification Vol. 1, Annex A10
"Congestion Control"; Gran et al., "First experiences with congestion control in InfiniBand
hardware", IPDPS 2010.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import has_credit
from fabricplan.sim.packet.event import EV_IBCC_TIMER, now_ps, schedule
from fabricplan.sim.packet.rate import set_rate
from fabricplan.sim.packet.state import (
    F_IB_CCTI,
    F_IB_TIMER_ON,
    FF_LINE,
    FLAG_FECN,
    L_CREDIT_INIT,
    L_MARK_COUNT,
    P_FLAGS,
    P_SIZE,
    PF_IB_IPD_STEP,
    PF_IB_THRESHOLD_BUFFERS,
    PI_IB_INCREASE,
    PI_IB_LIMIT,
    PI_IB_MARKING,
    PI_IB_MIN,
    PI_IB_THRESHOLD,
    PI_IB_TIMER,
    Q_BYTES,
    ZERO,
    SimState,
)

IBCC_THRESHOLD_VL_BUFFERS = 4.0
"""A port's VL queue is congested above this many receive buffers of that VL (A10's
``Threshold`` is relative to the port's buffer; model choice: well above what per-packet
adaptive routing leaves behind, well below what an incast piles up)."""
IBCC_MARKING_RATE = 0
"""Packets left unmarked between two FECN marks (A10 ``Marking_Rate``; 0 marks every one)."""
IBCC_CCTI_INCREASE = 1
"""A10 ``CCTI_Increase`` (1, as OpenSM's example configurations set it)."""
IBCC_CCTI_LIMIT = 127
IBCC_CCTI_MIN = 0
IBCC_CCTI_TIMER_US = 10.0
"""A10 ``CCTI_Timer`` (model choice: recovers one table step per 10 µs)."""
IBCC_IPD_STEP = 0.125
"""Injection delay per table index, in packet times (linear table; model choice)."""


@dataclass(frozen=True)
class IbccSpec:
    """IB congestion-control settings (switch congestion setting, CA setting, CCT)."""

    threshold_bytes: int | None = None
    """Queue bytes that make a port congested; ``None``: ``threshold_vl_buffers`` of its VL's
    receive buffer."""
    threshold_vl_buffers: float = IBCC_THRESHOLD_VL_BUFFERS
    marking_rate: int = IBCC_MARKING_RATE
    ccti_increase: int = IBCC_CCTI_INCREASE
    ccti_limit: int = IBCC_CCTI_LIMIT
    ccti_min: int = IBCC_CCTI_MIN
    ccti_timer_us: float = IBCC_CCTI_TIMER_US
    ipd_step: float = IBCC_IPD_STEP


def injection_rate_share(ccti: int, spec: IbccSpec) -> float:
    """Share of the line rate a source sends at with table index ``ccti``.

    >>> injection_rate_share(0, IbccSpec()), injection_rate_share(8, IbccSpec())
    (1.0, 0.5)
    """
    return 1.0 / (1.0 + ccti * spec.ipd_step)


@jit
def ibcc_mark(s: SimState, out: int, cls: int, p: int) -> None:
    """Switch: maybe set FECN on a packet accepted into the ``(out, cls)`` queue."""
    threshold = s.prm_i[PI_IB_THRESHOLD]
    if threshold <= 0:
        threshold = int(s.prm_f[PF_IB_THRESHOLD_BUFFERS] * s.li[out, L_CREDIT_INIT])
    if s.lc[out, cls, Q_BYTES] < threshold:
        return
    if not has_credit(s, out, cls, s.pi[p, P_SIZE]):
        return
    count = s.li[out, L_MARK_COUNT]
    if count >= s.prm_i[PI_IB_MARKING]:
        s.pi[p, P_FLAGS] |= FLAG_FECN
        s.li[out, L_MARK_COUNT] = 0
    else:
        s.li[out, L_MARK_COUNT] = count + 1


@jit
def _apply(s: SimState, f: int) -> None:
    set_rate(s, f, s.ff[f, FF_LINE] / (1.0 + s.fi[f, F_IB_CCTI] * s.prm_f[PF_IB_IPD_STEP]))


@jit
def ibcc_on_becn(s: SimState, f: int) -> None:
    """Source: a BECN for flow ``f``."""
    fi = s.fi
    ccti = fi[f, F_IB_CCTI] + s.prm_i[PI_IB_INCREASE]
    if ccti > s.prm_i[PI_IB_LIMIT]:
        ccti = s.prm_i[PI_IB_LIMIT]
    fi[f, F_IB_CCTI] = ccti
    _apply(s, f)
    if fi[f, F_IB_TIMER_ON] == 0:
        fi[f, F_IB_TIMER_ON] = 1
        schedule(s, now_ps(s) + s.prm_i[PI_IB_TIMER], EV_IBCC_TIMER, f, ZERO, ZERO)


@jit
def ibcc_on_timer(s: SimState, f: int) -> None:
    fi = s.fi
    if fi[f, F_IB_CCTI] > s.prm_i[PI_IB_MIN]:
        fi[f, F_IB_CCTI] -= 1
        _apply(s, f)
    if fi[f, F_IB_CCTI] > s.prm_i[PI_IB_MIN]:
        schedule(s, now_ps(s) + s.prm_i[PI_IB_TIMER], EV_IBCC_TIMER, f, ZERO, ZERO)
    else:
        fi[f, F_IB_TIMER_ON] = 0
