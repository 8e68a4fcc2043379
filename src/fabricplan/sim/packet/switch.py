"""A switch: forwards an arriving packet to an output queue, if its buffer admits it.

The readable model: an output-queued shared-buffer switch. On arrival a packet gets its output
link — the next link of its flow's path (static D-mod-K tables or per-flow ECMP, fixed for the
flow's life), or per packet among the equal-cost next hops: the least loaded one (adaptive
routing: fewest queued bytes, a paused or credit-less port counted as full; ties in turn) or
the next one in turn (oblivious spraying), or by a hash of the packet's flowlet
(:mod:`fabricplan.sim.packet.flowlet`). Admission then depends on the class:

- lossless under PFC: :func:`fabricplan.sim.packet.pfc.pfc_admit` (shared pool, then headroom,
  else a drop that shows the headroom is too small);
- lossless under credits: always (the sender held the credits for it);
- lossy: the shared pool and a dynamic threshold on the output queue
  (``lossy_alpha x free pool``), else a tail drop.

Control packets (class 0) are always admitted. IB congestion control may set FECN as the
packet joins its queue; a PFC watchdog in storm mode drops what is bound for the stormed queue.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.packet.backpressure import held_back
from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.egress import release
from fabricplan.sim.packet.event import EV_VOQ_RELEASE, EV_WATCHDOG, now_ps, schedule
from fabricplan.sim.packet.flowlet import flowlet_choice, flowlet_observe
from fabricplan.sim.packet.forwarding import next_hop_range
from fabricplan.sim.packet.ibcc import ibcc_mark
from fabricplan.sim.packet.link import try_send
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.pfc import pfc_admit, pfc_after_admit
from fabricplan.sim.packet.queue import dequeue, enqueue, free_packet, wire_ps
from fabricplan.sim.packet.spec import PacketSpec
from fabricplan.sim.packet.state import (
    C_DROPS,
    C_LOSSLESS_DROPS,
    C_TRIMS,
    C_WD_TRIGGERS,
    CC_IBCC,
    CONTROL_CLASS,
    F_DST,
    F_SRC,
    FC_CREDIT,
    FC_PFC,
    FC_SCHEDULED,
    FH_PATH,
    FH_RPATH,
    FLAG_TRIMMED,
    L_DROPS,
    L_DST,
    L_Q_TOTAL,
    L_SRC,
    L_TRIMS,
    P_CLS,
    P_FLAGS,
    P_FLOW,
    P_HOP,
    P_IN_LINK,
    P_KIND,
    P_SIZE,
    P_TAIL_PS,
    PF_LOSSY_ALPHA,
    PI_CC,
    PI_CLASSES,
    PI_FC,
    PI_HOSTS,
    PI_REASSEMBLY,
    PI_ROUTING,
    PI_TRIM,
    PI_TRIM_BYTES,
    PI_WD_DETECT,
    PI_WD_ON,
    PI_WD_POLL,
    PI_WD_RESTORE,
    PKT_DATA,
    Q_BYTES,
    Q_HEAD,
    Q_ING_BYTES,
    Q_PAUSED_UNTIL,
    Q_STORM_UNTIL,
    Q_WD_SINCE,
    Q_XOFF,
    ROUTE_ADAPTIVE,
    ROUTE_FLOWLET,
    ROUTE_PATH,
    S_BUFFER,
    S_MAX_USED,
    S_RR,
    S_SHARED,
    S_SHARED_USED,
    S_USED,
    SI_COLS,
    ZERO,
    SimState,
    int64,
)
from fabricplan.sim.packet.voq import reassemble, voq_release_ps

BLOCKED_PORT_BYTES = int64(1 << 40)
"""Load adaptive routing gives a port that cannot send the packet's class now."""


@jit
def route_out(s: SimState, v: int, p: int, now: int) -> int:
    """The output link of packet ``p`` at switch vertex ``v``."""
    pi = s.pi
    f = pi[p, P_FLOW]
    forward = pi[p, P_KIND] == PKT_DATA
    if s.prm_i[PI_ROUTING] == ROUTE_PATH:
        hop = pi[p, P_HOP]
        pi[p, P_HOP] = hop + 1
        return int(s.fh[f, FH_PATH, hop] if forward else s.fh[f, FH_RPATH, hop])
    dest = s.fi[f, F_DST] if forward else s.fi[f, F_SRC]
    sw = v - s.prm_i[PI_HOSTS]
    lo, n = next_hop_range(s, sw, dest)
    if n == 1:
        return int(s.fib_links[lo])
    if s.prm_i[PI_ROUTING] == ROUTE_FLOWLET:
        return int(s.fib_links[lo + flowlet_choice(s, sw, p, n)])
    turn = s.si[sw, S_RR]
    s.si[sw, S_RR] = turn + 1
    if s.prm_i[PI_ROUTING] != ROUTE_ADAPTIVE:
        return int(s.fib_links[lo + turn % n])
    cls = pi[p, P_CLS]
    best = -1
    best_load = 0
    for k in range(n):
        link = s.fib_links[lo + (turn + k) % n]
        load = s.li[link, L_Q_TOTAL]
        if cls != CONTROL_CLASS and held_back(s, link, cls, pi[p, P_SIZE], now):
            load += BLOCKED_PORT_BYTES
        if best < 0 or load < best_load:
            best = link
            best_load = load
    return best


