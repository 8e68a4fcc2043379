"""The time a simulated ``compare`` will take, estimated from the scenario before it starts.

A ``compare --backend flow`` calls the flow level once per technology for the spec, and again
for each cluster size the decision tries for its flip points (up to
:data:`~fabricplan.recommend.decision.CLUSTER_SIZE_STEPS` doublings and as many halvings). One
call builds the fabric graph (about :data:`FLOW_GRAPH_SECONDS_PER_GPU` a GPU) and simulates each
collective at each simulated size under each seed; one simulation costs about
:data:`FLOW_SECONDS_PER_FLOW` for each of its flows (a ring collective's two flows per GPU and
queue pair, an all_to_all's GPU pairs cut to the level's flow budget). The figures are CPU
seconds measured by ``benchmarks/compare_time.py``; the estimate is an estimate, meant to refuse
a run of hours in one line before it starts and to tell the user how long the rest will take,
not to time a machine.

>>> round(flow_call_seconds(1024, ("all_reduce", "all_to_all"), 3, 1, 1, 2**21), 1)
4.7
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabricplan.errors import ModelError
from fabricplan.sim.memory import RING_FLOWS_PER_GPU

if TYPE_CHECKING:
    from fabricplan.model.results import PerfRequest
    from fabricplan.model.scenario import ValidScenario

FLOW_SECONDS_PER_FLOW = 1.5e-6
"""CPU seconds of the flow level per flow and simulation under adaptive routing or spraying (an
estimate): 0.95 µs at 256 GPUs and 1.20 µs at 1,024 measured over whole ``flow_performance``
calls of the compare's request on InfiniBand fat trees (3 collectives, 3 sizes, 1 seed; the
graph included), rounded up; 1.45 µs for a 2.1 M-flow all_to_all at 8,192 GPUs (docs/
performance.md, the memory section's table). Basis: ``benchmarks/compare_time.py``."""
FLOW_SECONDS_PER_FLOW_ECMP = 6e-7
"""The same under ECMP (an estimate): 0.56 µs at 256 GPUs and 0.48 µs at 1,024 on RoCE fat
trees (3 seeds: the seeds share one graph and routes), rounded up. Basis as above."""
FLOW_GRAPH_SECONDS_PER_GPU = 5e-5
"""CPU seconds per GPU of a flow call's fixed part (an estimate): the fabric graph, its routes
and the analytic model the level starts from. ``perf --backend flow -c all_reduce`` took 2.7,
3.2 and 4.5 s of user CPU at 16,384, 32,768 and 65,536 RoCE GPUs (docs/performance.md), of which
about 1.2 s is the start-up and under 1 s the ring's flows: 4-9 x 10^-5 s a GPU, the middle
taken."""
LONG_RUN_SECONDS = 300.0
"""Longest estimated ``compare`` run started without ``--allow-long`` (five minutes of CPU: a
flow compare at 16,384 GPUs is estimated at about three and took 225 s of wall time)."""


def collective_flows(op: str, gpus: int, gpus_per_node: int, qps: int, max_flows: int) -> int:
    """Flows of one simulation of ``op`` over ``gpus`` GPUs (an all_to_all among the whole
    nodes that fit the level's flow budget, as :func:`~fabricplan.sim.performance.
    all_to_all_ranks` cuts it; a ring collective's two flows per GPU).

    >>> [collective_flows(op, 1024, 8, 1, 2**21) for op in ("all_to_all", "all_reduce")]
    [1040384, 2048]
    """
    if op == "all_to_all":
        from fabricplan.sim.performance import all_to_all_ranks

        ranks = all_to_all_ranks(gpus, gpus_per_node, max_flows)
        return ranks * (ranks - min(gpus_per_node, ranks)) * qps
    return gpus * RING_FLOWS_PER_GPU * qps


def flow_call_seconds(
    gpus: int,
    collectives: Sequence[str],
    sizes: int,
    seeds: int,
    qps: int,
    max_flows: int,
    gpus_per_node: int = 8,
    ecmp: bool = False,
) -> float:
    """CPU seconds of one flow-level performance call (an estimate): the fixed part, and every
    collective simulated at ``sizes`` sizes under ``seeds`` seeds."""
    flows = sum(collective_flows(op, gpus, gpus_per_node, qps, max_flows) for op in collectives)
    per_flow = FLOW_SECONDS_PER_FLOW_ECMP if ecmp else FLOW_SECONDS_PER_FLOW
    return gpus * FLOW_GRAPH_SECONDS_PER_GPU + flows * sizes * seeds * per_flow


def size_steps(gpus: int, gpus_per_node: int, steps: int) -> tuple[list[int], list[int]]:
    """The cluster sizes the decision tries for a size that flips the choice: ``steps``
    doublings, and as many halvings as stay whole nodes below ``gpus``
    (:func:`fabricplan.recommend.decision.recommend` tries these; the estimate counts them all,
    as if no flip stopped the search early).

    >>> size_steps(1024, 8, 3)
    ([2048, 4096, 8192], [512, 256, 128])
    """
    up = [gpus * 2**k for k in range(1, steps + 1)]
    down: list[int] = []
    for k in range(1, steps + 1):
        size = (gpus // 2**k) // gpus_per_node * gpus_per_node
        if size < gpus_per_node or size in down or size >= gpus:
            break
        down.append(size)
    return up, down


def estimated_compare_seconds(valid: ValidScenario, request: PerfRequest, steps: int) -> float:
    """CPU seconds a ``compare --backend flow`` of ``valid`` takes without cached results (an
    estimate): every technology's flow call at the spec's size and at each size the decision
    tries (``steps`` doublings and halvings), each with the level's default seeds (3 under
    ECMP, else 1) unless ``request.seeds`` says.

    Examples
    --------
    >>> from fabricplan.model.results import PerfRequest
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 100_000}})
    >>> estimated_compare_seconds(valid, PerfRequest(), 3) > LONG_RUN_SECONDS
    True
    """
    from fabricplan.sim.flow.performance import (
        FLOW_ECMP_SEEDS,
        FLOW_MAX_FLOWS,
        FLOW_SIZES_SIMULATED,
    )
    from fabricplan.sim.flow.transport import transport_for
    from fabricplan.sim.performance import simulated_sizes

    cluster = valid.spec.cluster
    qps = valid.spec.nccl.qps_per_connection or 1
    sizes = len(simulated_sizes(request.sizes_bytes, FLOW_SIZES_SIMULATED))
    total = 0.0
    for tech in valid.spec.fabric.technologies:
        routing = request.routing.get(tech) or valid.spec.fabric.routing.get(tech)
        transport = transport_for(valid.technologies[tech], valid.switches[tech], routing=routing)
        ecmp = transport.routing in ("ecmp", "flowlet")  # hashed: FlowLevel.default_seeds
        seeds = request.seeds or (FLOW_ECMP_SEEDS if ecmp else 1)
        up, down = size_steps(cluster.gpus, cluster.gpus_per_node, steps)
        for gpus in (cluster.gpus, *up, *down):
            total += flow_call_seconds(
                gpus,
                request.collectives,
                sizes,
                seeds,
                qps,
                FLOW_MAX_FLOWS,
                cluster.gpus_per_node,
                ecmp,
            )
    return total


def check_compare_seconds(
    valid: ValidScenario, request: PerfRequest, steps: int, allow_long: bool
) -> float:
    """The estimate of :func:`estimated_compare_seconds`; FP1416 when it is above
    :data:`LONG_RUN_SECONDS` and the user did not pass ``--allow-long``."""
    seconds = estimated_compare_seconds(valid, request, steps)
    if seconds > LONG_RUN_SECONDS and not allow_long:
        gpus = valid.spec.cluster.gpus
        raise ModelError(
            "FP1416",
            "--backend flow",
            f"this compare would take about {format_seconds(seconds)} of CPU (an estimate from"
            f" {gpus:,} GPUs and {len(valid.spec.fabric.technologies)} technologies, each also"
            f" simulated at the {2 * steps} sizes the decision tries), more than"
            f" {format_seconds(LONG_RUN_SECONDS)}",
            None,
            "use --backend analytic, a smaller cluster (cluster.gpus), or --allow-long to run"
            " it anyway",
        )
    return seconds


def format_seconds(seconds: float) -> str:
    """A duration the way a person reads it.

    >>> format_seconds(42), format_seconds(754), format_seconds(9000)
    ('42 s', '13 min', '2.5 h')
    """
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


__all__ = [
    "FLOW_GRAPH_SECONDS_PER_GPU",
    "FLOW_SECONDS_PER_FLOW",
    "FLOW_SECONDS_PER_FLOW_ECMP",
    "LONG_RUN_SECONDS",
    "check_compare_seconds",
    "collective_flows",
    "estimated_compare_seconds",
    "flow_call_seconds",
    "format_seconds",
    "size_steps",
]
