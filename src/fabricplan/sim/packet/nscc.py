"""UEC NSCC: a sender's congestion window from ECN, RTT and trimming signals.

The readable model (Ultra Ethernet Consortium, UE Specification 1.0, 2025-06-11, transport
layer, "Network-Signal-based Congestion Control"; the same two-signal design as Bonato et al.,
"SMaRTT-REPS: Sender-based Marked Rapidly-adapting Trimmed & Timed Transport with Recycled
Entropies", arXiv:2404.01630, 2024). The specification fixes the signals and the shape of the
control law, not every gain; each gain here is compared with the UEC's public reference model
(:data:`NSCC_REFERENCE`): the decrease gain, its floor and the window cap are the reference's,
the target and the increase gains are estimates, each saying how it differs:

- The window ``cwnd`` (bytes in flight at most) starts at the BDP of the fabric
  (line rate x base RTT) and stays between one MTU and ``max_cwnd_bdp`` BDPs.
- Every ACK carries the ECN-CE mark of the packet it acknowledges and that packet's send time,
  so the sender has both signals per packet. With ``rtt`` the sample and ``target`` the base RTT
  plus ``target_qdelay_us``, the four quadrants:

  ========== ================================ =================================================
  ECN        rtt > target                      rtt <= target
  ========== ================================ =================================================
  marked     multiplicative decrease:          no change (the queue that marked is already
             ``cwnd -= cwnd x min(max_md,      draining: the delay says so)
             md_gain (rtt - target)/rtt)``,
             at most once per base RTT
  unmarked   fair increase: ``cwnd += fi_gain  proportional increase: ``cwnd += pi_gain x
             x MTU x acked / cwnd`` (one MTU    acked x (target - rtt)/target`` (fast towards
             a window: the delay comes from     the spare capacity the low delay shows)
             elsewhere, e.g. the receiver)
  ========== ================================ =================================================

- A trimmed packet's NACK is a sure sign of an overflowing queue: ``cwnd x (1 - trim_md)``, at
  most once per base RTT. A retransmission timeout sets ``cwnd`` to one MTU.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import now_ps
from fabricplan.sim.packet.state import (
    F_NS_LAST_DEC_PS,
    FF_NS_CWND,
    FLAG_ECN_CE,
    P_FLAGS,
    P_SENT_PS,
    PF_NS_FI_GAIN,
    PF_NS_MAX_CWND_BDP,
    PF_NS_MAX_MD,
    PF_NS_MD_GAIN,
    PF_NS_PI_GAIN,
    PF_NS_TRIM_MD,
    PI_BASE_RTT,
    PI_BDP,
    PI_NS_MIN_CWND,
    PI_NS_TARGET,
    PI_PAYLOAD,
    SimState,
)

NSCC_REFERENCE = (
    "the UEC's public htsim model of NSCC, uet-htsim htsim/sim/uec.cpp (UecSrc::initNsccParams,"
    " quick_adapt, fair_increase, proportional_increase, multiplicative_decrease,"
    " updateCwndOnNack_NSCC), as forked in HLC-Lab/uet-htsim @35962f13 (2026-05-15)"
)
"""Where each gain below was compared: the UEC Consortium's own packet-level model of its
congestion control (the specification fixes signals and law shapes, the reference model gives
the numbers it was evaluated with). Its gains are scaled to a 100 Gb/s, 12 µs reference
network (``scaling_factor_a = BDP / BDP_ref``, ``scaling_factor_b = target / 12 µs``)."""

NSCC_TARGET_QDELAY_US = 2.0
"""Queueing delay NSCC aims at above the base RTT, µs. Estimate: the reference model's default
target is the network's base RTT (0.75 of it when switches trim), a few µs on the fabrics
simulated here; a fixed 2 µs keeps the target the same on every fabric of a comparison."""
NSCC_MD_GAIN = 0.8
"""Gain of the multiplicative decrease on the delay excess ``(rtt - target)/rtt``: the
reference model's ``_gamma = 0.8`` (``cwnd *= max(1 - gamma (delay - target)/delay, 0.5)``,
at most once per base RTT), the same law as here."""
NSCC_MAX_MD = 0.5
"""Largest share of the window one decrease removes: the reference model's floor of the
multiplier (``max(..., 0.5)``)."""
NSCC_PI_GAIN = 1.0
"""Gain of the proportional increase per acknowledged byte at zero queueing. Estimate: the
reference model adds ``alpha x acked x (target - delay)`` with ``alpha = 4 MSS a b / target``
and divides by the window, about 0.1 of an acknowledged byte at zero delay on a 100 Gb/s,
12 µs network; 1 here is faster (it reaches spare capacity within a round trip) and is not
taken from it."""
NSCC_FI_GAIN = 1.0
"""MTUs added per window of acknowledged bytes in the fair increase (Reno-like). Estimate: the
reference model adds ``5 MSS x a`` per window (``_fi = 5 * _mss * scaling_factor_a``), 5 MTUs
at its reference network; 1 here is the slower Reno rate."""
NSCC_TRIM_MD = 0.5
"""Share of the window a trimmed packet's NACK removes. Estimate: the reference model removes
the NACKed bytes and runs quick adapt (the window becomes the bytes acknowledged over the last
base RTT plus target), a cut that depends on the run; one halving stands for it here."""
NSCC_MAX_CWND_BDP = 1.5
"""Largest window, in BDPs of the fabric: the reference model's ``_maxwnd = 1.5 * _bdp``."""


