"""Run the packet-level simulator: build the arrays, run the dispatch loop, read the result.

>>> from fabricplan.sim.traffic import GpuLayout, incast
>>> from fabricplan.sim.packet.network import star
>>> from fabricplan.sim.packet.spec import packet_spec
>>> net = star(4)
>>> traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)   # 3 senders -> host 0, 300 kB each
>>> result = simulate_packet(net, traffic, packet_spec("pfc", "dcqcn", "ecmp"))
>>> result.status, int(result.counters["drops"])
('done', 0)
>>> bound_us = 3 * 300_000 * 8 / 100e3        # N S / B at 100 Gb/s
>>> bool(result.completion_us >= bound_us)
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.packet.credit import vl_buffer_bytes
from fabricplan.sim.packet.engine import HEAP_NOW, HEAP_SIZE, event_heap, heap_push
from fabricplan.sim.packet.event import EV_SAMPLE, EV_STEP_START, EV_WATCHDOG, priority_of
from fabricplan.sim.packet.hpcc import INT_BYTES_PER_HOP, INT_HEADER_BYTES
from fabricplan.sim.packet.kernel import (
    POOL_MARGIN,
    RUN_BUDGET,
    RUN_DONE,
    RUN_END,
    RUN_GROW,
    RUN_IDLE,
    RUN_STALLED,
    run_events,
)
from fabricplan.sim.packet.network import PacketNetwork, walk_paths
from fabricplan.sim.packet.pfc import PAUSE_FRAME_BYTES, headroom_bytes
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.spec import (
    ACK_EXTRA_BYTES,
    CNP_EXTRA_BYTES,
    CUT_THROUGH_BYTES,
    DATA_CLASSES,
    PacketSpec,
)
from fabricplan.sim.packet.state import (
    C_CNPS,
    C_DELIVERED_BYTES,
    C_DROPS,
    C_ECN_MARKS,
    C_EVENTS,
    C_FREE,
    C_LOSSLESS_DROPS,
    C_PAUSES,
    C_RETX,
    C_SAMPLES,
    C_STALLS,
    C_TIMEOUTS,
    C_WD_TRIGGERS,
    CC_DCQCN,
    CC_HPCC,
    CC_IBCC,
    CC_NONE,
    F_ACKED_PS,
    F_CLS,
    F_DQ_LAST_DEC,
    F_DST,
    F_DUPS,
    F_FINISH_PS,
    F_LAST_CNP_PS,
    F_LAST_PAYLOAD,
    F_OFFSET_PS,
    F_OOO,
    F_PACKETS,
    F_RETX,
    F_RING_NEXT,
    F_RING_PREV,
    F_RX_NACKED,
    F_RX_OFFSET,
    F_SENT,
    F_SIZE,
    F_SRC,
    F_START_PS,
    F_STEP,
    F_TIMEOUTS,
    FC_CREDIT,
    FC_NONE,
    FC_PFC,
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
    H_STOP_PS,
    H_UP,
    HI_COLS,
    L_CREDIT_INIT,
    L_DELAY_PS,
    L_DROPS,
    L_DST,
    L_HEADROOM,
    L_MAX_Q,
    L_PAUSE_FRAMES,
    L_REV,
    L_SRC,
    L_STALL_EVENTS,
    L_STALL_PS,
    L_STALL_SINCE,
    L_TX_BYTES,
    LC_FIELDS,
    LF_COLS,
    LF_PS_PER_BYTE,
    LF_SPEED_BPS,
    LI_COLS,
    N_COUNTERS,
    N_PARAM_F,
    N_PARAM_I,
    NEVER_PS,
    PF_DQ_AI,
    PF_DQ_DEC_DIVISOR,
    PF_DQ_G,
    PF_DQ_HAI,
    PF_DQ_INIT_ALPHA,
    PF_DQ_MIN_DEC,
    PF_DQ_MIN_RATE,
    PF_ECN_KMAX,
    PF_ECN_KMIN,
    PF_ECN_PMAX,
    PF_HP_AI,
    PF_HP_ETA,
    PF_HP_MIN_RATE,
    PF_IB_IPD_STEP,
    PF_IB_THRESHOLD_BUFFERS,
    PF_LOSSY_ALPHA,
    PF_PFC_ALPHA,
    PI_ACK_BYTES,
    PI_ACK_INTERVAL,
    PI_CC,
    PI_CLASSES,
    PI_CNP_BYTES,
    PI_CREDIT_BLOCK,
    PI_CUT_BYTES,
    PI_CUT_THROUGH,
    PI_DQ_ALPHA_PERIOD,
    PI_DQ_BYTE_RESET,
    PI_DQ_CLAMP,
    PI_DQ_CLAMP_AFTER_TIME,
    PI_DQ_CNP_INTERVAL,
    PI_DQ_DEC_PERIOD,
    PI_DQ_THRESHOLD,
    PI_DQ_TIME_RESET,
    PI_ECN_ON,
    PI_END,
    PI_FC,
    PI_HEADER,
    PI_HOSTS,
    PI_HP_INT_BYTES,
    PI_HP_MAX_STAGE,
    PI_HP_T,
    PI_HP_WIN,
    PI_IB_INCREASE,
    PI_IB_LIMIT,
    PI_IB_MARKING,
    PI_IB_MIN,
    PI_IB_THRESHOLD,
    PI_IB_TIMER,
    PI_MAX_HOPS,
    PI_NIC_XOFF,
    PI_OOO,
    PI_PAUSE_FRAME,
    PI_PAYLOAD,
    PI_PFC_QUANTA,
    PI_PFC_RESUME,
    PI_PFC_STATIC_XOFF,
    PI_ROUTING,
    PI_RTO,
    PI_SAMPLE,
    PI_STALL_LIMIT,
    PI_WD_DETECT,
    PI_WD_ON,
    PI_WD_POLL,
    PI_WD_RESTORE,
    PI_WINDOW,
    Q_CREDITS,
    Q_HEAD,
    Q_TAIL,
    Q_WD_SINCE,
    ROUTE_ADAPTIVE,
    ROUTE_PATH,
    ROUTE_SPRAY,
    S_BUFFER,
    S_MAX_USED,
    S_SHARED,
    SI_COLS,
    ST_COLS,
    ST_DELAY_PS,
    ST_FINISH_PS,
    ST_REMAINING,
    ST_START_PS,
    ST_WAITING,
    SimState,
    grown,
    packet_table,
)
from fabricplan.sim.path import flow_keys, pinned_paths
from fabricplan.sim.traffic import Traffic
from fabricplan.topology.graph import route
from fabricplan.units import BITS_PER_BYTE, PS_PER_NS, PS_PER_S, ns_to_ps

Progress = Callable[[float], None]
"""Called between chunks of events with the share of payload bytes delivered so far."""

EVENTS_PER_CHUNK = 1_000_000
STALL_RTOS = 3
"""A run is declared stalled only after this many retransmission timeouts without progress (a
timeout must have had its chance to recover a lost tail)."""
"""Events per call into the compiled loop (between two progress reports)."""
PS_PER_US = 1_000_000
MBPS = 1e6
GBPS = 1e9

_FC = {"none": int(FC_NONE), "pfc": int(FC_PFC), "credit": int(FC_CREDIT)}
_CC = {"none": int(CC_NONE), "dcqcn": int(CC_DCQCN), "hpcc": int(CC_HPCC), "ib_cc": int(CC_IBCC)}
_ROUTE = {
    "static": int(ROUTE_PATH),
    "ecmp": int(ROUTE_PATH),
    "adaptive": int(ROUTE_ADAPTIVE),
    "spray": int(ROUTE_SPRAY),
}
_STATUS = {
    int(RUN_DONE): "done",
    int(RUN_STALLED): "stalled",
    int(RUN_END): "end",
    int(RUN_IDLE): "idle",
}


def _us_ps(value_us: float) -> int:
    return round(value_us * PS_PER_US)


def _paths(
    net: PacketNetwork, spec: PacketSpec, src: NDArray[np.int64], dst: NDArray[np.int64], seed: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Forward and reverse link paths (the static/ECMP route; the D-mod-K / first route for
    per-packet routing, used only for the base RTT)."""
    ids = np.arange(src.size, dtype=np.int64)
    if net.graph is not None:
        graph = net.graph
        if spec.routing == "static" or spec.routing == "ecmp":
            fwd = pinned_paths(graph, spec.routing, src, dst, ids, seed)
            rev = pinned_paths(graph, spec.routing, dst, src, ids, seed)
        else:
            fwd = route(graph, src, dst, "dmodk")
            rev = route(graph, dst, src, "dmodk")
        return np.asarray(fwd, dtype=np.int64), np.asarray(rev, dtype=np.int64)
    hashed = spec.routing == "ecmp"
    forward = walk_paths(net, src, dst, flow_keys(src, dst, ids, seed) if hashed else None, seed)
    back = walk_paths(net, dst, src, flow_keys(dst, src, ids, seed) if hashed else None, seed)
    return forward, back


