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

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.memory import available_memory_bytes
from fabricplan.sim.packet.engine import HEAP_SIZE, event_heap, heap_push
from fabricplan.sim.packet.event import EV_SAMPLE, EV_STEP_START, EV_WATCHDOG, priority_of
from fabricplan.sim.packet.forwarding import ForwardingTable
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
from fabricplan.sim.packet.link import link_tables
from fabricplan.sim.packet.network import PacketNetwork, flow_paths
from fabricplan.sim.packet.receiver import placement_tables
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.sender import flow_tables, host_table
from fabricplan.sim.packet.spec import (
    ACK_EXTRA_BYTES,
    CONGESTION_CONTROL_CODE,
    DATA_CLASSES,
    PacketSpec,
)
from fabricplan.sim.packet.state import (
    C_DELIVERED_BYTES,
    C_FREE,
    CC_HPCC,
    L_HEADROOM,
    LF_FRAME_ERROR,
    N_COUNTERS,
    PI_FRAME_ERRORS,
    PI_ROUTE_SALT,
    SimState,
    event_slots,
    grown,
    packet_pool_slots,
    packet_table,
    run_state_bytes,
)
from fabricplan.sim.packet.step import step_tables
from fabricplan.sim.packet.switch import switch_table
from fabricplan.sim.packet.voq import reassembly_table
from fabricplan.sim.path import PINNED_ROUTINGS, base_rtt_ns
from fabricplan.sim.traffic import Traffic
from fabricplan.units import BPS_PER_GBPS, ns_to_ps, us_to_ps

Progress = Callable[[float], None]
"""Called between chunks of events with the share of payload bytes delivered so far."""

ROUTE_SALT_MODULUS = 1 << 62
"""The run's seed, reduced to a non-negative int64, salts the flowlet path hash."""
EVENTS_PER_CHUNK = 1_000_000
"""Events per call into the compiled loop (between two progress reports)."""
_STATUS = {
    int(RUN_DONE): "done",
    int(RUN_STALLED): "stalled",
    int(RUN_END): "end",
    int(RUN_IDLE): "idle",
}


def _check_network(net: PacketNetwork) -> None:
    if net.hosts < 1 or (net.host_up_link < 0).any() or (net.host_down_link < 0).any():
        raise ModelError(
            "FP540",
            "packet network",
            "a host has no link to a switch",
            net.name,
            "give every host one link up and one link down",
        )


def _flow_classes(flow_class: NDArray[np.int64] | None, n_flows: int) -> NDArray[np.int64]:
    """Each flow's data class (1 by default).

    Raises
    ------
    ModelError
        FP541 when a class is not a data class.
    """
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
    return cls


def _check_traffic(
    traffic: Traffic, hosts: int, packets: NDArray[np.int64], spec: PacketSpec
) -> None:
    src, dst = traffic.src, traffic.dst
    if traffic.flows and (src.max() >= hosts or dst.max() >= hosts or (src == dst).any()):
        raise ModelError(
            "FP543",
            "packet traffic",
            "a flow's ends are not two hosts of the network",
            f"{hosts} hosts",
            "use host ports 0 .. hosts-1, src != dst",
        )
    if int(packets.sum()) > spec.max_packets:
        raise ModelError(
            "FP546",
            "packet traffic",
            "too many packets to simulate one by one",
            f"{int(packets.sum()):,} packets of {spec.mtu_bytes} B",
            f"use a smaller --size (at most {spec.max_packets:,} packets) or --backend flow",
        )


def _gib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB" if n < 2**30 else f"{n / 2**30:,.1f} GiB"


