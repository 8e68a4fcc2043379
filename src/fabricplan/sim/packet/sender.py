"""The sending NIC: which flow puts the next packet on the host's link, and when.

Each host keeps a round-robin ring of its flows that still have packets to send. When the host
link is free, the NIC walks the ring from where it stopped and takes the first flow that may
send now: its window is not full, its class is not paused (PFC) or out of credits (IB), and its
rate limiter allows it (the next send time of a flow at rate ``R`` is the previous send plus the
packet's wire time at ``R``). If only rate limiters hold flows back, the NIC wakes up at the
earliest of their times. The packet it builds carries ``payload + header`` bytes (plus INT room
for HPCC); a packet sent again after a go-back is counted as a retransmission.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.packet.backpressure import held_back
from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.dcqcn import dcqcn_on_sent
from fabricplan.sim.packet.event import EV_NIC_WAKE, EV_RTO, now_ps, schedule
from fabricplan.sim.packet.hpcc import hpcc_window_bytes
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.queue import alloc_packet
from fabricplan.sim.packet.spec import PacketSpec
from fabricplan.sim.packet.state import (
    C_RETX,
    C_TIMEOUTS,
    CC_DCQCN,
    CC_HPCC,
    F_ACKED_PS,
    F_CLS,
    F_DQ_LAST_DEC,
    F_DST,
    F_FINISH_PS,
    F_IN_RING,
    F_LAST_CNP_PS,
    F_LAST_PAYLOAD,
    F_LAST_PROGRESS,
    F_MAX_SENT,
    F_NEXT_SEND_PS,
    F_NEXT_SEQ,
    F_OFFSET_PS,
    F_PACKETS,
    F_RETX,
    F_RING_NEXT,
    F_RING_PREV,
    F_RTO_EPOCH,
    F_RX_NACKED,
    F_RX_OFFSET,
    F_SENT,
    F_SIZE,
    F_SND_UNA,
    F_SRC,
    F_START_PS,
    F_STARTED,
    F_STEP,
    F_TIMEOUTS,
    FF_COLS,
    FF_DQ_TARGET,
    FF_HP_REF,
    FF_LINE,
    FF_RATE,
    FH_FIELDS,
    FH_PATH,
    FH_RPATH,
    FI_COLS,
    H_DOWN,
    H_RING_HEAD,
    H_RING_SIZE,
    H_STOP_PS,
    H_UP,
    H_WAKE_PS,
    HI_COLS,
    NEVER_PS,
    P_HOP,
    PI_CC,
    PI_HEADER,
    PI_HP_INT_BYTES,
    PI_PAYLOAD,
    PI_RTO,
    PI_WINDOW,
    PKT_DATA,
    ZERO,
    SimState,
    int64,
)
from fabricplan.sim.traffic import Traffic
from fabricplan.units import BITS_PER_BYTE, PS_PER_S, PS_PER_US, us_to_ps

NOTHING, BLOCKED = int64(-1), int64(-2)
"""``next_data_packet`` results besides a packet id: nothing to send / held by flow control."""


@jit
def ring_add(s: SimState, f: int) -> None:
    """Put flow ``f`` in its host's sending ring (no-op if there)."""
    fi, hi = s.fi, s.hi
    if fi[f, F_IN_RING] != 0:
        return
    h = fi[f, F_SRC]
    head = hi[h, H_RING_HEAD]
    if head < 0:
        fi[f, F_RING_NEXT] = f
        fi[f, F_RING_PREV] = f
        hi[h, H_RING_HEAD] = f
    else:
        tail = fi[head, F_RING_PREV]
        fi[tail, F_RING_NEXT] = f
        fi[f, F_RING_PREV] = tail
        fi[f, F_RING_NEXT] = head
        fi[head, F_RING_PREV] = f
    fi[f, F_IN_RING] = 1
    hi[h, H_RING_SIZE] += 1


@jit
def _ring_remove(s: SimState, f: int) -> None:
    fi, hi = s.fi, s.hi
    h = fi[f, F_SRC]
    fi[f, F_IN_RING] = 0
    hi[h, H_RING_SIZE] -= 1
    if hi[h, H_RING_SIZE] == 0:
        hi[h, H_RING_HEAD] = -1
        return
    nxt, prv = fi[f, F_RING_NEXT], fi[f, F_RING_PREV]
    fi[prv, F_RING_NEXT] = nxt
    fi[nxt, F_RING_PREV] = prv
    if hi[h, H_RING_HEAD] == f:
        hi[h, H_RING_HEAD] = nxt