@jit
def _drop(s: SimState, p: int, link: int) -> None:
    s.li[link, L_DROPS] += 1
    s.cnt[C_DROPS] += 1
    free_packet(s, p)


@jit
def _trim(s: SimState, p: int, in_link: int, out: int, now: int) -> None:
    """Cut data packet ``p`` to its header; it goes on in the control class (high priority).
    The header is in once its own bytes are (the cut rest no longer holds the output)."""
    trimmed = s.prm_i[PI_TRIM_BYTES]
    header_in = now + wire_ps(s, in_link, trimmed)
    if header_in < s.pi[p, P_TAIL_PS]:
        s.pi[p, P_TAIL_PS] = header_in
    s.pi[p, P_SIZE] = trimmed
    s.pi[p, P_CLS] = CONTROL_CLASS
    s.pi[p, P_FLAGS] |= FLAG_TRIMMED
    s.li[out, L_TRIMS] += 1
    s.cnt[C_TRIMS] += 1


@jit
def on_switch_arrive(s: SimState, p: int, in_link: int) -> None:
    """Packet ``p`` has arrived over ``in_link`` at a switch."""
    now = now_ps(s)
    hosts = s.prm_i[PI_HOSTS]
    v = s.li[in_link, L_DST]
    sw = v - hosts
    s.pi[p, P_IN_LINK] = in_link
    cls = s.pi[p, P_CLS]
    fc = s.prm_i[PI_FC]
    # A scheduled fabric holds data from a host in its VOQ: routed when it leaves (voq.py).
    voq = fc == FC_SCHEDULED and cls != CONTROL_CLASS and s.li[in_link, L_SRC] < hosts
    if s.prm_i[PI_ROUTING] == ROUTE_FLOWLET:
        flowlet_observe(s, p, in_link, now)
    out = in_link if voq else route_out(s, v, p, now)
    size = s.pi[p, P_SIZE]
    lossless = s.class_lossless[cls] != 0
    if cls != CONTROL_CLASS:
        if s.prm_i[PI_WD_ON] != 0 and not voq and s.lc[out, cls, Q_STORM_UNTIL] > now:
            _drop(s, p, out)
            return
        if lossless and fc == FC_CREDIT:
            s.lc[in_link, cls, Q_ING_BYTES] += size
        elif lossless and fc == FC_PFC:
            if not pfc_admit(s, sw, in_link, cls, p):
                s.cnt[C_LOSSLESS_DROPS] += 1
                _drop(s, p, out)
                return
        else:
            free = s.si[sw, S_SHARED] - s.si[sw, S_SHARED_USED]
            limit = s.prm_f[PF_LOSSY_ALPHA] * free
            fits = size <= free and (voq or s.lc[out, cls, Q_BYTES] + size <= limit)
            if fits:
                s.si[sw, S_SHARED_USED] += size
            elif s.prm_i[PI_TRIM] != 0 and not voq and s.pi[p, P_KIND] == PKT_DATA:
                _trim(s, p, in_link, out, now)
                cls = CONTROL_CLASS
                size = s.pi[p, P_SIZE]
            else:
                _drop(s, p, out)
                return
        if s.prm_i[PI_CC] == CC_IBCC and cls != CONTROL_CLASS:
            ibcc_mark(s, out, cls, p)
    used = s.si[sw, S_USED] + size
    s.si[sw, S_USED] = used
    if used > s.si[sw, S_MAX_USED]:
        s.si[sw, S_MAX_USED] = used
    if voq:
        schedule(s, voq_release_ps(s, p, now), EV_VOQ_RELEASE, p, in_link, ZERO)
        return
    _to_queue(s, out, cls, p)
    if cls != CONTROL_CLASS and lossless and fc == FC_PFC:
        pfc_after_admit(s, sw, in_link, cls)
    try_send(s, out)