def check_state_memory(need: dict[str, int], limit_bytes: int | None, limit_source: str) -> None:
    """FP660 when a run's tables (:func:`~fabricplan.sim.packet.state.run_state_bytes`) would
    take more than ``limit_bytes``, before any of them is allocated (no check for ``None``).

    >>> check_state_memory({"queue samples": 2**30}, 2 * 2**30, "--max-memory")
    >>> need = {"queue samples": 3 * 2**30, "packet pool": 2**29}
    >>> try:
    ...     check_state_memory(need, 2**31, "--max-memory")
    ... except ModelError as refused:
    ...     print(refused.code, str(refused).split(" (")[0])
    FP660 packet run: its tables need at least 3.5 GiB
    """
    total = sum(need.values())
    if limit_bytes is None or total <= limit_bytes:
        return
    largest = sorted(need.items(), key=lambda item: -item[1])[:2]
    parts = ", ".join(f"{name} {_gib(size)}" for name, size in largest if size)
    raise ModelError(
        "FP660",
        "packet run",
        f"its tables need at least {_gib(total)} ({parts}), more than {_gib(limit_bytes)}"
        f" ({limit_source})",
        None,
        "sample fewer links or fewer times (PacketSpec.probe_links, max_samples), simulate"
        " fewer hosts, or use --backend flow",
    )


def build_state(
    net: PacketNetwork,
    traffic: Traffic,
    spec: PacketSpec,
    seed: int,
    flow_class: NDArray[np.int64] | None = None,
    max_memory_bytes: int | None = None,
) -> SimState:
    """The tables of one run, with its first events scheduled.

    Each table comes from the component that owns it; paths and the base RTT from the shared
    floor (:mod:`fabricplan.sim.path`), as the flow level routes. Before any table is allocated
    their bytes are estimated (:func:`~fabricplan.sim.packet.state.run_state_bytes`) and a run
    that needs more than ``max_memory_bytes`` (``None``: the memory the machine has available)
    is refused with FP660.
    """
    spec.check()
    _check_network(net)
    classes = DATA_CLASSES + 1
    n_links, hosts, n_flows = net.links, net.hosts, traffic.flows
    src = np.asarray(traffic.src, dtype=np.int64)
    dst = np.asarray(traffic.dst, dtype=np.int64)
    size = traffic.whole_bytes()
    packets = traffic.packet_counts(spec.mtu_bytes)
    _check_traffic(traffic, hosts, packets, spec)
    cls = _flow_classes(flow_class, n_flows)
    fwd, rev = flow_paths(net, spec.routing, src, dst, seed)
    max_hops = int(fwd.shape[1])
    probes = _probe_links(spec, n_links)
    total_packets = int(packets.sum())
    cc = CONGESTION_CONTROL_CODE[spec.congestion_control]
    int_hops = max_hops if cc == CC_HPCC else 0  # INT records: written and read by HPCC only
    need = run_state_bytes(
        n_links,
        n_flows,
        total_packets,
        max_hops,
        classes,
        probes.size,
        spec.max_samples,
        total_packets if spec.receiver != "in_order" else 1,
        total_packets if spec.receiver == "out_of_order" else 1,
        int_hops,
    )
    if max_memory_bytes is None:
        limit, source = available_memory_bytes(), "the memory this machine has available"
    else:
        limit, source = max_memory_bytes, "max_memory_bytes"
    check_state_memory(need, limit, source)
    int_bytes = INT_HEADER_BYTES + INT_BYTES_PER_HOP * max(max_hops - 1, 1)
    int_extra = int_bytes if cc == CC_HPCC else 0
    frame = spec.mtu_bytes + spec.header_bytes + int_extra
    ack_bytes = spec.header_bytes + ACK_EXTRA_BYTES
    rtt_ns = base_rtt_ns(
        net.link_delay_ns, net.link_speed_gbps, fwd, rev, frame, ack_bytes + int_extra
    )
    base_rtt_ps = max(ns_to_ps(rtt_ns), 1)
    line_bps = net.link_speed_gbps[net.host_up_link] * BPS_PER_GBPS
    lossless = np.zeros(classes, dtype=np.int64)
    if spec.lossless:
        lossless[list(spec.lossless_classes)] = 1

    li, lf, lc = link_tables(net, spec, frame, classes)
    si = switch_table(net, spec, li[:, L_HEADROOM], lossless)
    hi = host_table(net, spec)
    flow_line = line_bps[src] if n_flows else np.zeros(0)
    fi, ff, fh = flow_tables(traffic, size, packets, cls, spec.mtu_bytes, flow_line, fwd, rev)
    rx_seen, tx_state = placement_tables(spec, int(packets.sum()))
    steps = step_tables(traffic)
    prm_i, prm_f = spec.pack(hosts, classes, max_hops, base_rtt_ps, int_bytes, ack_bytes, line_bps)
    prm_i[PI_ROUTE_SALT] = seed % ROUTE_SALT_MODULUS
    prm_i[PI_FRAME_ERRORS] = int((lf[:, LF_FRAME_ERROR] > 0).any())
    slots = packet_pool_slots(int(packets.sum()), n_flows, n_links)
    pi, pint, free = packet_table(slots, int_hops)
    heap, hmeta = event_heap(event_slots(slots, n_flows, n_links, len(traffic.steps)))
    cnt = np.zeros(N_COUNTERS, dtype=np.int64)
    cnt[C_FREE] = slots
    per_packet = spec.routing not in PINNED_ROUTINGS
    fib = net.forwarding() if per_packet else _NO_FORWARDING
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
        fib_ptr=fib.ptr,
        fib_links=fib.links,
        fib_group=fib.group,
        fib_dest=fib.dest_row,
        rx_seen=rx_seen,
        tx_state=tx_state,
        eg_held=reassembly_table(spec.egress_reassembly, int(packets.sum())),
        prm_i=prm_i,
        prm_f=prm_f,
        cnt=cnt,
        heap=heap,
        hmeta=hmeta,
        samples=np.zeros((spec.max_samples, probes.size), dtype=np.float32),
        sample_ps=np.zeros(spec.max_samples, dtype=np.int64),
        probe_links=probes,
        rng=np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64),
    )
    _first_events(state, traffic, spec)
    return state


