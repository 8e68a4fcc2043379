"""HPCC: rate control from in-band network telemetry (INT), as Alibaba runs it.

The readable model (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
Algorithm 1; the settings of Alibaba's open simulator, alibaba-edu/High-Precision-Congestion-
Control ``simulation/run.py`` @08d4ba0b0198, whose rate-based form is used):

- Every switch egress appends to each data packet its queue length, the bytes it has sent so
  far, a timestamp and its line rate. The receiver echoes the list in the ACK.
- The sender keeps the previous list. For each hop ``i``: ``txRate = Δbytes / Δt`` and
  ``u_i = txRate / B_i + min(qlen, previous qlen) / (B_i T)`` (``T`` is the base RTT of the
  fabric, the same for every flow). ``U`` is an EWMA of the largest ``u_i``, weighted by the
  time it covers: ``U = U (T - τ)/T + u_max τ/T`` with ``τ <= T``.
- Rate: with ``k = U / η``, if ``k >= 1`` or the additive stage reached ``max_stage``:
  ``R = R_ref / k + R_AI`` (stage 0); else ``R = R_ref + R_AI`` (stage + 1). The reference
  rate ``R_ref`` (and stage) are updated once per RTT (when an ACK covers the sequence sent at
  the last update); every ACK in between sets the rate from the current reference ("fast
  react").
- Window: ``W = (R / line rate) x B_line T`` bytes in flight at most; pacing at ``R``.
- INT adds ``INT_HEADER_BYTES + INT_BYTES_PER_HOP x hops`` to data packets and their ACKs.

Defaults: ``η = 0.95``, ``max_stage = 0`` (every update multiplicative, ``MI_THRESH 0``),
``R_AI = line x 10/25 Mb/s per Gb/s`` (``ai = 10 x bw / 25`` Mb/s), min rate 1 Gb/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.rate import set_rate
from fabricplan.sim.packet.state import (
    F_HP_HOPS,
    F_HP_LAST_SEQ,
    F_HP_STAGE,
    F_NEXT_SEQ,
    FF_HP_REF,
    FF_HP_U,
    FF_LINE,
    FF_RATE,
    FH_HP_QLEN,
    FH_HP_TS,
    FH_HP_TX,
    LF_SPEED_BPS,
    P_ACK_SEQ,
    P_INT_N,
    PF_HP_AI,
    PF_HP_ETA,
    PF_HP_MIN_RATE,
    PI_HP_MAX_STAGE,
    PI_HP_T,
    PI_HP_WIN,
    PINT_LINK,
    PINT_QLEN,
    PINT_TS,
    PINT_TX,
    SimState,
)
from fabricplan.units import BITS_PER_BYTE, PS_PER_S

HPCC_ETA = 0.95
"""Target utilisation η (run.py ``--utgt`` default 95)."""
HPCC_MAX_STAGE = 0
"""Additive stages before a multiplicative update (run.py ``MI_THRESH`` default 0)."""
HPCC_AI_MBPS_PER_GBPS = 10.0 / 25.0
"""Additive increase per Gb/s of line rate (run.py: ``ai = 10 * bw / 25`` Mb/s)."""
HPCC_MIN_RATE_MBPS = 1000.0
"""Lowest rate (run.py ``MIN_RATE 1000Mb/s``)."""
INT_HEADER_BYTES = 2
INT_BYTES_PER_HOP = 8
"""INT metadata: a 2-byte header (hop count) and 8 bytes per hop (HPCC paper §5.1; the
simulator's ``IntHeader``)."""


@dataclass(frozen=True)
class HpccSpec:
    """HPCC parameters (defaults: Alibaba's open simulator)."""

    eta: float = HPCC_ETA
    max_stage: int = HPCC_MAX_STAGE
    ai_mbps_per_gbps: float = HPCC_AI_MBPS_PER_GBPS
    min_rate_mbps: float = HPCC_MIN_RATE_MBPS


@jit
def hpcc_on_ack(s: SimState, f: int, p: int) -> None:
    """Sender: an ACK with INT for flow ``f`` arrived (packet ``p``)."""
    fi, ff, fh, pint = s.fi, s.ff, s.fh, s.pint
    n = s.pi[p, P_INT_N]
    if fi[f, F_HP_LAST_SEQ] == 0:
        for i in range(n):
            fh[f, FH_HP_QLEN, i] = pint[p, PINT_QLEN, i]
            fh[f, FH_HP_TX, i] = pint[p, PINT_TX, i]
            fh[f, FH_HP_TS, i] = pint[p, PINT_TS, i]
        fi[f, F_HP_HOPS] = n
        fi[f, F_HP_LAST_SEQ] = fi[f, F_NEXT_SEQ]
        return
    t_ps = s.prm_i[PI_HP_T]
    u_max = 0.0
    tau_max = 0
    updated = False
    for i in range(min(n, fi[f, F_HP_HOPS])):
        tau = pint[p, PINT_TS, i] - fh[f, FH_HP_TS, i]
        if tau > 0:
            speed = s.lf[pint[p, PINT_LINK, i], LF_SPEED_BPS]
            tx_bps = (pint[p, PINT_TX, i] - fh[f, FH_HP_TX, i]) * BITS_PER_BYTE * PS_PER_S / tau
            qlen = min(pint[p, PINT_QLEN, i], fh[f, FH_HP_QLEN, i])
            u = tx_bps / speed + qlen * BITS_PER_BYTE * PS_PER_S / (speed * t_ps)
            if u > u_max:
                u_max = u
                tau_max = tau
            updated = True
        fh[f, FH_HP_QLEN, i] = pint[p, PINT_QLEN, i]
        fh[f, FH_HP_TX, i] = pint[p, PINT_TX, i]
        fh[f, FH_HP_TS, i] = pint[p, PINT_TS, i]
    fi[f, F_HP_HOPS] = n
    full = s.pi[p, P_ACK_SEQ] > fi[f, F_HP_LAST_SEQ]
    if updated:
        if tau_max > t_ps:
            tau_max = t_ps
        util = (ff[f, FF_HP_U] * (t_ps - tau_max) + u_max * tau_max) / t_ps
        ff[f, FF_HP_U] = util
        k = util / s.prm_f[PF_HP_ETA]
        stage = fi[f, F_HP_STAGE]
        if k > 0.0 and (k >= 1.0 or stage >= s.prm_i[PI_HP_MAX_STAGE]):
            rate = ff[f, FF_HP_REF] / k + s.prm_f[PF_HP_AI]
            new_stage = 0
        else:
            rate = ff[f, FF_HP_REF] + s.prm_f[PF_HP_AI]
            new_stage = stage + 1
        rate = max(rate, s.prm_f[PF_HP_MIN_RATE])
        rate = min(rate, ff[f, FF_LINE])
        set_rate(s, f, rate)
        if full:
            ff[f, FF_HP_REF] = rate
            fi[f, F_HP_STAGE] = new_stage
    if full:
        fi[f, F_HP_LAST_SEQ] = fi[f, F_NEXT_SEQ]


@jit
def hpcc_window_bytes(s: SimState, f: int) -> int:
    """Bytes flow ``f`` may have in flight: the BDP scaled by its rate."""
    w = int(s.prm_i[PI_HP_WIN] * s.ff[f, FF_RATE] / s.ff[f, FF_LINE])
    return max(w, 1)


SPECTRUM_X_CC = HpccSpec()
"""Spectrum-X congestion control as the packet level runs it: HPCC's law with these settings.

NVIDIA's Spectrum-X whitepaper ("NVIDIA Spectrum-X Network Platform Architecture", 2023-05)
says the BlueField-3 SuperNIC meters each flow's injection from in-band telemetry the
Spectrum-4 switches put in the packets (queue depth and port load per hop), and publishes
neither the control law nor its gains. HPCC (Li et al., SIGCOMM 2019) is the published
algorithm of exactly that kind — per-hop INT of queue length and transmitted bytes, a rate
set to keep the most loaded hop at a target utilisation — so the packet level runs it for
``spectrum_x_cc`` under its own name, with HPCC's published defaults as the settings. Every
figure is an estimate (basis: the HPCC paper's and Alibaba's simulator's defaults), to be
replaced when NVIDIA publishes its own; the mechanism, not a factor, is what is modelled.
"""