@jit
def _window_open(s: SimState, f: int) -> bool:
    inflight = (s.fi[f, F_NEXT_SEQ] - s.fi[f, F_SND_UNA]) * s.prm_i[PI_PAYLOAD]
    if s.prm_i[PI_CC] == CC_HPCC:
        return bool(inflight < hpcc_window_bytes(s, f))
    window = s.prm_i[PI_WINDOW]
    return bool(window <= 0 or inflight < window)


@jit
def data_bytes(s: SimState, f: int, seq: int) -> int:
    """Wire bytes of packet ``seq`` of flow ``f``."""
    payload = s.prm_i[PI_PAYLOAD] if seq < s.fi[f, F_PACKETS] - 1 else s.fi[f, F_LAST_PAYLOAD]
    size = payload + s.prm_i[PI_HEADER]
    if s.prm_i[PI_CC] == CC_HPCC:
        size += s.prm_i[PI_HP_INT_BYTES]
    return int(size)


@jit
def next_data_packet(s: SimState, h: int, link: int) -> int:
    """The next data packet host ``h`` sends on ``link`` now, or NOTHING / BLOCKED."""
    fi = s.fi
    now = now_ps(s)
    earliest = NEVER_PS
    blocked = False
    chosen = -1
    f = s.hi[h, H_RING_HEAD]
    for _ in range(s.hi[h, H_RING_SIZE]):
        if f < 0 or fi[f, F_IN_RING] == 0:
            break
        nxt = fi[f, F_RING_NEXT]
        if fi[f, F_NEXT_SEQ] >= fi[f, F_PACKETS]:
            _ring_remove(s, f)
        elif _window_open(s, f):
            if held_back(s, link, fi[f, F_CLS], data_bytes(s, f, fi[f, F_NEXT_SEQ]), now):
                blocked = True
            elif fi[f, F_NEXT_SEND_PS] <= now:
                chosen = f
                break
            elif fi[f, F_NEXT_SEND_PS] < earliest:
                earliest = fi[f, F_NEXT_SEND_PS]
        f = nxt
    if chosen < 0:
        if earliest < NEVER_PS:
            wake = s.hi[h, H_WAKE_PS]
            if wake <= now or earliest < wake:
                s.hi[h, H_WAKE_PS] = earliest
                schedule(s, earliest, EV_NIC_WAKE, h, ZERO, ZERO)
        return BLOCKED if blocked else NOTHING
    s.hi[h, H_RING_HEAD] = fi[chosen, F_RING_NEXT]
    return _build(s, chosen, now)


@jit
def _build(s: SimState, f: int, now: int) -> int:
    fi = s.fi
    seq = fi[f, F_NEXT_SEQ]
    size = data_bytes(s, f, seq)
    p = alloc_packet(s, f, seq, size, PKT_DATA, fi[f, F_CLS])
    s.pi[p, P_HOP] = 1
    fi[f, F_NEXT_SEQ] = seq + 1
    if seq < fi[f, F_MAX_SENT]:
        fi[f, F_RETX] += 1
        s.cnt[C_RETX] += 1
    else:
        fi[f, F_MAX_SENT] = seq + 1
    fi[f, F_SENT] += 1
    gap = int(size * BITS_PER_BYTE * PS_PER_S / s.ff[f, FF_RATE])
    fi[f, F_NEXT_SEND_PS] = now + gap
    if s.prm_i[PI_CC] == CC_DCQCN:
        dcqcn_on_sent(s, f, size)
    return p


@jit
def flow_start(s: SimState, f: int) -> None:
    """Flow ``f`` begins: full line rate, in its host's ring, retransmission timer armed."""
    fi = s.fi
    now = now_ps(s)
    fi[f, F_STARTED] = 1
    fi[f, F_START_PS] = now
    fi[f, F_NEXT_SEND_PS] = now
    fi[f, F_LAST_PROGRESS] = now
    ring_add(s, f)
    epoch = fi[f, F_RTO_EPOCH] + 1
    fi[f, F_RTO_EPOCH] = epoch
    schedule(s, now + s.prm_i[PI_RTO], EV_RTO, f, ZERO, epoch)


