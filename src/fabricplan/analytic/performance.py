"""The analytic backend: closed forms for every designed fabric, instant at any scale.

:func:`analytic_performance` is what :class:`fabricplan.backends.AnalyticBackend` calls. It costs
O(collectives x sizes) and nothing per GPU: the fabric is reduced to a
:class:`~.profile.FabricProfile`, the communicator to a :class:`~.traffic.CommGroup`, and every
model is a formula over them (see docs/models.md, "Point-to-point latency and bandwidth",
"Collectives", "Training step").
"""

from __future__ import annotations

from fabricplan.analytic.collective import collective_point
from fabricplan.analytic.p2p import one_way_ns, p2p_points
from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.step import training_step
from fabricplan.analytic.traffic import (
    CommGroup,
    all_to_all_pattern,
    group_for,
    pattern_throughput,
    ring_pattern,
    span_switch_hops,
)
from fabricplan.analytic.workload import resolve_workload
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import P2PPoint, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import ns_to_us

BASE_LATENCY_SIZE_BYTES = 2
"""Message size of the base latency (perftest's smallest ``ib_write_lat`` size)."""


def _p2p_switch_hops(
    profile: FabricProfile, design: FabricDesign, group: CommGroup, whole_cluster: bool
) -> int:
    """Switches between the first node of the group and its farthest one (at least one)."""
    if whole_cluster:
        return max(1, design.worst_case_switch_hops)
    return span_switch_hops(profile, max(2.0, group.span_nodes))


def _tier_notes(profile: FabricProfile, group: CommGroup) -> tuple[str, ...]:
    """How much of a ring's and an all-to-all's traffic crosses each tier, and what it costs."""
    if group.domains < 2:
        return ()
    patterns = (
        (
            "ring",
            ring_pattern(
                group.domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
            ),
        ),
        (
            "all_to_all",
            all_to_all_pattern(
                group, profile.nics_per_node, profile.nodes_per_leaf, profile.nodes_per_pod
            ),
        ),
    )
    return tuple(
        f"{name}: {pattern.leaf_share:.1%} of flows leave their leaf, {pattern.pod_share:.1%}"
        f" their pod; bandwidth x{pattern_throughput(profile, pattern, group.span_nodes):.3f}"
        f" from oversubscription and {profile.routing} routing"
        for name, pattern in patterns
    )


def analytic_performance(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest
) -> PerformanceResult:
    """Point-to-point tables, nccl-tests tables and the training step of one fabric.

    Parameters
    ----------
    valid
        The resolved scenario: every hardware figure comes from here.
    design
        The technology's fabric.
    request
        Collectives, sizes, the sub-group of GPUs (``gpus``; default the whole cluster),
        whether to include perftest tables and the training step, calibration and routing.

    Returns
    -------
    PerformanceResult
        ``base_latency_us`` is ``ib_write_lat`` of 2 bytes across the design's worst-case path.

    Raises
    ------
    ModelError
        FP50x when the request or the workload does not fit the cluster (docs/errors.md).

    Examples
    --------
    >>> from fabricplan.model.results import PerfRequest
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> design = design_fabric(valid, "roce_v2")
    >>> result = analytic_performance(valid, design, PerfRequest(
    ...     collectives=("all_reduce",), sizes_bytes=(2**30,), gpus=8, p2p=False, step=False))
    >>> result.collectives[0].algorithm                  # one node: NVLink SHARP
    'NVLS/Simple'
    """
    profile = fabric_profile(valid, design, request)
    group = group_for(profile, request.gpus)
    collectives = tuple(
        collective_point(profile, group, op, size)
        for op in request.collectives
        for size in request.sizes_bytes
    )
    whole = request.gpus is None or request.gpus == profile.gpus
    p2p: tuple[P2PPoint, ...] = ()
    if request.p2p:
        p2p = p2p_points(
            profile, request.sizes_bytes, _p2p_switch_hops(profile, design, group, whole)
        )
    worst_hops = max(1, design.worst_case_switch_hops)
    base_latency_us = ns_to_us(one_way_ns(profile, worst_hops, BASE_LATENCY_SIZE_BYTES))
    step = None
    if request.step:
        step = training_step(profile, resolve_workload(valid.spec.workload, profile.gpus))
    notes = (
        *profile.notes,
        f"collectives over {group.ranks} GPUs: {group.domains} NVLink domain(s) of"
        f" {group.local_ranks}",
        *_tier_notes(profile, group),
        "NCCL tuner: the fastest of Ring/Tree/NVLS/NVLSTree/CollNetDirect x LL/LL128/Simple per"
        " size; PAT and CollNetChain are not modelled",
        "closed forms: no randomness (the request's seed is not used)",
    )
    return PerformanceResult(
        backend="analytic",
        technology=design.technology,
        base_latency_us=base_latency_us,
        p2p=p2p,
        collectives=collectives,
        step=step,
        notes=notes,
    )