@jit
def _to_queue(s: SimState, out: int, cls: int, p: int) -> None:
    """Queue ``p`` on ``out``; data for a host goes through the egress leaf's reassembly
    where the fabric reassembles (:func:`~fabricplan.sim.packet.voq.reassemble`)."""
    to_host = s.li[out, L_DST] < s.prm_i[PI_HOSTS]
    if s.prm_i[PI_REASSEMBLY] != 0 and cls != CONTROL_CLASS and to_host:
        reassemble(s, p, out, cls)
    else:
        enqueue(s, out, cls, p)


@jit
def on_voq_release(s: SimState, p: int, in_link: int) -> None:
    """Packet ``p``'s grant is back: it leaves its VOQ, sprayed onto the fabric."""
    out = route_out(s, s.li[in_link, L_DST], p, now_ps(s))
    _to_queue(s, out, s.pi[p, P_CLS], p)
    try_send(s, out)


@jit
def on_watchdog(s: SimState) -> None:
    """PFC watchdog poll over every switch port and lossless class."""
    now = now_ps(s)
    lc = s.lc
    hosts = s.prm_i[PI_HOSTS]
    for link in range(s.li.shape[0]):
        src = s.li[link, L_SRC]
        if src < hosts:
            continue
        for cls in range(1, s.prm_i[PI_CLASSES]):
            if s.class_lossless[cls] == 0 or lc[link, cls, Q_STORM_UNTIL] > now:
                continue
            # Paused by a peer that still asserts XOFF (the frames keep coming), with packets
            # waiting: the SONiC condition (queue not empty, nothing sent, pause frames).
            paused_now = lc[link, cls, Q_PAUSED_UNTIL] > now and lc[link, cls, Q_XOFF] != 0
            stuck = paused_now and lc[link, cls, Q_BYTES] > 0
            if not stuck:
                lc[link, cls, Q_WD_SINCE] = -1
            elif lc[link, cls, Q_WD_SINCE] < 0:
                lc[link, cls, Q_WD_SINCE] = now
            elif now - lc[link, cls, Q_WD_SINCE] >= s.prm_i[PI_WD_DETECT]:
                lc[link, cls, Q_STORM_UNTIL] = now + s.prm_i[PI_WD_RESTORE]
                lc[link, cls, Q_WD_SINCE] = -1
                s.cnt[C_WD_TRIGGERS] += 1
                while lc[link, cls, Q_HEAD] >= 0:
                    p = dequeue(s, link, cls)
                    release(s, src - hosts, p, cls)
                    _drop(s, p, link)
                try_send(s, link)
    schedule(s, now + s.prm_i[PI_WD_POLL], EV_WATCHDOG, ZERO, ZERO, ZERO)


def _switch_shared(
    net: PacketNetwork,
    spec: PacketSpec,
    buffer: NDArray[np.int64],
    headroom: NDArray[np.int64],
    lossless: NDArray[np.int64],
) -> NDArray[np.int64]:
    if spec.link_flow_control != "pfc":
        return buffer.copy()
    into_switch = net.link_dst >= net.hosts
    per_switch = np.bincount(
        net.link_dst[into_switch] - net.hosts, weights=headroom[into_switch], minlength=net.switches
    )
    reserved = (per_switch * int(lossless.sum())).astype(np.int64)
    shared = buffer - reserved
    if (shared <= 0).any():
        sw = int(np.flatnonzero(shared <= 0)[0])
        raise ModelError(
            "FP542",
            f"switch {sw}",
            "buffer smaller than the PFC headroom it must reserve",
            (int(buffer[sw]), int(reserved[sw])),
            "give a larger switch_buffer_bytes or a smaller pfc.headroom_bytes",
        )
    return shared


def switch_table(
    net: PacketNetwork,
    spec: PacketSpec,
    headroom: NDArray[np.int64],
    lossless: NDArray[np.int64],
) -> NDArray[np.int64]:
    """The switch table of a run: buffer and the shared pool left after PFC headroom.

    Raises
    ------
    ModelError
        FP542 when a switch's buffer cannot hold the headroom it must reserve.
    """
    buffer = (
        np.full(net.switches, int(spec.switch_buffer_bytes), dtype=np.int64)
        if spec.switch_buffer_bytes is not None
        else net.switch_buffer_bytes.copy()
    )
    si = np.zeros((net.switches, SI_COLS), dtype=np.int64)
    si[:, S_BUFFER] = buffer
    si[:, S_SHARED] = _switch_shared(net, spec, buffer, headroom, lossless)
    return si