@jit
def on_rto(s: SimState, f: int, epoch: int) -> bool:
    """Retransmission timer of flow ``f``: go back to the first unacknowledged packet if nothing
    was acknowledged for ``rto``. True if the host should look at its link."""
    fi = s.fi
    if epoch != fi[f, F_RTO_EPOCH] or fi[f, F_ACKED_PS] >= 0:
        return False
    now = now_ps(s)
    rto = s.prm_i[PI_RTO]
    kick = False
    if now - fi[f, F_LAST_PROGRESS] >= rto:
        fi[f, F_TIMEOUTS] += 1
        s.cnt[C_TIMEOUTS] += 1
        fi[f, F_NEXT_SEQ] = fi[f, F_SND_UNA]
        fi[f, F_LAST_PROGRESS] = now
        ring_add(s, f)
        kick = True
    schedule(s, fi[f, F_LAST_PROGRESS] + rto, EV_RTO, f, ZERO, epoch)
    return kick


def host_table(net: PacketNetwork, spec: PacketSpec) -> NDArray[np.int64]:
    """The host (NIC) table of a run: its links, an empty send ring, its stop time if stuck.

    Raises
    ------
    ModelError
        FP541 when a stuck host of the spec is not a host of the network.
    """
    hosts = net.hosts
    up, down = net.host_up_link, net.host_down_link
    hi = np.zeros((hosts, HI_COLS), dtype=np.int64)
    hi[:, H_UP] = up
    hi[:, H_DOWN] = down
    hi[:, H_RING_HEAD] = -1
    hi[:, H_STOP_PS] = NEVER_PS
    for host, at_us in spec.faults.stuck_hosts:
        if not 0 <= host < hosts:
            raise ModelError(
                "FP541",
                "packet spec faults.stuck_hosts",
                "names no host",
                host,
                f"use hosts 0 .. {hosts - 1}",
            )
        hi[host, H_STOP_PS] = us_to_ps(at_us)
    return hi


def flow_tables(
    traffic: Traffic,
    size: NDArray[np.int64],
    packets: NDArray[np.int64],
    cls: NDArray[np.int64],
    mtu: int,
    flow_line: NDArray[np.float64],
    fwd: NDArray[np.int64],
    rev: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """The flow tables of a run (``fi``, ``ff``, ``fh``): ends, sizes, packets, class, step,
    start offset, line rate and the forward and reverse paths."""
    n_flows = int(size.size)
    src = np.asarray(traffic.src, dtype=np.int64)
    dst = np.asarray(traffic.dst, dtype=np.int64)
    max_hops = int(fwd.shape[1]) if fwd.ndim == 2 else 0
    fi = np.zeros((n_flows, FI_COLS), dtype=np.int64)
    fi[:, F_SRC] = src
    fi[:, F_DST] = dst
    fi[:, F_SIZE] = size
    fi[:, F_PACKETS] = packets
    fi[:, F_LAST_PAYLOAD] = size - (packets - 1) * mtu
    fi[:, F_CLS] = cls
    fi[:, F_STEP] = np.asarray(traffic.step, dtype=np.int64)
    fi[:, F_OFFSET_PS] = np.round(np.asarray(traffic.offset_us) * PS_PER_US).astype(np.int64)
    for col in (
        F_RX_NACKED,
        F_LAST_CNP_PS,
        F_START_PS,
        F_FINISH_PS,
        F_ACKED_PS,
        F_RING_NEXT,
        F_RING_PREV,
        F_DQ_LAST_DEC,
    ):
        fi[:, col] = -1
    if n_flows:
        fi[:, F_RX_OFFSET] = np.concatenate([[0], np.cumsum(packets)[:-1]])
    ff = np.zeros((n_flows, FF_COLS), dtype=np.float64)
    for col in (FF_RATE, FF_LINE, FF_DQ_TARGET, FF_HP_REF):
        ff[:, col] = flow_line
    fh = np.zeros((n_flows, FH_FIELDS, max_hops), dtype=np.int64)
    fh[:, FH_PATH, :] = fwd
    fh[:, FH_RPATH, :] = rev
    return fi, ff, fh