def _base_rtt_ps(
    net: PacketNetwork,
    fwd: NDArray[np.int64],
    rev: NDArray[np.int64],
    data_bytes: int,
    ack_bytes: int,
) -> int:
    """Largest base RTT over the flows: delays both ways plus one data and one ACK packet
    serialised on every hop (as the HPCC simulator's global T)."""
    if fwd.size == 0:
        return 1
    delay = np.append(net.link_delay_ns, 0.0)
    ns_per_byte = np.append(BITS_PER_BYTE / np.maximum(net.link_speed_gbps, 1e-9), 0.0)
    one_way = (delay[fwd] + data_bytes * ns_per_byte[fwd]).sum(axis=1)
    back = (delay[rev] + ack_bytes * ns_per_byte[rev]).sum(axis=1)
    return ns_to_ps(float((one_way + back).max()))


def _check_network(net: PacketNetwork) -> None:
    if net.hosts < 1 or (net.host_up_link < 0).any() or (net.host_down_link < 0).any():
        raise ModelError(
            "FP540",
            "packet network",
            "a host has no link to a switch",
            net.name,
            "give every host one link up and one link down",
        )


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


def build_state(
    net: PacketNetwork,
    traffic: Traffic,
    spec: PacketSpec,
    seed: int,
    flow_class: NDArray[np.int64] | None = None,
) -> SimState:
    """The tables of one run, with its first events scheduled."""
    spec.check()
    _check_network(net)
    classes = DATA_CLASSES + 1
    n_links, hosts = net.links, net.hosts
    src = np.asarray(traffic.src, dtype=np.int64)
    dst = np.asarray(traffic.dst, dtype=np.int64)
    n_flows = src.size
    if n_flows and (src.max() >= hosts or dst.max() >= hosts or (src == dst).any()):
        raise ModelError(
            "FP543",
            "packet traffic",
            "a flow's ends are not two hosts of the network",
            f"{hosts} hosts",
            "use host ports 0 .. hosts-1, src != dst",
        )
    size = np.maximum(np.ceil(np.asarray(traffic.size_bytes, dtype=np.float64)), 1).astype(np.int64)
    mtu = spec.mtu_bytes
    packets = (size + mtu - 1) // mtu
    if int(packets.sum()) > spec.max_packets:
        raise ModelError(
            "FP546",
            "packet traffic",
            "too many packets to simulate one by one",
            f"{int(packets.sum()):,} packets of {mtu} B",
            f"use a smaller --size (at most {spec.max_packets:,} packets) or --backend flow",
        )
    cls = (
        np.ones(n_flows, dtype=np.int64)
        if flow_class is None
        else np.asarray(flow_class, dtype=np.int64)
    )
    if n_flows and (cls.min() < 1 or cls.max() > DATA_CLASSES):
        raise ModelError(
            "FP541",
            "packet flow_class",
            "is not a data class",
            int(cls.max()),
            f"use classes 1 .. {DATA_CLASSES}",
        )
    fwd, rev = _paths(net, spec, src, dst, seed)
    max_hops = max(net.max_hops, fwd.shape[1])
    if fwd.shape[1] < max_hops:
        pad = np.full((n_flows, max_hops - fwd.shape[1]), -1, dtype=np.int64)
        fwd, rev = np.hstack([fwd, pad]), np.hstack([rev, pad])
    cc = _CC[spec.congestion_control]
    int_bytes = INT_HEADER_BYTES + INT_BYTES_PER_HOP * max(max_hops - 1, 1)
    int_extra = int_bytes if cc == CC_HPCC else 0
    frame = mtu + spec.header_bytes + int_extra
    ack_bytes = spec.header_bytes + ACK_EXTRA_BYTES
    base_rtt_ps = _base_rtt_ps(net, fwd, rev, frame, ack_bytes + int_extra)
    up, down = net.host_up_link, net.host_down_link
    line_bps = net.link_speed_gbps[up] * GBPS
    fc = _FC[spec.link_flow_control]
    lossless = np.zeros(classes, dtype=np.int64)
    if fc != FC_NONE:
        lossless[list(spec.lossless_classes)] = 1

    li = np.zeros((n_links, LI_COLS), dtype=np.int64)
    li[:, L_SRC] = net.link_src
    li[:, L_DST] = net.link_dst
    li[:, L_REV] = net.link_rev
    li[:, L_DELAY_PS] = np.round(net.link_delay_ns * PS_PER_NS).astype(np.int64)
    li[:, L_HEADROOM] = [
        spec.pfc.headroom_bytes
        if spec.pfc.headroom_bytes is not None
        else headroom_bytes(float(net.link_speed_gbps[i]), float(net.link_delay_ns[i]), frame)
        for i in range(n_links)
    ]
    li[:, L_CREDIT_INIT] = [
        spec.credit.vl_buffer_bytes
        if spec.credit.vl_buffer_bytes is not None
        else vl_buffer_bytes(float(net.link_speed_gbps[i]), float(net.link_delay_ns[i]), frame)
        for i in range(n_links)
    ]
    li[:, L_STALL_SINCE] = -1
    lf = np.zeros((n_links, LF_COLS), dtype=np.float64)
    speed = np.maximum(net.link_speed_gbps, 1e-9)
    lf[:, LF_PS_PER_BYTE] = BITS_PER_BYTE * PS_PER_NS / speed
    lf[:, LF_SPEED_BPS] = net.link_speed_gbps * GBPS
    lc = np.zeros((n_links, classes, LC_FIELDS), dtype=np.int64)
    lc[:, :, Q_HEAD] = -1
    lc[:, :, Q_TAIL] = -1
    lc[:, :, Q_WD_SINCE] = -1
    lc[:, :, Q_CREDITS] = li[:, L_CREDIT_INIT][:, None]

    buffer = (
        np.full(net.switches, int(spec.switch_buffer_bytes), dtype=np.int64)
        if spec.switch_buffer_bytes is not None
        else net.switch_buffer_bytes.copy()
    )
    si = np.zeros((net.switches, SI_COLS), dtype=np.int64)
    si[:, S_BUFFER] = buffer
    si[:, S_SHARED] = _switch_shared(net, spec, buffer, li[:, L_HEADROOM], lossless)

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
        hi[host, H_STOP_PS] = _us_ps(at_us)

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
    ooo = spec.routing in ("adaptive", "spray")
    if n_flows:
        fi[:, F_RX_OFFSET] = np.concatenate([[0], np.cumsum(packets)[:-1]])
    ff = np.zeros((n_flows, FF_COLS), dtype=np.float64)
    flow_line = line_bps[src] if n_flows else np.zeros(0)
    for col in (FF_RATE, FF_LINE, FF_DQ_TARGET, FF_HP_REF):
        ff[:, col] = flow_line
    fh = np.zeros((n_flows, FH_FIELDS, max_hops), dtype=np.int64)
    fh[:, FH_PATH, :] = fwd
    fh[:, FH_RPATH, :] = rev

    steps = _step_table(traffic)
    prm_i, prm_f = _params(
        spec, hosts, classes, max_hops, base_rtt_ps, int_bytes, ack_bytes, line_bps
    )
    capacity = max(1024, min(int(packets.sum()) + 4 * n_flows + 1024, 8 * n_links + 8 * n_flows))
    pi, pint, free = packet_table(capacity, max_hops)
    heap, hmeta = event_heap(capacity + 8 * n_links + 4 * n_flows + len(traffic.steps) + 1024)
    cnt = np.zeros(N_COUNTERS, dtype=np.int64)
    cnt[C_FREE] = capacity
    fib_ptr, fib_links = (
        net.next_hops() if ooo else (np.zeros(2, dtype=np.int64), np.zeros(1, dtype=np.int64))
    )
    state = SimState(
        fi=fi,
        ff=ff,
        fh=fh,
        pi=pi,
        pint=pint,
        free=free,
        li=li,
        lf=lf,
        lc=lc,
        hi=hi,
        si=si,
        st=steps[0],
        step_flow_ptr=steps[1],
        step_flows=steps[2],
        step_dep_ptr=steps[3],
        step_dependents=steps[4],
        class_lossless=lossless,
        fib_ptr=fib_ptr.astype(np.int64),
        fib_links=fib_links.astype(np.int64),
        rx_seen=np.zeros(int(packets.sum()) if ooo else 1, dtype=np.int8),
        prm_i=prm_i,
        prm_f=prm_f,
        cnt=cnt,
        heap=heap,
        hmeta=hmeta,
        samples=np.zeros((spec.max_samples, n_links), dtype=np.float32),
        sample_ps=np.zeros(spec.max_samples, dtype=np.int64),
        rng=np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64),
    )
    _first_events(state, traffic, spec)
    return state


