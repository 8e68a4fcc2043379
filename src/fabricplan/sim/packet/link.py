"""A link's transmitter: picks the next packet, serialises it, and hands it to the far end.

The readable model: a link has one transmitter and one FIFO per traffic class. When idle it
takes the control class first (strict priority), then the data classes round-robin, skipping a
class that is paused (PFC) or out of credits (IB) — that skip, while packets wait, is counted
as stall time. At a host the data "queue" is the NIC's flow scheduler
(:mod:`fabricplan.sim.packet.sender`). Serialising ``n`` bytes takes ``n x 8 / speed``; the
packet arrives at the far end one link delay (propagation plus the forwarding latency of the
switch it leaves, :mod:`fabricplan.topology.graph`) after its last bit (store-and-forward), or
after its first ``cut_through_bytes`` when the far end is a cut-through switch — it then cannot
leave that switch before its last bit has arrived.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.packet.backpressure import held_back
from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import spend_credit, vl_buffer_bytes
from fabricplan.sim.packet.egress import release, stamp
from fabricplan.sim.packet.event import EV_ARRIVE, EV_TX_DONE, now_ps, schedule
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.pfc import headroom_bytes
from fabricplan.sim.packet.queue import dequeue, wire_ps
from fabricplan.sim.packet.sender import BLOCKED, next_data_packet
from fabricplan.sim.packet.spec import PacketSpec
from fabricplan.sim.packet.state import (
    C_STALLS,
    CONTROL_CLASS,
    FC_CREDIT,
    FC_SCHEDULED,
    FLAG_REPLAY,
    L_BUSY,
    L_BUSY_UNTIL,
    L_CREDIT_INIT,
    L_DELAY_PS,
    L_DST,
    L_HEADROOM,
    L_LAST_TX,
    L_LLR_HOLD_HEAD,
    L_LLR_HOLD_TAIL,
    L_REV,
    L_RR,
    L_SRC,
    L_STALL_EVENTS,
    L_STALL_PS,
    L_STALL_SINCE,
    L_TX_BYTES,
    LC_FIELDS,
    LF_COLS,
    LF_FRAME_ERROR,
    LF_PS_PER_BYTE,
    LF_SPEED_BPS,
    LI_COLS,
    P_CLS,
    P_FLAGS,
    P_SIZE,
    P_TAIL_PS,
    PI_CLASSES,
    PI_CUT_BYTES,
    PI_CUT_THROUGH,
    PI_FC,
    PI_HOSTS,
    Q_CREDITS,
    Q_HEAD,
    Q_TAIL,
    Q_WD_SINCE,
    ZERO,
    SimState,
)
from fabricplan.sim.packet.voq import cell_wire_bytes
from fabricplan.units import BITS_PER_BYTE, BPS_PER_GBPS, PS_PER_NS


@jit
def _switch_pick(s: SimState, link: int, now: int) -> tuple[int, bool]:
    """(packet, blocked) from a switch port's data queues, round-robin over classes."""
    data_classes = s.prm_i[PI_CLASSES] - 1
    start = s.li[link, L_RR]
    blocked = False
    for k in range(data_classes):
        cls = 1 + (start + k) % data_classes
        head = s.lc[link, cls, Q_HEAD]
        if head < 0:
            continue
        if held_back(s, link, cls, s.pi[head, P_SIZE], now):
            blocked = True
            continue
        s.li[link, L_RR] = cls % data_classes
        return dequeue(s, link, cls), blocked
    return -1, blocked


@jit
def try_send(s: SimState, link: int) -> None:
    """If ``link`` is idle, start sending its next packet (if any may go)."""
    li = s.li
    if li[link, L_BUSY] != 0:
        return
    now = now_ps(s)
    src = li[link, L_SRC]
    hosts = s.prm_i[PI_HOSTS]
    at_host = src < hosts
    p = -1
    blocked = False
    if s.lc[link, CONTROL_CLASS, Q_HEAD] >= 0:
        p = dequeue(s, link, CONTROL_CLASS)
        if not at_host and s.pi[p, P_FLAGS] & FLAG_REPLAY == 0:  # a replay holds no buffer
            release(s, src - hosts, p, CONTROL_CLASS)
    elif at_host:
        p = next_data_packet(s, src, link)
        if p < 0:
            blocked = p == BLOCKED
            p = -1
    else:
        p, blocked = _switch_pick(s, link, now)
        if p >= 0:
            cls = s.pi[p, P_CLS]
            stamp(s, link, p, cls, now)
            release(s, src - hosts, p, cls)
    if p < 0:
        if blocked and li[link, L_STALL_SINCE] < 0:
            li[link, L_STALL_SINCE] = now
            li[link, L_STALL_EVENTS] += 1
            s.cnt[C_STALLS] += 1
        return
    if li[link, L_STALL_SINCE] >= 0:
        li[link, L_STALL_PS] += now - li[link, L_STALL_SINCE]
        li[link, L_STALL_SINCE] = -1
    _start(s, link, p, now)


