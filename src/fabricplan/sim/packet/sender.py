"""The sending NIC: which flow puts the next packet on the host's link, and when.

Each host keeps a round-robin ring of its flows that still have packets to send. When the host
link is free, the NIC walks the ring from where it stopped and takes the first flow that may
send now: its window is not full, its class is not paused (PFC) or out of credits (IB), and its
rate limiter allows it (the next send time of a flow at rate ``R`` is the previous send plus the
packet's wire time at ``R``). If only rate limiters hold flows back, the NIC wakes up at the
earliest of their times. The packet it builds carries ``payload + header`` bytes (plus INT room
for HPCC); a packet sent again after a go-back is counted as a retransmission.

The retransmission timer follows RFC 6298 §5 (one timer per flow, as an RC queue pair's
transport timer, IBTA Vol. 1 §9.7.6.1.3): it runs only while the flow has data *outstanding*
(sent, and neither acknowledged nor given up by a go-back, ``next_seq > snd_una``). Sending a
packet starts it if it is stopped; an ACK that advances ``snd_una`` restarts it, or stops it
when nothing is outstanding any more; a NACK's go-back stops it (the resent packet starts it
again). It expires ``rto`` after it was last (re)armed with no ACK advancing since: that is a
timeout, counted, and the flow goes back to ``snd_una`` (go-back-N). A flow waiting for its
turn, its rate limiter, a pause or credits with nothing outstanding has no timer running, so
it can never time out. The timer is checked lazily: each flow has at most one check on the
heap, which re-schedules itself to the current deadline when an ACK moved it.
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
from fabricplan.sim.packet.nscc import nscc_on_timeout, nscc_start, nscc_window_bytes
from fabricplan.sim.packet.queue import alloc_packet
from fabricplan.sim.packet.spec import PacketSpec
from fabricplan.sim.packet.state import (
    C_RETX,
    C_TIMEOUTS,
    CC_DCQCN,
    CC_HPCC,
    CC_NSCC,
    DELIVER_SELECTIVE,
    F_ACKED_PS,
    F_CLS,
    F_DQ_LAST_DEC,
    F_DST,
    F_FINISH_PS,
    F_FLOWLET_LAST_PS,
    F_IN_RING,
    F_INFLIGHT,
    F_LAST_CNP_PS,
    F_LAST_PAYLOAD,
    F_MAX_SENT,
    F_NEXT_SEND_PS,
    F_NEXT_SEQ,
    F_NS_LAST_DEC_PS,
    F_OFFSET_PS,
    F_PACKETS,
    F_RETX,
    F_RING_NEXT,
    F_RING_PREV,
    F_RTO_ARMED_PS,
    F_RTO_PENDING,
    F_RTX_PENDING,
    F_RTX_SCAN,
    F_RX_NACKED,
    F_RX_OFFSET,
    F_RX_TRIM_SEQ,
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
    P_SENT_PS,
    PI_CC,
    PI_DELIVERY,
    PI_HEADER,
    PI_HP_INT_BYTES,
    PI_PAYLOAD,
    PI_RTO,
    PI_WINDOW,
    PKT_DATA,
    TX_ACKED,
    TX_IN_FLIGHT,
    TX_UNSENT,
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
def _selective(s: SimState) -> bool:
    return bool(s.prm_i[PI_DELIVERY] == DELIVER_SELECTIVE)


@jit
def outstanding_packets(s: SimState, f: int) -> int:
    """Packets of flow ``f`` sent and neither acknowledged nor given up for lost."""
    if _selective(s):
        return int(s.fi[f, F_INFLIGHT])
    return int(s.fi[f, F_NEXT_SEQ] - s.fi[f, F_SND_UNA])


@jit
def _window_open(s: SimState, f: int) -> bool:
    inflight = outstanding_packets(s, f) * s.prm_i[PI_PAYLOAD]
    cc = s.prm_i[PI_CC]
    if cc == CC_HPCC:
        return bool(inflight < hpcc_window_bytes(s, f))
    if cc == CC_NSCC:
        return bool(inflight < nscc_window_bytes(s, f))
    window = s.prm_i[PI_WINDOW]
    return bool(window <= 0 or inflight < window)


@jit
def _next_seq(s: SimState, f: int) -> int:
    """The sequence flow ``f`` sends next; ``F_PACKETS`` when it has nothing to send.

    Go-back-N sends ``next_seq``. Selective repeat resends the lowest packet declared lost,
    else the first never sent."""
    fi = s.fi
    if not _selective(s):
        return int(fi[f, F_NEXT_SEQ])
    if fi[f, F_RTX_PENDING] > 0:
        base = fi[f, F_RX_OFFSET]
        k = max(fi[f, F_RTX_SCAN], fi[f, F_SND_UNA])
        top = fi[f, F_MAX_SENT]
        while k < top and s.tx_state[base + k] != TX_UNSENT:
            k += 1
        if k < top:
            fi[f, F_RTX_SCAN] = k
            return int(k)
        fi[f, F_RTX_PENDING] = 0
    return int(fi[f, F_MAX_SENT])


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
        seq = _next_seq(s, f)
        if seq >= fi[f, F_PACKETS]:
            _ring_remove(s, f)
        elif _window_open(s, f):
            if held_back(s, link, fi[f, F_CLS], data_bytes(s, f, seq), now):
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
    seq = _next_seq(s, f)
    size = data_bytes(s, f, seq)
    p = alloc_packet(s, f, seq, size, PKT_DATA, fi[f, F_CLS])
    s.pi[p, P_HOP] = 1
    s.pi[p, P_SENT_PS] = now
    if seq < fi[f, F_MAX_SENT]:
        fi[f, F_RETX] += 1
        s.cnt[C_RETX] += 1
        if _selective(s):
            fi[f, F_RTX_PENDING] -= 1
            fi[f, F_RTX_SCAN] = seq + 1
    else:
        fi[f, F_MAX_SENT] = seq + 1
    if _selective(s):
        s.tx_state[fi[f, F_RX_OFFSET] + seq] = TX_IN_FLIGHT
        fi[f, F_INFLIGHT] += 1
        fi[f, F_NEXT_SEQ] = fi[f, F_MAX_SENT]
    else:
        fi[f, F_NEXT_SEQ] = seq + 1
    fi[f, F_SENT] += 1
    rto_arm(s, f, now)
    gap = int(size * BITS_PER_BYTE * PS_PER_S / s.ff[f, FF_RATE])
    fi[f, F_NEXT_SEND_PS] = now + gap
    if s.prm_i[PI_CC] == CC_DCQCN:
        dcqcn_on_sent(s, f, size)
    return p


@jit
def flow_start(s: SimState, f: int) -> None:
    """Flow ``f`` begins: full line rate, in its host's ring (its timer starts with its first
    packet)."""
    fi = s.fi
    now = now_ps(s)
    fi[f, F_STARTED] = 1
    fi[f, F_START_PS] = now
    fi[f, F_NEXT_SEND_PS] = now
    if s.prm_i[PI_CC] == CC_NSCC:
        nscc_start(s, f)
    ring_add(s, f)


@jit
def rto_arm(s: SimState, f: int, now: int) -> None:
    """A packet of flow ``f`` went out: start its retransmission timer unless it runs."""
    fi = s.fi
    if fi[f, F_RTO_ARMED_PS] >= 0:
        return
    fi[f, F_RTO_ARMED_PS] = now
    if fi[f, F_RTO_PENDING] == 0:
        fi[f, F_RTO_PENDING] = 1
        schedule(s, now + s.prm_i[PI_RTO], EV_RTO, f, ZERO, ZERO)


@jit
def rto_on_progress(s: SimState, f: int, now: int) -> None:
    """``snd_una`` or ``next_seq`` of flow ``f`` moved (ACK, NACK): restart its timer if data
    is still outstanding, else stop it."""
    fi = s.fi
    fi[f, F_RTO_ARMED_PS] = -1
    if outstanding_packets(s, f) > 0 and fi[f, F_ACKED_PS] < 0:
        rto_arm(s, f, now)


@jit
def on_rto(s: SimState, f: int) -> bool:
    """The retransmission timer check of flow ``f``: a timeout if data is outstanding and no
    ACK advanced for ``rto`` since the timer was (re)armed; then go back to the first
    unacknowledged packet. True if the host should look at its link."""
    fi = s.fi
    fi[f, F_RTO_PENDING] = 0
    armed = fi[f, F_RTO_ARMED_PS]
    if armed < 0 or fi[f, F_ACKED_PS] >= 0:
        return False  # stopped: nothing outstanding (re-armed, and re-checked, on a send)
    deadline = armed + s.prm_i[PI_RTO]
    if now_ps(s) < deadline:  # an ACK restarted the timer since this check was scheduled
        fi[f, F_RTO_PENDING] = 1
        schedule(s, deadline, EV_RTO, f, ZERO, ZERO)
        return False
    fi[f, F_TIMEOUTS] += 1
    s.cnt[C_TIMEOUTS] += 1
    if _selective(s):
        base = fi[f, F_RX_OFFSET]
        for k in range(fi[f, F_SND_UNA], fi[f, F_MAX_SENT]):
            if s.tx_state[base + k] == TX_IN_FLIGHT:
                s.tx_state[base + k] = TX_UNSENT
                fi[f, F_RTX_PENDING] += 1
        fi[f, F_INFLIGHT] = 0
        fi[f, F_RTX_SCAN] = fi[f, F_SND_UNA]
    else:
        fi[f, F_NEXT_SEQ] = fi[f, F_SND_UNA]
    if s.prm_i[PI_CC] == CC_NSCC:
        nscc_on_timeout(s, f)
    fi[f, F_RTO_ARMED_PS] = -1  # the go-back resends; the first resent packet re-arms
    ring_add(s, f)
    return True


@jit
def _mark_acked(s: SimState, f: int, index: int) -> int:
    state = s.tx_state[index]
    if state == TX_ACKED:
        return 0
    if state == TX_IN_FLIGHT:
        s.fi[f, F_INFLIGHT] -= 1
    else:  # declared lost and not resent yet: the late ACK saves the resend
        s.fi[f, F_RTX_PENDING] -= 1
    s.tx_state[index] = TX_ACKED
    return 1


@jit
def selective_ack(s: SimState, f: int, seq: int, cumulative: int) -> int:
    """Selective repeat: an ACK of packet ``seq`` (-1: none) and of everything below
    ``cumulative`` reached flow ``f``'s sender; returns the packets it newly acknowledged and
    advances ``snd_una`` over the acknowledged prefix."""
    fi = s.fi
    base = fi[f, F_RX_OFFSET]
    n = fi[f, F_PACKETS]
    newly = 0
    if 0 <= seq < n:
        newly += _mark_acked(s, f, base + seq)
    for k in range(fi[f, F_SND_UNA], min(cumulative, n)):
        newly += _mark_acked(s, f, base + k)
    una = fi[f, F_SND_UNA]
    while una < n and s.tx_state[base + una] == TX_ACKED:
        una += 1
    fi[f, F_SND_UNA] = una
    return newly


@jit
def selective_loss(s: SimState, f: int, seq: int) -> bool:
    """Selective repeat: packet ``seq`` of flow ``f`` is known lost (its trimmed header was
    NACKed); True when it was in flight and is now due to be resent."""
    fi = s.fi
    index = fi[f, F_RX_OFFSET] + seq
    if seq < 0 or seq >= fi[f, F_PACKETS] or s.tx_state[index] != TX_IN_FLIGHT:
        return False
    s.tx_state[index] = TX_UNSENT
    fi[f, F_INFLIGHT] -= 1
    fi[f, F_RTX_PENDING] += 1
    if seq < fi[f, F_RTX_SCAN]:
        fi[f, F_RTX_SCAN] = seq
    return True


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
        F_RTO_ARMED_PS,
        F_RING_NEXT,
        F_RING_PREV,
        F_DQ_LAST_DEC,
        F_NS_LAST_DEC_PS,
        F_RX_TRIM_SEQ,
        F_FLOWLET_LAST_PS,
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
