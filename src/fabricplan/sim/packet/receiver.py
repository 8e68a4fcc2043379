"""The receiving NIC: data in, ACK/NACK/CNP out; and the sender's side of ACK, NACK and CNP.

The readable model:

- **Data.** With pinned paths (static, ECMP) packets arrive in order unless one was lost, and
  the NIC does go-back-N as RoCE and IB reliable connections do: the expected packet is taken;
  a later one is discarded and answered by one NACK naming the expected packet; an earlier one
  is a duplicate (re-acknowledged). With per-packet routing (adaptive, spraying) packets
  overtake each other, and the NIC places them out of order (as ConnectX does with adaptive
  routing): each new packet is taken once, and the cumulative ACK advances over the prefix.
- **ACK** every ``ack_interval`` packets (and on the last one) carries the cumulative sequence
  (and, under HPCC, the INT records of the packet that triggered it). **CNP**: for an
  ECN-marked packet under DCQCN (paced per flow) or a FECN-marked one under IB CC (BECN).
- **Sender side.** An ACK advances the acknowledged sequence (HPCC also updates its rate); a
  NACK advances it and sends the flow back to the named packet (go-back-N); either restarts
  the flow's retransmission timer, or stops it when nothing is left outstanding
  (:mod:`fabricplan.sim.packet.sender`); a CNP drives DCQCN or IB CC.
- **Fault.** From its ``stop`` time a NIC no longer drains: packets stay in its receive buffer,
  which then pauses its switch port (PFC) or withholds credits (IB).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import return_credit
from fabricplan.sim.packet.dcqcn import dcqcn_on_cnp, np_wants_cnp
from fabricplan.sim.packet.event import now_ps
from fabricplan.sim.packet.hpcc import hpcc_on_ack
from fabricplan.sim.packet.ibcc import ibcc_on_becn
from fabricplan.sim.packet.link import try_send
from fabricplan.sim.packet.pfc import nic_hold
from fabricplan.sim.packet.queue import alloc_packet, enqueue, free_packet
from fabricplan.sim.packet.sender import ring_add, rto_on_progress
from fabricplan.sim.packet.state import (
    C_CNPS,
    C_DELIVERED,
    C_DELIVERED_BYTES,
    C_DONE,
    C_FLOWS_DONE_RX,
    C_LAST_PROGRESS,
    CC_DCQCN,
    CC_HPCC,
    CC_IBCC,
    CONTROL_CLASS,
    F_ACKED_PS,
    F_DUPS,
    F_FINISH_PS,
    F_NEXT_SEQ,
    F_OOO,
    F_PACKETS,
    F_RX_EXPECTED,
    F_RX_NACKED,
    F_RX_OFFSET,
    F_RX_SINCE_ACK,
    F_RX_UNIQUE,
    F_SND_UNA,
    FC_CREDIT,
    FC_PFC,
    FLAG_ECN_CE,
    FLAG_FECN,
    H_STOP_PS,
    H_UP,
    L_DST,
    P_ACK_SEQ,
    P_CLS,
    P_FLAGS,
    P_FLOW,
    P_HOP,
    P_INT_N,
    P_KIND,
    P_SEQ,
    P_SIZE,
    PI_ACK_BYTES,
    PI_ACK_INTERVAL,
    PI_CC,
    PI_CNP_BYTES,
    PI_FC,
    PI_HEADER,
    PI_HP_INT_BYTES,
    PI_OOO,
    PKT_ACK,
    PKT_CNP,
    PKT_DATA,
    PKT_NACK,
    Q_ING_BYTES,
    ZERO,
    SimState,
)


@jit
def _send_control(s: SimState, f: int, h: int, kind: int, ack_seq: int, data: int) -> None:
    """Queue an ACK / NACK / CNP of flow ``f`` on host ``h``'s link (control class)."""
    hpcc_ack = kind == PKT_ACK and s.prm_i[PI_CC] == CC_HPCC
    size = s.prm_i[PI_CNP_BYTES] if kind == PKT_CNP else s.prm_i[PI_ACK_BYTES]
    if hpcc_ack:
        size += s.prm_i[PI_HP_INT_BYTES]
    q = alloc_packet(s, f, ZERO, size, kind, CONTROL_CLASS)
    s.pi[q, P_ACK_SEQ] = ack_seq
    s.pi[q, P_HOP] = 1
    if hpcc_ack:
        n = s.pi[data, P_INT_N]
        s.pi[q, P_INT_N] = n
        for field in range(s.pint.shape[1]):
            for i in range(n):
                s.pint[q, field, i] = s.pint[data, field, i]
    enqueue(s, s.hi[h, H_UP], CONTROL_CLASS, q)