def _params(
    spec: PacketSpec,
    hosts: int,
    classes: int,
    max_hops: int,
    base_rtt_ps: int,
    int_bytes: int,
    ack_bytes: int,
    line_bps: NDArray[np.float64],
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    line = float(line_bps.max()) if line_bps.size else 100 * GBPS
    d, h, i, p = spec.dcqcn, spec.hpcc, spec.ibcc, spec.pfc
    ints = {
        PI_HOSTS: hosts,
        PI_CLASSES: classes,
        PI_MAX_HOPS: max_hops,
        PI_FC: _FC[spec.link_flow_control],
        PI_CUT_THROUGH: int(spec.cut_through),
        PI_CUT_BYTES: CUT_THROUGH_BYTES,
        PI_ROUTING: _ROUTE[spec.routing],
        PI_OOO: int(spec.routing in ("adaptive", "spray")),
        PI_ECN_ON: int(spec.ecn.enabled),
        PI_PFC_STATIC_XOFF: p.static_xoff_bytes,
        PI_PFC_RESUME: p.resume_offset_bytes,
        PI_PFC_QUANTA: p.quanta,
        PI_PAUSE_FRAME: PAUSE_FRAME_BYTES,
        PI_NIC_XOFF: p.nic_xoff_bytes,
        PI_CREDIT_BLOCK: spec.credit.block_bytes,
        PI_CC: _CC[spec.congestion_control],
        PI_DQ_ALPHA_PERIOD: max(1, _us_ps(d.dce_tcp_rtt_us)),
        PI_DQ_DEC_PERIOD: _us_ps(d.rate_reduce_monitor_period_us),
        PI_DQ_TIME_RESET: max(1, _us_ps(d.rpg_time_reset_us)),
        PI_DQ_BYTE_RESET: max(1, d.rpg_byte_reset),
        PI_DQ_THRESHOLD: d.rpg_threshold,
        PI_DQ_CNP_INTERVAL: _us_ps(d.min_time_between_cnps_us),
        PI_DQ_CLAMP: int(d.clamp_tgt_rate),
        PI_DQ_CLAMP_AFTER_TIME: int(d.clamp_tgt_rate_after_time_inc),
        PI_HP_MAX_STAGE: h.max_stage,
        PI_HP_T: max(1, base_rtt_ps),
        PI_HP_WIN: math.ceil(base_rtt_ps * line / BITS_PER_BYTE / PS_PER_S),
        PI_HP_INT_BYTES: int_bytes,
        PI_IB_THRESHOLD: i.threshold_bytes or 0,
        PI_IB_MARKING: i.marking_rate,
        PI_IB_INCREASE: i.ccti_increase,
        PI_IB_LIMIT: i.ccti_limit,
        PI_IB_MIN: i.ccti_min,
        PI_IB_TIMER: max(1, _us_ps(i.ccti_timer_us)),
        PI_PAYLOAD: spec.mtu_bytes,
        PI_HEADER: spec.header_bytes,
        PI_ACK_BYTES: ack_bytes,
        PI_CNP_BYTES: spec.header_bytes + CNP_EXTRA_BYTES,
        PI_ACK_INTERVAL: spec.ack_interval,
        PI_RTO: _us_ps(spec.rto_us),
        PI_WINDOW: spec.window_bytes,
        PI_WD_ON: int(p.watchdog),
        PI_WD_DETECT: _us_ps(p.watchdog_detect_us),
        PI_WD_RESTORE: _us_ps(p.watchdog_restore_us),
        PI_WD_POLL: max(1, _us_ps(p.watchdog_poll_us)),
        PI_SAMPLE: max(1, _us_ps(spec.sample_us)),
        PI_STALL_LIMIT: _us_ps(max(spec.stall_limit_us, STALL_RTOS * spec.rto_us)),
        PI_END: min(_us_ps(spec.end_us), int(NEVER_PS)),
    }
    floats = {
        PF_ECN_KMIN: spec.ecn.kmin_bytes,
        PF_ECN_KMAX: spec.ecn.kmax_bytes,
        PF_ECN_PMAX: spec.ecn.pmax,
        PF_PFC_ALPHA: p.alpha,
        PF_LOSSY_ALPHA: spec.lossy_alpha,
        PF_DQ_G: d.g,
        PF_DQ_INIT_ALPHA: d.initial_alpha_value / 1024.0,
        PF_DQ_DEC_DIVISOR: d.decrease_divisor,
        PF_DQ_MIN_DEC: d.rpg_min_dec_fac / 100.0,
        PF_DQ_AI: d.rpg_ai_rate_mbps * MBPS,
        PF_DQ_HAI: d.rpg_hai_rate_mbps * MBPS,
        PF_DQ_MIN_RATE: d.rpg_min_rate_mbps * MBPS,
        PF_HP_ETA: h.eta,
        PF_HP_AI: h.ai_mbps_per_gbps * MBPS * line / GBPS,
        PF_HP_MIN_RATE: h.min_rate_mbps * MBPS,
        PF_IB_IPD_STEP: i.ipd_step,
        PF_IB_THRESHOLD_BUFFERS: i.threshold_vl_buffers,
    }
    prm_i = np.zeros(N_PARAM_I, dtype=np.int64)
    prm_f = np.zeros(N_PARAM_F, dtype=np.float64)
    for k, v in ints.items():
        prm_i[k] = int(v)
    for k, x in floats.items():
        prm_f[k] = float(x)
    return prm_i, prm_f


def _step_table(traffic: Traffic) -> tuple[NDArray[np.int64], ...]:
    """(st, flow_ptr, flows, dep_ptr, dependents) of the traffic's steps."""
    n_steps = len(traffic.steps)
    step = np.asarray(traffic.step, dtype=np.int64)
    order = np.argsort(step, kind="stable").astype(np.int64)
    counts = np.bincount(step, minlength=n_steps)
    flow_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    dependents: list[list[int]] = [[] for _ in range(n_steps)]
    for i, s in enumerate(traffic.steps):
        for d in s.deps:
            dependents[d].append(i)
    dep_ptr = np.concatenate([[0], np.cumsum([len(x) for x in dependents])]).astype(np.int64)
    flat = np.array([d for x in dependents for d in x] or [0], dtype=np.int64)
    st = np.zeros((n_steps, ST_COLS), dtype=np.int64)
    st[:, ST_WAITING] = [len(s.deps) for s in traffic.steps]
    st[:, ST_REMAINING] = counts
    st[:, ST_DELAY_PS] = [_us_ps(s.delay_us) for s in traffic.steps]
    st[:, ST_START_PS] = -1
    st[:, ST_FINISH_PS] = -1
    return st, flow_ptr, order, dep_ptr, flat


def _first_events(s: SimState, traffic: Traffic, spec: PacketSpec) -> None:
    def push(at_ps: int, kind: int, a: int = 0) -> None:
        heap_push(s.heap, s.hmeta, at_ps, int(priority_of(kind)), kind, a, 0, 0)

    for i, step in enumerate(traffic.steps):
        if not step.deps:
            push(_us_ps(step.delay_us), int(EV_STEP_START), i)
    push(0, int(EV_SAMPLE))
    if spec.pfc.watchdog and spec.link_flow_control == "pfc":
        push(_us_ps(spec.pfc.watchdog_poll_us), int(EV_WATCHDOG))


def _grow(state: SimState) -> SimState:
    packets = state.pi.shape[0]
    events = state.heap.shape[0]
    if state.cnt[C_FREE] < 4 * POOL_MARGIN:
        packets *= 2
    if events - state.hmeta[HEAP_SIZE] < 4 * POOL_MARGIN:
        events *= 2
    return grown(state, packets, events)


def run_state(
    state: SimState, progress: Progress | None = None, total_bytes: float = 0.0
) -> tuple[SimState, int]:
    """Run the loop to its end; returns the (possibly grown) state and the RUN_* outcome."""
    while True:
        outcome = int(run_events(state, EVENTS_PER_CHUNK))
        if progress is not None and total_bytes > 0:
            progress(min(1.0, state.cnt[C_DELIVERED_BYTES] / total_bytes))
        if outcome == RUN_GROW:
            state = _grow(state)
        elif outcome != RUN_BUDGET:
            return state, outcome


def simulate_packet(
    network: PacketNetwork,
    traffic: Traffic,
    spec: PacketSpec,
    seed: int = 0,
    progress: Progress | None = None,
    flow_class: NDArray[np.int64] | None = None,
) -> PacketSimResult:
    """Simulate ``traffic`` on ``network`` packet by packet.

    Parameters
    ----------
    network
        Hosts, switches and links (:func:`~fabricplan.sim.packet.network.network_from_graph`
        for a designed fabric).
    traffic
        Flows in steps, the flow level's :class:`~fabricplan.sim.traffic.Traffic`.
    spec
        Mechanisms and settings (:func:`~fabricplan.sim.packet.spec.packet_spec_for`).
    seed
        Seeds the ECMP hashes (as the flow level) and the ECN marking draws.
    progress
        Called between chunks of events with the share of payload delivered.
    flow_class
        Traffic class (1 .. 2) of each flow (default 1).

    Returns
    -------
    PacketSimResult

    Raises
    ------
    ModelError
        FP540-FP543 when the network, traffic or spec cannot be simulated; FP546 when the
        traffic has more than ``spec.max_packets`` packets.
    """
    start = time.perf_counter()
    state = build_state(network, traffic, spec, seed, flow_class)
    total = float(np.sum(np.maximum(np.ceil(traffic.size_bytes), 1)))
    state, outcome = run_state(state, progress, total)
    wall = time.perf_counter() - start
    return _result(network, traffic, spec, seed, state, _STATUS.get(outcome, "end"), wall)


def _us(values_ps: NDArray[np.int64]) -> NDArray[np.float64]:
    out = values_ps.astype(np.float64) / PS_PER_US
    out[values_ps < 0] = np.nan
    return out


def _result(
    network: PacketNetwork,
    traffic: Traffic,
    spec: PacketSpec,
    seed: int,
    s: SimState,
    status: str,
    wall_s: float,
) -> PacketSimResult:
    now = int(s.hmeta[HEAP_NOW])
    li = s.li
    stall = li[:, L_STALL_PS].copy()
    open_stall = li[:, L_STALL_SINCE] >= 0
    stall[open_stall] += now - li[open_stall, L_STALL_SINCE]
    c = s.cnt
    k = int(c[C_SAMPLES])
    counters = {
        "events": int(c[C_EVENTS]),
        "drops": int(c[C_DROPS]),
        "retransmits": int(c[C_RETX]),
        "pause_frames": int(c[C_PAUSES]),
        "timeouts": int(c[C_TIMEOUTS]),
        "stalls": int(c[C_STALLS]),
        "watchdog_triggers": int(c[C_WD_TRIGGERS]),
        "cnps": int(c[C_CNPS]),
        "ecn_marks": int(c[C_ECN_MARKS]),
        "lossless_drops": int(c[C_LOSSLESS_DROPS]),
        "delivered_bytes": int(c[C_DELIVERED_BYTES]),
    }
    fi = s.fi
    return PacketSimResult(
        network=network,
        traffic=traffic,
        spec=spec,
        seed=seed,
        status=status,
        start_us=_us(fi[:, F_START_PS]),
        finish_us=_us(fi[:, F_FINISH_PS]),
        acked_us=_us(fi[:, F_ACKED_PS]),
        retransmits=fi[:, F_RETX].copy(),
        timeouts=fi[:, F_TIMEOUTS].copy(),
        sent_packets=fi[:, F_SENT].copy(),
        packets=fi[:, F_PACKETS].copy(),
        ooo_discards=fi[:, F_OOO].copy(),
        duplicates=fi[:, F_DUPS].copy(),
        step_start_us=_us(s.st[:, ST_START_PS]),
        step_finish_us=_us(s.st[:, ST_FINISH_PS]),
        link_tx_bytes=li[:, L_TX_BYTES].copy(),
        link_stall_us=stall / PS_PER_US,
        link_stalls=li[:, L_STALL_EVENTS].copy(),
        link_pause_frames=li[:, L_PAUSE_FRAMES].copy(),
        link_drops=li[:, L_DROPS].copy(),
        link_max_queue_bytes=li[:, L_MAX_Q].copy(),
        switch_max_bytes=s.si[:, S_MAX_USED].copy(),
        switch_buffer_bytes=s.si[:, S_BUFFER].copy(),
        sample_us=s.sample_ps[:k] / PS_PER_US,
        queue_samples=s.samples[:k].copy(),
        counters=counters,
        end_us=now / PS_PER_US,
        wall_s=wall_s,
    )