@jit
def _start(s: SimState, link: int, p: int, now: int) -> None:
    li = s.li
    size = s.pi[p, P_SIZE]
    cls = s.pi[p, P_CLS]
    fc = s.prm_i[PI_FC]
    if fc == FC_CREDIT and cls != CONTROL_CLASS and s.class_lossless[cls] != 0:
        spend_credit(s, link, cls, size)
    wire = size
    hosts = s.prm_i[PI_HOSTS]
    if fc == FC_SCHEDULED and li[link, L_SRC] >= hosts and li[link, L_DST] >= hosts:
        wire = cell_wire_bytes(s, size)
    done = now + wire_ps(s, link, wire)
    if done < s.pi[p, P_TAIL_PS]:
        done = s.pi[p, P_TAIL_PS]
    li[link, L_BUSY] = 1
    li[link, L_BUSY_UNTIL] = done
    li[link, L_TX_BYTES] += wire
    li[link, L_LAST_TX] = now
    schedule(s, done, EV_TX_DONE, link, ZERO, ZERO)
    delay = li[link, L_DELAY_PS]
    tail = done + delay
    arrive = tail
    if s.prm_i[PI_CUT_THROUGH] != 0 and li[link, L_DST] >= hosts:
        head = now + wire_ps(s, link, min(size, s.prm_i[PI_CUT_BYTES])) + delay
        if head < arrive:
            arrive = head
    s.pi[p, P_TAIL_PS] = tail
    schedule(s, arrive, EV_ARRIVE, p, link, ZERO)


@jit
def on_tx_done(s: SimState, link: int) -> None:
    s.li[link, L_BUSY] = 0
    try_send(s, link)


def frame_error_ratios(spec: PacketSpec, links: int) -> NDArray[np.float64]:
    """Each link's share of corrupted data frames (``spec.faults``).

    >>> import dataclasses
    >>> from fabricplan.sim.packet.spec import FaultSpec, packet_spec
    >>> faults = FaultSpec(frame_error_ratio=0.01, frame_errors=((1, 0.5),))
    >>> spec = dataclasses.replace(packet_spec("none", "none", "ecmp"), faults=faults)
    >>> frame_error_ratios(spec, 3).tolist()
    [0.01, 0.5, 0.01]

    Raises
    ------
    ModelError
        FP541 when a link of ``spec.faults.frame_errors`` is not a link of the network.
    """
    ratios = np.full(links, float(spec.faults.frame_error_ratio))
    for link, ratio in spec.faults.frame_errors:
        if not 0 <= link < links:
            raise ModelError(
                "FP541",
                "packet spec faults.frame_errors",
                "names no link of the network",
                link,
                f"use links 0 .. {links - 1}",
            )
        ratios[link] = float(ratio)
    return ratios


def link_tables(
    net: PacketNetwork, spec: PacketSpec, frame: int, classes: int
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """The link tables of a run (``li``, ``lf``, and ``lc`` per link and class): ends, delay,
    PFC headroom and IB credits sized for ``frame``-byte packets, empty queues."""
    n_links = net.links
    li = np.zeros((n_links, LI_COLS), dtype=np.int64)
    li[:, L_SRC] = net.link_src
    li[:, L_DST] = net.link_dst
    li[:, L_REV] = net.link_rev
    li[:, L_DELAY_PS] = np.round(net.link_delay_ns * PS_PER_NS).astype(np.int64)
    # links share a few (speed, delay) kinds: size each kind once
    kinds, kind_of = np.unique(
        np.stack([net.link_speed_gbps, net.link_delay_ns], axis=1), axis=0, return_inverse=True
    )
    kind_of = kind_of.ravel()
    li[:, L_HEADROOM] = (
        spec.pfc.headroom_bytes
        if spec.pfc.headroom_bytes is not None
        else np.array([headroom_bytes(float(g), float(d), frame) for g, d in kinds])[kind_of]
    )
    li[:, L_CREDIT_INIT] = (
        spec.credit.vl_buffer_bytes
        if spec.credit.vl_buffer_bytes is not None
        else np.array([vl_buffer_bytes(float(g), float(d), frame) for g, d in kinds])[kind_of]
    )
    li[:, L_STALL_SINCE] = -1
    li[:, L_LLR_HOLD_HEAD] = -1
    li[:, L_LLR_HOLD_TAIL] = -1
    lf = np.zeros((n_links, LF_COLS), dtype=np.float64)
    lf[:, LF_FRAME_ERROR] = frame_error_ratios(spec, n_links)
    speed = np.maximum(net.link_speed_gbps, 1e-9)
    lf[:, LF_PS_PER_BYTE] = BITS_PER_BYTE * PS_PER_NS / speed
    lf[:, LF_SPEED_BPS] = net.link_speed_gbps * BPS_PER_GBPS
    lc = np.zeros((n_links, classes, LC_FIELDS), dtype=np.int64)
    lc[:, :, Q_HEAD] = -1
    lc[:, :, Q_TAIL] = -1
    lc[:, :, Q_WD_SINCE] = -1
    lc[:, :, Q_CREDITS] = li[:, L_CREDIT_INIT][:, None]
    return li, lf, lc
