"""The flow backend: the simulated-backend template (:mod:`fabricplan.sim.performance`) with the
flow-level simulator giving each collective's fabric time.

The flow level runs :data:`FLOW_SIZES_SIMULATED` sizes per collective and all_to_alls of up to
:data:`FLOW_MAX_FLOWS` flows; the fabric time is :func:`~fabricplan.sim.performance.
fabric_span_us` of the fluid run (the fluid model's per-flow path latency taken off).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.transport import (
    RoutingName,
    TransportSpec,
    transport_for,
    with_go_back_n,
)
from fabricplan.sim.pattern import RING, FabricShape, collective_traffic
from fabricplan.sim.performance import FabricRun, fabric_span_us, simulated_performance
from fabricplan.sim.traffic import GpuLayout, IntArray
from fabricplan.topology.graph import FabricGraph, fabric_graph

__all__ = [
    "FLOW_MAX_FLOWS",
    "FLOW_SIZES_SIMULATED",
    "FlowLevel",
    "flow_performance",
]

FLOW_SIZES_SIMULATED = 3
"""Sizes simulated per collective (the smallest, the largest and one between, log-spaced)."""
FLOW_MAX_FLOWS = 2**21
"""Largest all_to_all simulated (about 2 M flows, 1,448 GPUs); a larger one runs on the
first GPUs that fit and says so in the notes."""


FLOW_ECMP_SEEDS = 3
"""Runs per point at the flow level under ECMP: enough to show the spread of the hash draw at a
flow solve's cost (the value stays the first run's)."""


@dataclass(frozen=True, eq=False)
class FlowLevel:
    """The flow level as the template sees it: one graph, one transport."""

    graph: FabricGraph
    transport: TransportSpec
    name: str = "flow"
    sizes_simulated: int = FLOW_SIZES_SIMULATED
    max_all_to_all_flows: int = FLOW_MAX_FLOWS
    qps: int = 1
    """Queue pairs per connection (``nccl.qps_per_connection``), each its own hashed flow."""
    frame_bytes: float = 0.0
    """Wire bytes of a full packet; when given, each run pays the go-back-N of its own traffic
    (:func:`~fabricplan.sim.flow.transport.with_go_back_n`); 0: ``transport`` as it is."""

    @property
    def default_seeds(self) -> int:
        """3 runs where ECMP hashes flows onto paths (the draw decides collisions: one seed moved
        a RoCE ring all-reduce on 4 leaves and 2 spines by up to x1.49), and under flowlet
        routing, whose one flowlet per flow is such a draw; else 1."""
        return FLOW_ECMP_SEEDS if self.transport.routing in ("ecmp", "flowlet") else 1

    @property
    def mechanisms(self) -> str:
        t = self.transport
        return (
            f"{t.routing} routing, {t.link_flow_control} link flow control,"
            f" {t.congestion_control} congestion control"
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
        traffic = collective_traffic(op, layout, size_bytes, ranks, self.qps, shape)
        transport = self.transport
        if self.frame_bytes > 0:
            transport = with_go_back_n(transport, self.graph, self.frame_bytes, traffic)
        result = simulate(self.graph, traffic, transport, seed=seed)
        return FabricRun(size_bytes, fabric_span_us(traffic, result.finish_us, result.latency_us))


def flow_performance(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest
) -> PerformanceResult:
    """nccl-tests-like tables from the flow-level simulator.

    Parameters
    ----------
    valid
        The validated scenario.
    design
        The designed fabric of one technology.
    request
        Collectives, sizes, seed and routing overrides per technology.

    Returns
    -------
    PerformanceResult
        With ``backend == "flow"``.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> design = design_fabric(valid, "roce_v2")
    >>> r = flow_performance(valid, design, PerfRequest(collectives=("all_reduce",),
    ...     sizes_bytes=(2**30,), p2p=False, step=False))
    >>> r.backend, r.collectives[0].algorithm, bool(r.collectives[0].busbw_GBps > 0)
    ('flow', 'flow/nvlstree', True)
    """
    tech = design.technology
    routing: RoutingName | None = request.routing.get(tech) or valid.spec.fabric.routing.get(tech)
    technology = valid.technologies[tech]
    graph = fabric_graph(design, valid)
    transport = transport_for(technology, valid.switches[tech], routing=routing)
    qps = valid.spec.nccl.qps_per_connection or 1
    frame = technology.mtu_bytes + technology.header_bytes.value
    level = FlowLevel(graph, transport, qps=qps, frame_bytes=frame)
    return simulated_performance(valid, design, request, level)
