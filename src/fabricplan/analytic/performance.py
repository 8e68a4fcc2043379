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
    incast_victim_note,
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
    profile: FabricProfile, design: FabricDesign, group: CommGroup, request: PerfRequest
) -> int:
    """Switches between the two perftest hosts: as asked, else between the first node of the
    group and its farthest one (the design's worst case for the whole cluster; at least one)."""
    if request.p2p_switch_hops is not None:
        return request.p2p_switch_hops
    if request.gpus is None or request.gpus == profile.gpus:
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


def _algorithm_note(request: PerfRequest) -> str:
    if request.algorithm is not None:
        return (
            f"NCCL_ALGO={request.algorithm}: that algorithm at the protocol NCCL's tuner rates"
            " fastest (all_to_all and sendrecv are point-to-point and ignore it)"
        )
    return (
        "NCCL tuner: the pair of Ring/Tree/NVLS/NVLSTree/CollNetDirect/CollNetChain x"
        " LL/LL128/Simple (and PAT for one GPU per node, NCCL 2.23+) NCCL's alpha-beta model"
        " rates fastest per size, with the release's tuning tables; LL128 only where NCCL"
        " enables it (GPU-NIC path)"
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
        whether to include perftest tables (and how many switches apart their hosts are) and the
        training step, calibration, routing, a forced algorithm and in-network reduction.

    Returns
    -------
    PerformanceResult
        ``base_latency_us`` is ``ib_write_lat`` of 2 bytes across the design's worst-case path.

    Raises
    ------
    ModelError
        FP50x when the request or the workload does not fit the cluster, FP509 when a forced
        algorithm cannot run, FP513 when in-network reduction is required but absent
        (docs/errors.md).

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
        collective_point(profile, group, op, size, request.algorithm)
        for op in request.collectives
        for size in request.sizes_bytes
    )
    p2p: tuple[P2PPoint, ...] = ()
    p2p_notes: tuple[str, ...] = ()
    if request.p2p:
        hops = _p2p_switch_hops(profile, design, group, request)
        p2p = p2p_points(profile, request.sizes_bytes, hops)
        asked = "as asked" if request.p2p_switch_hops is not None else "the longest path"
        p2p_notes = (f"perftest pair: {hops} switch hop(s) apart ({asked})",)
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
        incast_victim_note(profile),
        *p2p_notes,
        _algorithm_note(request),
        "times: the chosen pair through NCCL's pipeline (channels, chunks, store-and-forward"
        " stages); the training step keeps NCCL's default choice",
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