_NO_FORWARDING = ForwardingTable(
    dest_row=np.zeros(1, dtype=np.int64),
    group=np.zeros((1, 1), dtype=np.int64),
    ptr=np.zeros(2, dtype=np.int64),
    links=np.zeros(1, dtype=np.int64),
)
"""Pinned routing reads no forwarding table (the path is the flow's)."""


def _probe_links(spec: PacketSpec, n_links: int) -> NDArray[np.int64]:
    """The links the spec asks to sample (every link by default).

    Raises
    ------
    ModelError
        FP541 when a probe names no link of the network.
    """
    if spec.probe_links is None:
        return np.arange(n_links, dtype=np.int64)
    probes = np.asarray(spec.probe_links, dtype=np.int64)
    if probes.size and (probes.min() < 0 or probes.max() >= n_links):
        raise ModelError(
            "FP541",
            "packet spec probe_links",
            "names no link of the network",
            spec.probe_links,
            f"use links 0 .. {n_links - 1}",
        )
    return probes


def _first_events(s: SimState, traffic: Traffic, spec: PacketSpec) -> None:
    def push(at_ps: int, kind: int, a: int = 0) -> None:
        heap_push(s.heap, s.hmeta, at_ps, int(priority_of(kind)), kind, a, 0, 0)

    for i, step in enumerate(traffic.steps):
        if not step.deps:
            push(us_to_ps(step.delay_us), int(EV_STEP_START), i)
    push(0, int(EV_SAMPLE))
    if spec.pfc.watchdog and spec.link_flow_control == "pfc":
        push(us_to_ps(spec.pfc.watchdog_poll_us), int(EV_WATCHDOG))


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
    max_memory_bytes: int | None = None,
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
    max_memory_bytes
        Largest memory the run's tables may take (``None``: what the machine has available).

    Returns
    -------
    PacketSimResult

    Raises
    ------
    ModelError
        FP540-FP543 when the network, traffic or spec cannot be simulated; FP546 when the
        traffic has more than ``spec.max_packets`` packets; FP660 when the run's tables would
        take more than ``max_memory_bytes`` (checked before any is allocated).
    """
    start = time.perf_counter()
    state = build_state(network, traffic, spec, seed, flow_class, max_memory_bytes)
    total = float(traffic.whole_bytes().sum())
    state, outcome = run_state(state, progress, total)
    wall = time.perf_counter() - start
    status = _STATUS.get(outcome, "end")
    return PacketSimResult.from_state(network, traffic, spec, seed, state, status, wall)
