"""The flow backend: nccl-tests tables whose fabric time comes from the flow-level simulator.

A collective's time is ``alpha + fabric``: ``alpha`` is the analytic model's time for the same
collective at 8 bytes (launch, protocol and per-step latencies), ``fabric`` is the time the
simulator takes to move the collective's fabric flows on the designed topology, with its
routing, flow control and congestion control. The simulator runs at a few sizes (the requested
sizes of at least :data:`FLOW_MIN_SIZE_BYTES`, thinned to :data:`FLOW_SIZES_SIMULATED`
log-spaced ones); every other size scales the fabric time of the nearest simulated size
linearly (the fluid transfer time of one pattern is proportional to its bytes, apart from the
congestion-control settling time, which the nearest size keeps small). The perftest tables,
the base latency and the training step are the analytic model's.
"""

from __future__ import annotations

import math

import numpy as np

from fabricplan.analytic.collective import busbw_factor
from fabricplan.analytic.performance import analytic_performance
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, CollectivePoint, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.pattern import collective_traffic
from fabricplan.sim.flow.traffic import GpuLayout
from fabricplan.sim.flow.transport import RoutingName, transport_for
from fabricplan.topology.graph import fabric_graph
from fabricplan.units import transfer_rate_GBps

FLOW_MIN_SIZE_BYTES = 2**20
"""Smallest size simulated: below 1 MiB a collective is bound by latency, which ``alpha``
carries."""
FLOW_SIZES_SIMULATED = 3
"""Sizes simulated per collective (the smallest, the largest and one between, log-spaced)."""
FLOW_MAX_FLOWS = 2**21
"""Largest all_to_all simulated (about 2 M flows, 1,448 GPUs); a larger one runs on the
first GPUs that fit and says so in the notes."""
ALPHA_SIZE_BYTES = 8
"""Size at which the analytic model gives the latency term ``alpha``."""


def simulated_sizes(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The sizes the simulator runs: the requested ones of at least 1 MiB, thinned to three.

    >>> simulated_sizes(tuple(2**k for k in range(3, 34, 2)))
    (2097152, 134217728, 8589934592)
    >>> simulated_sizes((1024,))
    (1024,)
    """
    big = sorted({s for s in sizes if s >= FLOW_MIN_SIZE_BYTES})
    if not big:
        return (max(sizes),)
    if len(big) <= FLOW_SIZES_SIMULATED:
        return tuple(big)
    logs = np.log(np.asarray(big, dtype=np.float64))
    targets = np.linspace(logs[0], logs[-1], FLOW_SIZES_SIMULATED)
    picks = sorted({big[int(np.argmin(np.abs(logs - t)))] for t in targets})
    return tuple(picks)


def _nearest(size: int, simulated: tuple[int, ...]) -> int:
    return min(simulated, key=lambda s: abs(math.log(s) - math.log(size)))


def all_to_all_ranks(gpus: int, gpus_per_node: int, max_flows: int = FLOW_MAX_FLOWS) -> int:
    """Largest whole-node rank count whose all_to_all stays within ``max_flows`` flows."""
    ranks = gpus
    while ranks > gpus_per_node and ranks * (ranks - gpus_per_node) > max_flows:
        ranks -= gpus_per_node
    return ranks


def flow_performance(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest
) -> PerformanceResult:
    """nccl-tests-like tables from the flow-level simulator (see the module docstring).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> design = design_fabric(valid, "roce_v2")
    >>> r = flow_performance(valid, design, PerfRequest(collectives=("all_reduce",),
    ...     sizes_bytes=(2**30,), p2p=False, step=False))
    >>> r.backend, r.collectives[0].algorithm, bool(r.collectives[0].busbw_GBps > 0)
    ('flow', 'flow/ring', True)
    """
    cluster = valid.spec.cluster
    tech = design.technology
    routing: RoutingName | None = request.routing.get(tech) or valid.spec.fabric.routing.get(tech)
    transport = transport_for(valid.technologies[tech], valid.switches[tech], routing=routing)
    graph = fabric_graph(design, valid)
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    gpus = request.gpus or cluster.gpus
    analytic = analytic_performance(valid, design, request)
    alpha_points = analytic_performance(
        valid,
        design,
        request.model_copy(
            update={
                "sizes_bytes": (ALPHA_SIZE_BYTES,),
                "p2p": False,
                "step": False,
            }
        ),
    ).collectives
    alpha_us = {p.collective: p.time_us for p in alpha_points}
    sims = simulated_sizes(request.sizes_bytes)
    notes = [
        f"flow: {transport.routing} routing, {transport.link_flow_control} link flow control,"
        f" {transport.congestion_control} congestion control; seed {request.seed}",
        "flow: fabric time simulated at "
        + ", ".join(f"{s} B" for s in sims)
        + "; other sizes scale the nearest linearly; latency (alpha) from the analytic model",
        "flow: perftest tables, base latency and the training step are the analytic model's",
    ]
    points: list[CollectivePoint] = []
    for op in request.collectives:
        ranks_n = gpus
        if op == "all_to_all":
            ranks_n = all_to_all_ranks(gpus, cluster.gpus_per_node)
            if ranks_n < gpus:
                notes.append(
                    f"flow: all_to_all simulated on the first {ranks_n} GPUs (flow"
                    f" budget {FLOW_MAX_FLOWS}); its fabric time is that group's"
                )
        ranks = np.arange(ranks_n, dtype=np.int64)
        fabric_us: dict[int, float] = {}
        for size in sims:
            qps = valid.spec.nccl.qps_per_connection or 1
            traffic = collective_traffic(op, layout, size, ranks, qps)
            result = simulate(graph, traffic, transport, seed=request.seed)
            fabric_us[size] = result.transfer_us
        points += [
            simulated_point(
                op,
                size,
                gpus,
                alpha_us.get(op, 0.0),
                fabric_us[_nearest(size, sims)] * size / _nearest(size, sims),
            )
            for size in request.sizes_bytes
        ]
    return PerformanceResult(
        backend="flow",
        technology=tech,
        base_latency_us=analytic.base_latency_us,
        p2p=analytic.p2p,
        collectives=tuple(points),
        step=analytic.step,
        notes=(*notes, *analytic.notes),
    )


def simulated_point(
    op: CollectiveName,
    size: int,
    ranks: int,
    alpha_us: float,
    fabric_us: float,
    level: str = "flow",
) -> CollectivePoint:
    """An nccl-tests row from a simulated fabric time plus the analytic software latency."""
    algorithm = {"all_to_all": f"{level}/pairwise", "sendrecv": f"{level}/p2p"}.get(
        op, f"{level}/ring"
    )
    time_us = alpha_us + fabric_us
    algbw = transfer_rate_GBps(size, time_us) if time_us > 0 else 0.0
    return CollectivePoint(
        collective=op,
        size_bytes=size,
        algorithm=algorithm,
        time_us=time_us,
        algbw_GBps=algbw,
        busbw_GBps=algbw * busbw_factor(op, ranks),
    )
