"""The packet backend: the designed fabric and the catalog's mechanisms, packet by packet.

:func:`packet_network_for` and :func:`packet_spec_for_design` turn a scenario's designed fabric
into what :func:`~fabricplan.sim.packet.simulation.simulate_packet` runs (switch buffer from
the catalog, or :data:`DEFAULT_SWITCH_BUFFER_BYTES` when the catalog has none).

:func:`packet_performance` is the simulated-backend template
(:mod:`fabricplan.sim.performance`) with the packet level giving the fabric time: it runs
:data:`PACKET_SIZES_SIMULATED` sizes per collective, each made small enough that the run moves
at most :data:`PACKET_BYTE_BUDGET` bytes, and all_to_alls of up to :data:`PACKET_MAX_FLOWS`
flows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, PerformanceResult, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.mechanism import RoutingName
from fabricplan.sim.packet.network import PacketNetwork, network_from_graph
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import Progress, simulate_packet
from fabricplan.sim.packet.spec import (
    PacketCongestionControl,
    PacketSpec,
    packet_spec_for,
)
from fabricplan.sim.pattern import RING, FabricShape, collective_traffic
from fabricplan.sim.performance import FabricRun, fabric_span_us, simulated_performance
from fabricplan.sim.traffic import GpuLayout, IntArray, Traffic
from fabricplan.topology.graph import FabricGraph, fabric_graph
from fabricplan.topology.routing import route
from fabricplan.units import ns_to_us

DEFAULT_SWITCH_BUFFER_BYTES = 32 * 2**20
"""Switch buffer when the catalog gives none (NVIDIA publishes none for Quantum InfiniBand
switches; credits, not the shared buffer, bound an IB switch's queues). 32 MiB is the HPCC
simulator's ``BUFFER_SIZE`` at 100 Gb/s (run.py: 16 MB per 50 Gb/s)."""
PACKET_MAX_HOSTS = 4096
"""Largest fabric (host ports) the packet backend simulates; the packet level is meant for a
few hundred hosts, its yardstick runs 1,024 (benchmarks/packet_yardstick.py)."""
PACKET_BYTE_BUDGET = 2 * 2**30
"""Bytes one simulated collective may move (about 0.5 M packets of 4 KiB)."""
PACKET_SIZES_SIMULATED = 2
"""Sizes simulated per collective (the smallest and the largest of at least 1 MiB)."""
PACKET_MAX_FLOWS = 2**16
"""Largest all_to_all simulated (flows); a larger one runs on the first GPUs that fit."""


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
    """A designed graph with the technology's switch buffer; on a scheduled fabric the links
    that leave a spine carry its fabric element's forwarding latency (catalog) instead of the
    leaf switch's (:func:`with_spine_latency`).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["ddc"]}})
    >>> graph = fabric_graph(design_fabric(valid, "ddc"), valid)
    >>> net = network_for_graph(graph, valid, "ddc")
    >>> leaf_ns = valid.switches["ddc"].latency_ns.value
    >>> element_ns = valid.fabric_elements["ddc"].latency_ns.value
    >>> shift = net.link_delay_ns - network_from_graph(graph, 1.0).link_delay_ns
    >>> sorted({round(float(x), 6) for x in shift}) == sorted({0.0, element_ns - leaf_ns})
    True
    """
    buffer = valid.switches[technology].buffer_bytes
    net = network_from_graph(
        graph, buffer.value if buffer is not None else DEFAULT_SWITCH_BUFFER_BYTES
    )
    element = valid.fabric_elements.get(technology)
    if element is None:
        return net
    leaf_ns = valid.switches[technology].latency_ns.value
    return with_spine_latency(net, graph, element.latency_ns.value - leaf_ns)


def with_spine_latency(net: PacketNetwork, graph: FabricGraph, extra_ns: float) -> PacketNetwork:
    """``net`` with ``extra_ns`` more delay on every link that leaves a spine of ``graph``
    (the graph gives every switch the leaf's forwarding latency; a scheduled fabric's spine is
    a fabric element with its own)."""
    first = graph.hosts + graph.leaves
    leaving = (net.link_src >= first) & (net.link_src < first + graph.spines)
    delay = net.link_delay_ns.copy()
    delay[leaving] += extra_ns
    return replace(net, link_delay_ns=delay, _cache={})


def packet_spec_for_design(
    valid: ValidScenario,
    technology: TechnologyName,
    routing: RoutingName | None = None,
    congestion_control: PacketCongestionControl | None = None,
) -> PacketSpec:
    """The mechanisms of ``technology`` on the scenario's switch, with optional overrides, and
    the spec's link errors (``fabric.frame_error_ratio``) on every link.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["uec"],
    ...     "uec": {"link_level_retry": True}, "frame_error_ratio": 1e-6}})
    >>> spec = packet_spec_for_design(valid, "uec")
    >>> spec.link_level_retry, spec.faults.frame_error_ratio
    (True, 1e-06)
    """
    spec = packet_spec_for(
        valid.technologies[technology],
        valid.switches[technology],
        routing=routing,
        congestion_control=congestion_control,
    )
    errors = valid.spec.fabric.frame_error_ratio
    if errors == 0.0:
        return spec
    return replace(spec, faults=replace(spec.faults, frame_error_ratio=errors))


def _within_budget(
    op: CollectiveName,
    layout: GpuLayout,
    size: int,
    ranks: IntArray,
    qps: int = 1,
    shape: FabricShape = RING,
) -> tuple[int, Traffic]:
    """The size actually simulated (at most ``size``) and its traffic."""
    traffic = collective_traffic(op, layout, size, ranks, qps, shape)
    total = traffic.total_bytes
    if total <= PACKET_BYTE_BUDGET:
        return size, traffic
    smaller = max(1, int(size * PACKET_BYTE_BUDGET / total))
    return smaller, collective_traffic(op, layout, smaller, ranks, qps, shape)


def with_lossless_settings(spec: PacketSpec, valid: ValidScenario) -> PacketSpec:
    """``spec`` with the scenario's deployed lossless configuration (``fabric.lossless``) where
    the technology runs PFC: PFC off, ECN off, DCQCN off, a fixed headroom, the watchdog."""
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


def _flow_latency_us(result: PacketSimResult) -> NDArray[np.float64]:
    """One-way wire latency of each flow's D-mod-K path (every equal-cost path is as long);
    zeros on a named network without a designed graph."""
    graph = result.network.graph
    traffic = result.traffic
    if graph is None or traffic.flows == 0:
        return np.zeros(traffic.flows)
    path = route(graph, traffic.src, traffic.dst, "dmodk")
    delay = np.append(result.network.link_delay_ns, 0.0)
    return np.asarray(delay[path].sum(axis=1), dtype=np.float64) * ns_to_us(1.0)


def fabric_time_us(result: PacketSimResult) -> float:
    """The run's fabric time (:func:`~fabricplan.sim.performance.fabric_span_us`).

    Raises
    ------
    ModelError
        FP545 when the run did not complete.
    """
    if not math.isfinite(result.completion_us):
        raise ModelError(
            "FP545",
            "packet backend",
            "the collective did not complete",
            result.status,
            "report the scenario (the packet run stalled)",
        )
    return fabric_span_us(result.traffic, result.finish_us, _flow_latency_us(result))


@dataclass(frozen=True, eq=False)
class PacketLevel:
    """The packet level as the template sees it: one network, one spec."""

    network: PacketNetwork
    spec: PacketSpec
    progress: Progress | None = None
    name: str = "packet"
    sizes_simulated: int = PACKET_SIZES_SIMULATED
    max_all_to_all_flows: int = PACKET_MAX_FLOWS
    qps: int = 1
    """Queue pairs per connection (``nccl.qps_per_connection``), each its own hashed flow."""

    @property
    def default_seeds(self) -> int:
        """One run per point: a packet run costs seconds; ``PerfRequest.seeds`` asks for more."""
        return 1

    @property
    def mechanisms(self) -> str:
        s = self.spec
        return (
            f"{s.routing} routing, {s.link_flow_control} link flow control,"
            f" {s.congestion_control} congestion control"
        )

    def fabric_run(
        self,
        op: CollectiveName,
        layout: GpuLayout,
        size_bytes: int,
        ranks: IntArray,
        seed: int,
        shape: FabricShape = RING,
    ) -> FabricRun:
        simulated, traffic = _within_budget(op, layout, size_bytes, ranks, self.qps, shape)
        if traffic.flows == 0:
            return FabricRun(simulated, 0.0)
        result = simulate_packet(
            self.network, traffic, self.spec, seed=seed, progress=self.progress
        )
        return FabricRun(
            simulated,
            fabric_time_us(result),
            f"{op} ({shape.label}) simulated at {simulated} B ({result.events} events)",
        )


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
    ('packet', 'packet/Tree/LL128', True)
    """
    tech = design.technology
    routing = request.routing.get(tech) or valid.spec.fabric.routing.get(tech)
    spec = with_lossless_settings(packet_spec_for_design(valid, tech, routing=routing), valid)
    qps = valid.spec.nccl.qps_per_connection or 1
    level = PacketLevel(packet_network_for(valid, design), spec, progress, qps=qps)
    return simulated_performance(valid, design, request, level)
