"""DCQCN at the NIC: the notification point (receiver) and the reaction point (sender).

The readable model (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
SIGCOMM 2015, §3; parameter names and defaults of NVIDIA ConnectX firmware, docs/refs.md
C.2 and NVIDIA DOCA "DCQCN CC Parameters"):

- **Notification point.** A data packet that arrives with ECN CE set makes the receiver send a
  CNP to the sender, at most one per flow every ``min_time_between_cnps``.
- **Alpha.** ``alpha`` estimates how congested the path is. Every ``alpha_update_period`` it
  becomes ``(1 - g) alpha + g`` if a CNP arrived in the period, else ``(1 - g) alpha``; it is
  ``initial_alpha`` at the first CNP. (Computed lazily here: the same numbers, no timer per
  microsecond.)
- **Rate decrease.** On a CNP, at most once per ``rate_reduce_monitor_period``: the current
  rate is cut to ``rc (1 - alpha / 2^(rpg_gd - 10))``, never below ``rpg_min_dec_fac`` % of
  itself nor below ``rpg_min_rate``. The target rate becomes the current rate before the cut
  only with ``clamp_tgt_rate``, or with ``clamp_tgt_rate_after_time_inc`` once the timer has
  raised the rate since the last cut (ConnectX defaults False / True: back-to-back cuts keep the
  old target, so fast recovery returns towards it). The increase counters restart.
- **Rate increase.** Two counters advance: a timer every ``rpg_time_reset`` and a byte counter
  every ``rpg_byte_reset`` bytes sent. At each advance, with ``F = rpg_threshold``: if both
  counters are below F, *fast recovery* ``rc = (rt + rc) / 2``; if both have reached it,
  *hyper increase* ``rt += i x rpg_hai_rate`` (``i`` = how far past F the smaller one is);
  else *additive increase* ``rt += rpg_ai_rate``; then ``rc = (rt + rc) / 2``. Rates stop at
  the line rate, where the flow leaves DCQCN until the next CNP.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_DCQCN_TIMER, now_ps, schedule
from fabricplan.sim.packet.rate import set_rate
from fabricplan.sim.packet.state import (
    F_DQ_ACTIVE,
    F_DQ_ALPHA_START,
    F_DQ_BC,
    F_DQ_BYTES,
    F_DQ_CNP_SEEN,
    F_DQ_EPOCH,
    F_DQ_LAST_DEC,
    F_DQ_PENDING,
    F_DQ_T,
    F_LAST_CNP_PS,
    FF_DQ_ALPHA,
    FF_DQ_TARGET,
    FF_LINE,
    FF_RATE,
    ONE,
    PF_DQ_AI,
    PF_DQ_DEC_DIVISOR,
    PF_DQ_G,
    PF_DQ_HAI,
    PF_DQ_INIT_ALPHA,
    PF_DQ_MIN_DEC,
    PF_DQ_MIN_RATE,
    PI_DQ_ALPHA_PERIOD,
    PI_DQ_BYTE_RESET,
    PI_DQ_CLAMP,
    PI_DQ_CLAMP_AFTER_TIME,
    PI_DQ_CNP_INTERVAL,
    PI_DQ_DEC_PERIOD,
    PI_DQ_THRESHOLD,
    PI_DQ_TIME_RESET,
    ZERO,
    SimState,
    int64,
)

DCE_TCP_G = 1019
"""ConnectX ``DCE_TCP_G`` default: alpha = (G/1024) alpha + (1 - G/1024) on a CNP period, i.e.
g = 5/1024 (docs/refs.md C.2; NVIDIA DOCA DCQCN parameters: fixed point, 10 fraction bits)."""
DCE_TCP_RTT_US = 1.0
"""ConnectX ``DCE_TCP_RTT``: alpha update period, µs (docs/refs.md C.2)."""
INITIAL_ALPHA_VALUE = 1023
"""ConnectX ``INITIAL_ALPHA_VALUE`` in 1/1024 units (docs/refs.md C.2)."""
RPG_GD = 11
"""ConnectX ``RPG_GD``: the cut is alpha / 2^(RPG_GD - 10), i.e. alpha/2 (DOCA: log2 in fixed
point with 10 fraction bits, range 10..11)."""
RPG_MIN_DEC_FAC = 50
"""ConnectX ``RPG_MIN_DEC_FAC``, %: a cut keeps at least this share of the rate
(docs/refs.md C.2)."""
RATE_REDUCE_MONITOR_PERIOD_US = 4.0
RPG_TIME_RESET_US = 300.0
RPG_BYTE_RESET = 32767
"""ConnectX rate-increase byte counter, taken as bytes (docs/refs.md C.2)."""
RPG_THRESHOLD = 1
RPG_AI_RATE_MBPS = 5.0
RPG_HAI_RATE_MBPS = 50.0
RPG_MIN_RATE_MBPS = 1.0
CLAMP_TGT_RATE = False
CLAMP_TGT_RATE_AFTER_TIME_INC = True
"""ConnectX ``CLAMP_TGT_RATE`` / ``CLAMP_TGT_RATE_AFTER_TIME_INC`` defaults (docs/refs.md C.2)."""
MIN_TIME_BETWEEN_CNPS_US = 4.0
"""Notification-point CNP spacing: 4 µs default per Barre (ATC'25) and NVIDIA DOCA (catalog
C.2 saw 2 µs configured on one ConnectX-5)."""
ALPHA_SCALE = 1024.0
INCREASE, DECREASE_CHECK = int64(0), int64(1)
"""What a DCQCN timer event is for."""


@dataclass(frozen=True)
class DcqcnSpec:
    """DCQCN parameters, named as ConnectX names them (defaults: ConnectX firmware)."""

    dce_tcp_g: int = DCE_TCP_G
    dce_tcp_rtt_us: float = DCE_TCP_RTT_US
    initial_alpha_value: int = INITIAL_ALPHA_VALUE
    rpg_gd: int = RPG_GD
    rpg_min_dec_fac: int = RPG_MIN_DEC_FAC
    rate_reduce_monitor_period_us: float = RATE_REDUCE_MONITOR_PERIOD_US
    rpg_time_reset_us: float = RPG_TIME_RESET_US
    rpg_byte_reset: int = RPG_BYTE_RESET
    rpg_threshold: int = RPG_THRESHOLD
    rpg_ai_rate_mbps: float = RPG_AI_RATE_MBPS
    rpg_hai_rate_mbps: float = RPG_HAI_RATE_MBPS
    rpg_min_rate_mbps: float = RPG_MIN_RATE_MBPS
    min_time_between_cnps_us: float = MIN_TIME_BETWEEN_CNPS_US
    clamp_tgt_rate: bool = CLAMP_TGT_RATE
    clamp_tgt_rate_after_time_inc: bool = CLAMP_TGT_RATE_AFTER_TIME_INC

    @property
    def g(self) -> float:
        """The EWMA gain of alpha.

        >>> round(DcqcnSpec().g * 1024)
        5
        """
        return (ALPHA_SCALE - self.dce_tcp_g) / ALPHA_SCALE

    @property
    def decrease_divisor(self) -> float:
        """The cut is ``alpha / decrease_divisor``.

        >>> DcqcnSpec().decrease_divisor
        2.0
        """
        return float(2 ** (self.rpg_gd - 10))


@jit
def np_wants_cnp(s: SimState, f: int) -> bool:
    """Notification point: send a CNP for this marked packet (paced per flow)?"""
    now = now_ps(s)
    last = s.fi[f, F_LAST_CNP_PS]
    if last >= 0 and now - last < s.prm_i[PI_DQ_CNP_INTERVAL]:
        return False
    s.fi[f, F_LAST_CNP_PS] = now
    return True


@jit
def _alpha_sync(s: SimState, f: int, now: int) -> None:
    """Apply the alpha updates of every period that ended before ``now``."""
    fi, ff = s.fi, s.ff
    period = s.prm_i[PI_DQ_ALPHA_PERIOD]
    elapsed = (now - fi[f, F_DQ_ALPHA_START]) // period
    if elapsed <= 0:
        return
    g = s.prm_f[PF_DQ_G]
    alpha = ff[f, FF_DQ_ALPHA]
    alpha = (1.0 - g) * alpha + (g if fi[f, F_DQ_CNP_SEEN] != 0 else 0.0)
    if elapsed > 1:
        alpha *= (1.0 - g) ** (elapsed - 1)
    ff[f, FF_DQ_ALPHA] = alpha
    fi[f, F_DQ_CNP_SEEN] = 0
    fi[f, F_DQ_ALPHA_START] += elapsed * period


@jit
def dcqcn_on_cnp(s: SimState, f: int) -> None:
    """Reaction point: a CNP arrived for flow ``f``."""
    fi = s.fi
    now = now_ps(s)
    if fi[f, F_DQ_ACTIVE] == 0 and fi[f, F_DQ_LAST_DEC] < 0:
        s.ff[f, FF_DQ_ALPHA] = s.prm_f[PF_DQ_INIT_ALPHA]
        fi[f, F_DQ_ALPHA_START] = now
    else:
        _alpha_sync(s, f, now)
    fi[f, F_DQ_CNP_SEEN] = 1
    fi[f, F_DQ_ACTIVE] = 1
    last = fi[f, F_DQ_LAST_DEC]
    period = s.prm_i[PI_DQ_DEC_PERIOD]
    if last < 0 or now - last >= period:
        _decrease(s, f, now)
    elif fi[f, F_DQ_PENDING] == 0:
        fi[f, F_DQ_PENDING] = 1
        schedule(s, last + period, EV_DCQCN_TIMER, f, DECREASE_CHECK, fi[f, F_DQ_EPOCH])


@jit
def _decrease(s: SimState, f: int, now: int) -> None:
    fi, ff = s.fi, s.ff
    rc = ff[f, FF_RATE]
    clamp = s.prm_i[PI_DQ_CLAMP] != 0 or (
        s.prm_i[PI_DQ_CLAMP_AFTER_TIME] != 0 and fi[f, F_DQ_T] > 0
    )
    if clamp:
        ff[f, FF_DQ_TARGET] = rc
    factor = 1.0 - ff[f, FF_DQ_ALPHA] / s.prm_f[PF_DQ_DEC_DIVISOR]
    if factor < s.prm_f[PF_DQ_MIN_DEC]:
        factor = s.prm_f[PF_DQ_MIN_DEC]
    rc *= factor
    if rc < s.prm_f[PF_DQ_MIN_RATE]:
        rc = s.prm_f[PF_DQ_MIN_RATE]
    set_rate(s, f, rc)
    fi[f, F_DQ_LAST_DEC] = now
    fi[f, F_DQ_PENDING] = 0
    fi[f, F_DQ_T] = 0
    fi[f, F_DQ_BC] = 0
    fi[f, F_DQ_BYTES] = 0
    epoch = fi[f, F_DQ_EPOCH] + 1
    fi[f, F_DQ_EPOCH] = epoch
    schedule(s, now + s.prm_i[PI_DQ_TIME_RESET], EV_DCQCN_TIMER, f, INCREASE, epoch)


@jit
def _increase(s: SimState, f: int, by_timer: int) -> None:
    fi, ff = s.fi, s.ff
    threshold = s.prm_i[PI_DQ_THRESHOLD]
    t_count, bc_count = fi[f, F_DQ_T], fi[f, F_DQ_BC]
    line = ff[f, FF_LINE]
    rt = ff[f, FF_DQ_TARGET]
    smaller = min(t_count, bc_count)
    if max(t_count, bc_count) < threshold:
        pass
    elif smaller >= threshold:
        rt += (smaller - threshold + 1) * s.prm_f[PF_DQ_HAI]
    else:
        rt += s.prm_f[PF_DQ_AI]
    if rt > line:
        rt = line
    ff[f, FF_DQ_TARGET] = rt
    rc = 0.5 * (rt + ff[f, FF_RATE])
    if rc > line:
        rc = line
    set_rate(s, f, rc)
    if by_timer != 0:
        fi[f, F_DQ_T] = t_count + 1
    else:
        fi[f, F_DQ_BC] = bc_count + 1
    if rc >= line and rt >= line and fi[f, F_DQ_PENDING] == 0:
        fi[f, F_DQ_ACTIVE] = 0
        fi[f, F_DQ_EPOCH] += 1


@jit
def dcqcn_on_timer(s: SimState, f: int, which: int, epoch: int) -> None:
    """The rate-increase timer (``which`` INCREASE) or a deferred cut (DECREASE_CHECK) fires."""
    fi = s.fi
    if epoch != fi[f, F_DQ_EPOCH] or fi[f, F_DQ_ACTIVE] == 0:
        return
    now = now_ps(s)
    if which == DECREASE_CHECK:
        if fi[f, F_DQ_PENDING] != 0:
            _alpha_sync(s, f, now)
            _decrease(s, f, now)
        return
    _increase(s, f, ONE)
    if fi[f, F_DQ_ACTIVE] != 0:
        schedule(s, now + s.prm_i[PI_DQ_TIME_RESET], EV_DCQCN_TIMER, f, INCREASE, fi[f, F_DQ_EPOCH])


@jit
def dcqcn_on_sent(s: SimState, f: int, size: int) -> None:
    """Byte counter: ``size`` more bytes were sent by flow ``f``."""
    fi = s.fi
    if fi[f, F_DQ_ACTIVE] == 0:
        return
    total = fi[f, F_DQ_BYTES] + size
    reset = s.prm_i[PI_DQ_BYTE_RESET]
    if total >= reset:
        fi[f, F_DQ_BYTES] = total - reset
        _increase(s, f, ZERO)
    else:
        fi[f, F_DQ_BYTES] = total