@dataclass(frozen=True)
class NsccSpec:
    """NSCC gains and target (each compared with :data:`NSCC_REFERENCE`, see the constants)."""

    target_qdelay_us: float = NSCC_TARGET_QDELAY_US
    md_gain: float = NSCC_MD_GAIN
    max_md: float = NSCC_MAX_MD
    pi_gain: float = NSCC_PI_GAIN
    fi_gain: float = NSCC_FI_GAIN
    trim_md: float = NSCC_TRIM_MD
    max_cwnd_bdp: float = NSCC_MAX_CWND_BDP


@jit
def nscc_start(s: SimState, f: int) -> None:
    """A flow starts with one BDP of window."""
    s.ff[f, FF_NS_CWND] = float(max(s.prm_i[PI_BDP], s.prm_i[PI_NS_MIN_CWND]))


@jit
def _clamp(s: SimState, f: int, cwnd: float) -> None:
    low = float(s.prm_i[PI_NS_MIN_CWND])
    high = s.prm_f[PF_NS_MAX_CWND_BDP] * s.prm_i[PI_BDP]
    if high < low:
        high = low
    s.ff[f, FF_NS_CWND] = min(max(cwnd, low), high)


@jit
def _may_decrease(s: SimState, f: int, now: int) -> bool:
    last = s.fi[f, F_NS_LAST_DEC_PS]
    if last >= 0 and now - last < s.prm_i[PI_BASE_RTT]:
        return False
    s.fi[f, F_NS_LAST_DEC_PS] = now
    return True


@jit
def nscc_on_ack(s: SimState, f: int, ack: int, acked_bytes: int) -> None:
    """An ACK (packet ``ack``) newly acknowledged ``acked_bytes`` of flow ``f``."""
    now = now_ps(s)
    rtt = now - s.pi[ack, P_SENT_PS]
    if rtt <= 0:
        return
    target = s.prm_i[PI_BASE_RTT] + s.prm_i[PI_NS_TARGET]
    cwnd = s.ff[f, FF_NS_CWND]
    marked = s.pi[ack, P_FLAGS] & FLAG_ECN_CE != 0
    if marked:
        if rtt > target and _may_decrease(s, f, now):
            cut = s.prm_f[PF_NS_MD_GAIN] * (rtt - target) / rtt
            cwnd -= cwnd * min(cut, s.prm_f[PF_NS_MAX_MD])
    elif acked_bytes > 0:
        if rtt > target:
            cwnd += s.prm_f[PF_NS_FI_GAIN] * s.prm_i[PI_PAYLOAD] * acked_bytes / cwnd
        else:
            cwnd += s.prm_f[PF_NS_PI_GAIN] * acked_bytes * (target - rtt) / target
    _clamp(s, f, cwnd)


@jit
def nscc_on_trim(s: SimState, f: int) -> None:
    """A trimmed packet of flow ``f`` was NACKed."""
    if _may_decrease(s, f, now_ps(s)):
        _clamp(s, f, s.ff[f, FF_NS_CWND] * (1.0 - s.prm_f[PF_NS_TRIM_MD]))


@jit
def nscc_on_timeout(s: SimState, f: int) -> None:
    """A retransmission timeout of flow ``f``: back to one MTU."""
    s.fi[f, F_NS_LAST_DEC_PS] = now_ps(s)
    _clamp(s, f, 0.0)


@jit
def nscc_window_bytes(s: SimState, f: int) -> int:
    """Bytes flow ``f`` may have in flight."""
    return int(s.ff[f, FF_NS_CWND])
