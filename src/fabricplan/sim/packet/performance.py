"""The packet backend: the designed fabric and the catalog's mechanisms, packet by packet.

:func:`packet_network_for` and :func:`packet_spec_for_design` turn a scenario's designed fabric
into what :func:`~fabricplan.sim.packet.simulation.simulate_packet` runs (switch buffer from
the catalog, or :data:`DEFAULT_SWITCH_BUFFER_BYTES` when the catalog has none).

:func:`packet_performance` answers the performance seam as the flow backend does: a
collective's time is ``alpha + fabric``, ``alpha`` the analytic model's time at 8 bytes, and
``fabric`` the simulated completion of its flows less the wire latency the analytic ``alpha``
already counts. The simulator runs at one or two sizes per collective (the requested sizes of
at least 1 MiB, thinned, each made small enough that the run moves at most
:data:`PACKET_BYTE_BUDGET` bytes); other sizes scale the nearest simulated one linearly. The
perftest tables, base latency and training step are the analytic model's.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from fabricplan.analytic.performance import analytic_performance
from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, CollectivePoint, PerformanceResult, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.flow.pattern import collective_traffic
from fabricplan.sim.flow.performance import all_to_all_ranks, simulated_point
from fabricplan.sim.flow.traffic import GpuLayout, Traffic
from fabricplan.sim.packet.network import PacketNetwork, network_from_graph
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import Progress, simulate_packet
from fabricplan.sim.packet.spec import (
    PacketCongestionControl,
    PacketRouting,
    PacketSpec,
    packet_spec_for,
)
from fabricplan.topology.graph import FabricGraph, fabric_graph, route
from fabricplan.units import ns_to_us

DEFAULT_SWITCH_BUFFER_BYTES = 32 * 2**20
"""Switch buffer when the catalog gives none (NVIDIA publishes none for Quantum InfiniBand
switches; credits, not the shared buffer, bound an IB switch's queues). 32 MiB is the HPCC
simulator's ``BUFFER_SIZE`` at 100 Gb/s (run.py: 16 MB per 50 Gb/s)."""
PACKET_MAX_HOSTS = 4096
"""Largest fabric (host ports) the packet backend simulates; the issue's scale is a few
hundred hosts, the yardstick 1,024."""
PACKET_BYTE_BUDGET = 2 * 2**30
"""Bytes one simulated collective may move (about 0.5 M packets of 4 KiB)."""
PACKET_MIN_SIZE_BYTES = 2**20
PACKET_SIZES_SIMULATED = 2
PACKET_MAX_FLOWS = 2**16
"""Largest all_to_all simulated (flows); a larger one runs on the first GPUs that fit."""
ALPHA_SIZE_BYTES = 8


def packet_network_for(valid: ValidScenario, design: FabricDesign) -> PacketNetwork:
    """The packet view of a scenario's designed fabric.

    Raises
    ------
    ModelError
        FP544 when the fabric has more host ports than :data:`PACKET_MAX_HOSTS`.
    """
    graph = fabric_graph(design, valid)
    check_size(graph)
    return network_for_graph(graph, valid, design.technology)


def check_size(graph: FabricGraph) -> None:
    """Raise FP544 when ``graph`` has more host ports than :data:`PACKET_MAX_HOSTS`."""
    if graph.hosts > PACKET_MAX_HOSTS:
        raise ModelError(
            "FP544",
            "packet backend",
            "fabric too large to simulate packet by packet",
            f"{graph.hosts} host ports",
            f"use --backend flow, or at most {PACKET_MAX_HOSTS} host ports (fewer GPUs or NICs)",
        )


def network_for_graph(
    graph: FabricGraph, valid: ValidScenario, technology: TechnologyName
) -> PacketNetwork:
    """A designed graph with the technology's switch buffer."""
    buffer = valid.switches[technology].buffer_bytes
    return network_from_graph(
        graph, buffer.value if buffer is not None else DEFAULT_SWITCH_BUFFER_BYTES
    )


def packet_spec_for_design(
    valid: ValidScenario,
    technology: TechnologyName,
    routing: PacketRouting | None = None,
    congestion_control: PacketCongestionControl | None = None,
) -> PacketSpec:
    """The mechanisms of ``technology`` on the scenario's switch, with optional overrides."""
    return packet_spec_for(
        valid.technologies[technology],
        valid.switches[technology],
        routing=routing,
        congestion_control=congestion_control,
    )


def simulated_sizes(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The requested sizes of at least 1 MiB, thinned to the smallest and the largest.

    >>> simulated_sizes((2**10, 2**21, 2**25, 2**33))
    (2097152, 8589934592)
    >>> simulated_sizes((4096,))
    (4096,)
    """
    big = sorted({s for s in sizes if s >= PACKET_MIN_SIZE_BYTES})
    if not big:
        return (max(sizes),)
    return tuple(sorted({big[0], big[-1]}))[:PACKET_SIZES_SIMULATED]


def _within_budget(
    op: CollectiveName, layout: GpuLayout, size: int, ranks: np.ndarray, qps: int = 1
) -> tuple[int, Traffic]:
    """The size actually simulated (at most ``size``) and its traffic."""
    traffic = collective_traffic(op, layout, size, ranks, qps)
    total = traffic.total_bytes
    if total <= PACKET_BYTE_BUDGET:
        return size, traffic
    smaller = max(1, int(size * PACKET_BYTE_BUDGET / total))
    return smaller, collective_traffic(op, layout, smaller, ranks, qps)


def with_lossless_settings(spec: PacketSpec, valid: ValidScenario) -> PacketSpec:
    """``spec`` with the spec's deployed lossless configuration (``fabric.lossless``) where the
    technology runs PFC: PFC off, ECN off, DCQCN off, a fixed headroom, the watchdog."""
    lossless = valid.spec.fabric.lossless
    if spec.link_flow_control != "pfc":
        return spec
    headroom = None if lossless.pfc_headroom_bytes == "auto" else lossless.pfc_headroom_bytes
    cc_off = lossless.congestion_control == "none"
    return replace(
        spec,
        link_flow_control="pfc" if lossless.pfc else "none",
        congestion_control="none" if cc_off else spec.congestion_control,
        ecn=replace(spec.ecn, enabled=spec.ecn.enabled and lossless.ecn and not cc_off),
        pfc=replace(spec.pfc, headroom_bytes=headroom, watchdog=lossless.pfc_watchdog),
    )


def _chain_length(traffic: Traffic) -> int:
    """Steps on the longest dependency chain (each pays the path latency once)."""
    depth: list[int] = []
    for step in traffic.steps:  # dependencies come before their dependents
        depth.append(1 + max((depth[d] for d in step.deps), default=0))
    return max(depth, default=0)


def fabric_time_us(result: PacketSimResult) -> float:
    """Completion less the one-way wire latency of every step on the longest chain (the
    analytic ``alpha`` already counts it).

    Raises
    ------
    ModelError
        FP545 when the run did not complete.
    """
    span = result.completion_us
    if not math.isfinite(span):
        raise ModelError(
            "FP545",
            "packet backend",
            "the collective did not complete",
            result.status,
            "report the scenario (the packet run stalled)",
        )
    graph = result.network.graph
    latency_us = 0.0
    if graph is not None and result.traffic.flows:
        path = route(graph, result.traffic.src[:1], result.traffic.dst[:1], "dmodk")
        delay = np.append(result.network.link_delay_ns, 0.0)
        latency_us = ns_to_us(float(delay[path].sum()))
    return max(0.0, span - latency_us * _chain_length(result.traffic))


def packet_performance(
    valid: ValidScenario,
    design: FabricDesign,
    request: PerfRequest,
    progress: Progress | None = None,
) -> PerformanceResult:
    """nccl-tests-like tables from the packet-level simulator (see the module docstring).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": ["roce_v2"]}})
    >>> r = packet_performance(valid, design_fabric(valid, "roce_v2"), PerfRequest(
    ...     collectives=("all_reduce",), sizes_bytes=(2**20,), p2p=False, step=False))
    >>> r.backend, r.collectives[0].algorithm, bool(r.collectives[0].busbw_GBps > 0)
    ('packet', 'packet/ring', True)
    """
    cluster = valid.spec.cluster
    tech = design.technology
    routing = request.routing.get(tech) or valid.spec.fabric.routing.get(tech)
    spec = with_lossless_settings(packet_spec_for_design(valid, tech, routing=routing), valid)
    qps = valid.spec.nccl.qps_per_connection or 1
    network = packet_network_for(valid, design)
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    gpus = request.gpus or cluster.gpus
    analytic = analytic_performance(valid, design, request)
    alpha_points = analytic_performance(
        valid,
        design,
        request.model_copy(
            update={"sizes_bytes": (ALPHA_SIZE_BYTES,), "p2p": False, "step": False}
        ),
    ).collectives
    alpha_us = {p.collective: p.time_us for p in alpha_points}
    sims = simulated_sizes(request.sizes_bytes)
    notes = [
        f"packet: {spec.routing} routing, {spec.link_flow_control} link flow control,"
        f" {spec.congestion_control} congestion control; seed {request.seed}",
        "packet: perftest tables, base latency and the training step are the analytic model's",
    ]
    points: list[CollectivePoint] = []
    for op in request.collectives:
        ranks_n = (
            all_to_all_ranks(gpus, cluster.gpus_per_node, PACKET_MAX_FLOWS)
            if op == "all_to_all"
            else gpus
        )
        if ranks_n < gpus:
            notes.append(f"packet: all_to_all simulated on the first {ranks_n} GPUs")
        ranks = np.arange(ranks_n, dtype=np.int64)
        per_byte_us: dict[int, float] = {}
        for size in sims:
            simulated, traffic = _within_budget(op, layout, size, ranks, qps)
            if traffic.flows == 0:
                per_byte_us[size] = 0.0
                continue
            result = simulate_packet(network, traffic, spec, seed=request.seed, progress=progress)
            per_byte_us[size] = fabric_time_us(result) / simulated
            notes.append(f"packet: {op} simulated at {simulated} B ({result.events} events)")
        for size in request.sizes_bytes:
            nearest = min(sims, key=lambda s: abs(math.log(s) - math.log(size)))
            points.append(
                simulated_point(
                    op, size, gpus, alpha_us.get(op, 0.0), per_byte_us[nearest] * size, "packet"
                )
            )
    return PerformanceResult(
        backend="packet",
        technology=tech,
        base_latency_us=analytic.base_latency_us,
        p2p=analytic.p2p,
        collectives=tuple(points),
        step=analytic.step,
        notes=(*notes, *analytic.notes),
    )
