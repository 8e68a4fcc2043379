"""Packets and queues: allocation from the packet table, FIFO queues per (link, class), wire
times.

A queue is a singly linked list through the packets' ``P_NEXT`` column, with head and tail per
(link, class); ``Q_BYTES`` counts its bytes and the link's ``L_Q_TOTAL`` the bytes of all its
classes (what adaptive routing compares and the probes sample).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.state import (
    C_FREE,
    L_MAX_Q,
    L_Q_TOTAL,
    LF_PS_PER_BYTE,
    P_ACK_SEQ,
    P_CLS,
    P_FLAGS,
    P_FLOW,
    P_HDRM,
    P_HOP,
    P_IN_LINK,
    P_INT_N,
    P_KIND,
    P_NEXT,
    P_SENT_PS,
    P_SEQ,
    P_SIZE,
    P_TAIL_PS,
    Q_BYTES,
    Q_HEAD,
    Q_TAIL,
    SimState,
)


@jit
def alloc_packet(s: SimState, flow: int, seq: int, size: int, kind: int, cls: int) -> int:
    """A fresh packet row (the caller keeps the table from running dry)."""
    top = s.cnt[C_FREE] - 1
    s.cnt[C_FREE] = top
    p = s.free[top]
    pi = s.pi
    pi[p, P_FLOW] = flow
    pi[p, P_SEQ] = seq
    pi[p, P_SIZE] = size
    pi[p, P_KIND] = kind
    pi[p, P_CLS] = cls
    pi[p, P_HOP] = 0
    pi[p, P_FLAGS] = 0
    pi[p, P_IN_LINK] = -1
    pi[p, P_NEXT] = -1
    pi[p, P_ACK_SEQ] = 0
    pi[p, P_TAIL_PS] = 0
    pi[p, P_HDRM] = 0
    pi[p, P_INT_N] = 0
    pi[p, P_SENT_PS] = 0
    return int(p)


@jit
def free_packet(s: SimState, p: int) -> None:
    top = s.cnt[C_FREE]
    s.free[top] = p
    s.cnt[C_FREE] = top + 1


@jit
def wire_ps(s: SimState, link: int, size_bytes: int) -> int:
    """Serialisation time of ``size_bytes`` on ``link`` (ps, rounded)."""
    return int(size_bytes * s.lf[link, LF_PS_PER_BYTE] + 0.5)


@jit
def enqueue(s: SimState, link: int, cls: int, p: int) -> None:
    size = s.pi[p, P_SIZE]
    s.pi[p, P_NEXT] = -1
    tail = s.lc[link, cls, Q_TAIL]
    if tail < 0:
        s.lc[link, cls, Q_HEAD] = p
    else:
        s.pi[tail, P_NEXT] = p
    s.lc[link, cls, Q_TAIL] = p
    s.lc[link, cls, Q_BYTES] += size
    total = s.li[link, L_Q_TOTAL] + size
    s.li[link, L_Q_TOTAL] = total
    if total > s.li[link, L_MAX_Q]:
        s.li[link, L_MAX_Q] = total


@jit
def dequeue(s: SimState, link: int, cls: int) -> int:
    p = s.lc[link, cls, Q_HEAD]
    nxt = s.pi[p, P_NEXT]
    s.lc[link, cls, Q_HEAD] = nxt
    if nxt < 0:
        s.lc[link, cls, Q_TAIL] = -1
    size = s.pi[p, P_SIZE]
    s.lc[link, cls, Q_BYTES] -= size
    s.li[link, L_Q_TOTAL] -= size
    s.pi[p, P_NEXT] = -1
    return int(p)