@jit
def _take(s: SimState, f: int, p: int, now: int) -> int:
    """Receive data packet ``p``; returns 1 taken, 0 duplicate, -1 out of order (discarded)."""
    fi = s.fi
    seq = s.pi[p, P_SEQ]
    n = fi[f, F_PACKETS]
    if s.prm_i[PI_OOO] != 0:
        index = fi[f, F_RX_OFFSET] + seq
        if s.rx_seen[index] != 0:
            fi[f, F_DUPS] += 1
            return 0
        s.rx_seen[index] = 1
        expected = fi[f, F_RX_EXPECTED]
        while expected < n and s.rx_seen[fi[f, F_RX_OFFSET] + expected] != 0:
            expected += 1
        fi[f, F_RX_EXPECTED] = expected
    elif seq == fi[f, F_RX_EXPECTED]:
        fi[f, F_RX_EXPECTED] = seq + 1
    elif seq > fi[f, F_RX_EXPECTED]:
        fi[f, F_OOO] += 1
        return -1
    else:
        fi[f, F_DUPS] += 1
        return 0
    fi[f, F_RX_UNIQUE] += 1
    s.cnt[C_DELIVERED] += 1
    payload = s.pi[p, P_SIZE] - s.prm_i[PI_HEADER]
    if s.prm_i[PI_CC] == CC_HPCC:
        payload -= s.prm_i[PI_HP_INT_BYTES]  # HPCC's INT metadata rides along; not payload
    s.cnt[C_DELIVERED_BYTES] += payload
    s.cnt[C_LAST_PROGRESS] = now
    return 1


@jit
def on_data(s: SimState, p: int, in_link: int, h: int) -> bool:
    """A data packet reached host ``h``. Returns True when its flow has just been received
    whole (the caller closes the flow's step)."""
    fi = s.fi
    now = now_ps(s)
    f = s.pi[p, P_FLOW]
    cls = s.pi[p, P_CLS]
    size = s.pi[p, P_SIZE]
    lossless = s.class_lossless[cls] != 0
    fc = s.prm_i[PI_FC]
    if now >= s.hi[h, H_STOP_PS]:
        if lossless and fc == FC_PFC:
            nic_hold(s, in_link, cls, size)
        elif lossless and fc == FC_CREDIT:
            s.lc[in_link, cls, Q_ING_BYTES] += size
        return False
    if lossless and fc == FC_CREDIT:
        return_credit(s, in_link, cls, size)
    taken = _take(s, f, p, now)
    if taken < 0:
        if fi[f, F_RX_NACKED] != fi[f, F_RX_EXPECTED]:
            fi[f, F_RX_NACKED] = fi[f, F_RX_EXPECTED]
            _send_control(s, f, h, PKT_NACK, fi[f, F_RX_EXPECTED], p)
    else:
        fi[f, F_RX_SINCE_ACK] += 1
        complete = fi[f, F_RX_UNIQUE] >= fi[f, F_PACKETS]
        if taken == 0 or complete or fi[f, F_RX_SINCE_ACK] >= s.prm_i[PI_ACK_INTERVAL]:
            fi[f, F_RX_SINCE_ACK] = 0
            _send_control(s, f, h, PKT_ACK, fi[f, F_RX_EXPECTED], p)
    flags = s.pi[p, P_FLAGS]
    cc = s.prm_i[PI_CC]
    notify = cc == CC_DCQCN and flags & FLAG_ECN_CE != 0 and np_wants_cnp(s, f)
    if notify or (cc == CC_IBCC and flags & FLAG_FECN != 0):
        _send_control(s, f, h, PKT_CNP, ZERO, p)
    try_send(s, s.hi[h, H_UP])
    if taken == 1 and fi[f, F_RX_UNIQUE] >= fi[f, F_PACKETS] and fi[f, F_FINISH_PS] < 0:
        fi[f, F_FINISH_PS] = now
        s.cnt[C_FLOWS_DONE_RX] += 1
        return True
    return False


@jit
def on_control(s: SimState, p: int, h: int) -> None:
    """An ACK, NACK or CNP reached the sender host ``h``."""
    fi = s.fi
    now = now_ps(s)
    f = s.pi[p, P_FLOW]
    kind = s.pi[p, P_KIND]
    if kind == PKT_CNP:
        s.cnt[C_CNPS] += 1
        cc = s.prm_i[PI_CC]
        if cc == CC_DCQCN:
            dcqcn_on_cnp(s, f)
        elif cc == CC_IBCC:
            ibcc_on_becn(s, f)
        return
    acked = s.pi[p, P_ACK_SEQ]
    advanced = acked > fi[f, F_SND_UNA]
    if advanced:
        fi[f, F_SND_UNA] = acked
        s.cnt[C_LAST_PROGRESS] = now
        if fi[f, F_NEXT_SEQ] < acked:  # a late ACK after a timeout's go-back: skip what it acks
            fi[f, F_NEXT_SEQ] = acked
    if kind == PKT_NACK:
        # Go back to the named packet (never below snd_una: a stale NACK does not undo ACKs).
        if fi[f, F_NEXT_SEQ] > fi[f, F_SND_UNA]:
            fi[f, F_NEXT_SEQ] = fi[f, F_SND_UNA]
        ring_add(s, f)
    elif s.prm_i[PI_CC] == CC_HPCC:
        hpcc_on_ack(s, f, p)
    if fi[f, F_SND_UNA] >= fi[f, F_PACKETS] and fi[f, F_ACKED_PS] < 0:
        fi[f, F_ACKED_PS] = now
        s.cnt[C_DONE] += 1
    if advanced or kind == PKT_NACK:
        rto_on_progress(s, f, now)
    try_send(s, s.hi[h, H_UP])


@jit
def on_host_arrive(s: SimState, p: int, in_link: int) -> bool:
    """Packet ``p`` reached a host over ``in_link``; True if a flow was just received whole."""
    h = s.li[in_link, L_DST]
    done = False
    if s.pi[p, P_KIND] == PKT_DATA:
        done = on_data(s, p, in_link, h)
    else:
        on_control(s, p, h)
    free_packet(s, p)
    return done
