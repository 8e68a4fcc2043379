"""The simulated backends' one template: nccl-tests tables whose fabric time a simulator gives.

``fabric`` is the time a simulation level takes to move the collective's fabric flows on the
designed topology with its routing, flow control and congestion control, less the one-way path
latency that the analytic latency already counts (:func:`fabric_span_us`). The flows are those of
the algorithm the analytic model's pair runs at the size (:func:`fabric_shape`): NCCL's rings, or
for Tree and NVLSTree NCCL's double binary tree between NVLink domains
(:func:`~fabricplan.sim.traffic.tree_all_reduce`, over the NVLS heads for NVLSTree). They are
laid over NVLink domains (a node, or a GB200 NVL72 rack's 18 trays): a ring crosses the fabric
once per domain, a tree links domains. What no level simulates bounds the fabric time
(:func:`unsimulated_bound_us`): the NVLink part at NVLink's rate (a ring's NVLink edges,
:func:`~fabricplan.sim.traffic.ring_nvlink_bytes`; a tree's chains; NVLS
at the NVSwitch's reduction rate; an all_to_all's pairs inside a domain) and a tree's per-channel
cap. Where the pair has no fabric flow a level simulates (CollNet's and NVLS's in-switch
reduction, the symmetric kernels: :data:`UNSIMULATED_ALGORITHMS`), the analytic time is kept and
the notes say so. Before, every reduction ran as a ring, and a tree's time had the ring's fabric
time in place of its own transfer (CoreWeave's 20-rack GB200 all_reduce: +66.1 % at the flow
level, +27.9 % with its tree, the analytic model +22.5 %).

The simulators move the Simple protocol's bytes at the fabric's rate, so where NCCL runs Simple
the simulated time replaces the analytic model's steady transfer and nothing else: the time is
the analytic time less ``size / algbw`` of its pair, plus ``fabric`` (:func:`simple_time_us`).
What is kept is what a fluid or packet model of the fabric does not carry: NCCL's base latency,
its per-step latencies (``tuning.cc``'s ``baseLat`` and ``hwLat``, with the path latency of each
step) and its chunk pipeline's fill and narrower channel count at mid sizes. Adding only the
8-byte time (``alpha``, :data:`ALPHA_SIZE_BYTES`) to the simulated transfer, as before, left a
1 MiB NVLSTree/Simple all_reduce at its LL latency and the flow level's mid-size rows 26.6 % off
(median) against the analytic model's 7.7 %.

Where NCCL runs LL or LL128 instead (:data:`UNSIMULATED_PROTOCOLS`: small and lower mid
sizes), the time is bounded by what they do not model: the protocol (LL moves 8 data bytes per
16-byte line, LL128 120 per 128, each with its per-channel cap), the algorithm's steps and NCCL's
chunk pipeline through the algorithm's stages. There the time
is the slower of ``alpha + fabric`` and the analytic model's time at the size
(:func:`bound_time_us`): the simulated bytes are not the protocol's, so the simulated transfer
cannot stand in for the analytic one. Without that bound a 32 KiB tree all_reduce kept its
8-byte time, and the flow level missed the small-message rows by a median of
28.5 % against the analytic model's 16.3 % (docs/validation.md).

A level runs at a few sizes (the requested
sizes of at least :data:`MIN_SIMULATED_SIZE_BYTES`, thinned to the level's count of log-spaced
ones, :func:`simulated_sizes`); every other size scales the per-byte fabric time of the
nearest simulated size in log distance (:func:`nearest_size`), run with the size's own shape
(a simulated size runs once per shape the sizes nearest to it need): the fluid and packet transfer
times of one pattern are proportional to its bytes, apart from the congestion-control settling
time, which the nearest size keeps small. The perftest tables, the base latency and the training
step are the analytic model's.

Each level (:mod:`fabricplan.sim.flow.performance`, :mod:`fabricplan.sim.packet.performance`)
supplies a :class:`SimulatedLevel`: its name, how many sizes it runs, its all_to_all flow
budget, and one call that simulates a collective's traffic.

>>> simulated_sizes(tuple(2**k for k in range(3, 34, 2)), 3)
(2097152, 134217728, 8589934592)
>>> nearest_size(3 * 2**20, (2**20, 2**30))
1048576
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from fabricplan.analytic.collective import (
    Candidate,
    busbw_factor,
    chosen_candidate,
    nvls_heads,
    nvls_reduction_efficiency,
    nvlstree_heads_algbw_GBps,
    tree_channel_algbw_GBps,
)
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import FabricProfile, fabric_profile
from fabricplan.analytic.traffic import CommGroup, group_for
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, CollectivePoint, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.pattern import RING, FabricShape
from fabricplan.sim.seed import spawn_seeds
from fabricplan.sim.traffic import (
    GpuLayout,
    IntArray,
    RingCollective,
    Traffic,
    all_to_all_nvlink_bytes,
    nvls_nvlink_bytes,
    ring_nvlink_bytes,
    tree_nvlink_bytes,
)
from fabricplan.units import transfer_rate_GBps, transfer_time_us

MIN_SIMULATED_SIZE_BYTES = 2**20
"""Smallest size simulated: below 1 MiB a collective is bound by latency and NCCL's protocol,
which the analytic bound carries (:func:`bound_time_us`)."""
ALPHA_SIZE_BYTES = 8
"""Size at which the analytic model gives the latency term ``alpha`` (LL and LL128 rows)."""
RING_COLLECTIVES: tuple[RingCollective, ...] = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
)
"""Collectives NCCL runs as rings (:func:`~fabricplan.sim.pattern.collective_traffic`); all_reduce
runs as NCCL's double binary tree where the analytic model's pair is Tree or NVLSTree
(:func:`fabric_shape`)."""
TREE_ALGORITHMS: frozenset[str] = frozenset(("Tree", "NVLSTree"))
"""Pairs whose fabric traffic is NCCL's double binary tree between NVLink domains: Tree, and
NVLSTree (NVLS inside the domain, a tree between domains over the NVLS heads' NICs)."""
UNSIMULATED_ALGORITHMS: dict[str, str] = {
    "CollNetDirect": "the fabric's switches reduce (SHARP), which no level simulates",
    "CollNetChain": "the fabric's switches reduce (SHARP), which no level simulates",
    "NVLS": "the NVLink switch reduces (with SHARP between domains), which no level simulates",
    "Symmetric": "the symmetric kernel runs inside one NVLink domain: nothing crosses the fabric",
}
"""Pairs whose time the levels keep from the analytic model (:func:`fabric_shape` is ``None``),
and why: in-switch reduction moves one stream per link, which the analytic model already counts
free of collisions and oversubscription; NVLS and the symmetric kernels inside one domain send
nothing over the fabric."""
UNSIMULATED_PROTOCOLS: frozenset[str] = frozenset(("LL", "LL128"))
"""NCCL protocols whose cost the simulators do not model: LL stores 8 data bytes and an 8-byte
flag per 16-byte line, LL128 120 data bytes per 128-byte line (``src/device/prims_ll.h``,
``prims_ll128.h``, ``NCCL_LL128_DATAELEMS``), each with its per-channel bandwidth cap
(``llMaxBws``, ``perChMaxLL128Bws`` in ``src/graph/tuning.cc``). Where the analytic model's pair
runs one of them, its time bounds the simulated one (:func:`bound_time_us`)."""


@dataclass(frozen=True)
class FabricRun:
    """What a level returns for one simulated collective."""

    simulated_bytes: int
    """Per-rank size actually simulated (a level may shrink a run to fit its budget)."""
    fabric_us: float
    """Fabric time of that size (:func:`fabric_span_us`)."""
    note: str = ""
    """Said in the result's notes when not empty (e.g. the events a packet run took)."""


class SimulatedLevel(Protocol):
    """What a simulation level offers the template."""

    @property
    def name(self) -> str:
        """``flow`` or ``packet``: the backend's name and the prefix of its algorithms."""
        ...

    @property
    def sizes_simulated(self) -> int:
        """Sizes simulated per collective."""
        ...

    @property
    def max_all_to_all_flows(self) -> int:
        """Largest all_to_all simulated; a larger one runs on the first GPUs that fit."""
        ...

    @property
    def mechanisms(self) -> str:
        """Routing, link flow control and congestion control, as the notes say them."""
        ...

    @property
    def default_seeds(self) -> int:
        """Runs per point when the request does not say (``PerfRequest.seeds``)."""
        ...

    def fabric_run(
        self,
        op: CollectiveName,
        layout: GpuLayout,
        size_bytes: int,
        ranks: IntArray,
        seed: int,
        shape: FabricShape = RING,
    ) -> FabricRun:
        """Simulate collective ``op`` of ``size_bytes`` per rank over ``ranks``, its fabric
        flows laid as ``shape`` (NCCL's rings or double binary tree)."""
        ...


def run_seeds(seed: int, runs: int) -> tuple[int, ...]:
    """The seeds of ``runs`` simulation runs of one point: ``seed`` itself (so one run is the
    run it always was), then ``runs - 1`` children of it.

    >>> run_seeds(5, 1), len(run_seeds(5, 3)), run_seeds(5, 3)[0]
    ((5,), 3, 5)
    """
    return (seed, *spawn_seeds(seed, runs - 1)) if runs > 1 else (seed,)


def simulated_sizes(sizes: tuple[int, ...], count: int) -> tuple[int, ...]:
    """The sizes a level runs: the requested ones of at least 1 MiB, thinned to ``count``
    log-spaced ones (the smallest and the largest always among them).

    Parameters
    ----------
    sizes
        The requested sizes (bytes per rank).
    count
        How many the level simulates (at least 1).

    Returns
    -------
    tuple of int
        Sorted sizes; the largest requested size when none reaches 1 MiB.

    Examples
    --------
    >>> simulated_sizes((2**10, 2**21, 2**25, 2**33), 2)
    (2097152, 8589934592)
    >>> simulated_sizes((1024,), 3)
    (1024,)
    """
    big = sorted({s for s in sizes if s >= MIN_SIMULATED_SIZE_BYTES})
    if not big:
        return (max(sizes),)
    if len(big) <= count:
        return tuple(big)
    logs = np.log(np.asarray(big, dtype=np.float64))
    targets = np.linspace(logs[0], logs[-1], max(count, 1))
    return tuple(sorted({big[int(np.argmin(np.abs(logs - t)))] for t in targets}))


def nearest_size(size: int, simulated: tuple[int, ...]) -> int:
    """The simulated size nearest to ``size`` in log distance (the first on a tie).

    >>> nearest_size(2**24, (2**20, 2**30))
    1048576
    """
    return min(simulated, key=lambda s: abs(math.log(s) - math.log(size)))


def all_to_all_ranks(gpus: int, gpus_per_node: int, max_flows: int) -> int:
    """Largest whole-node rank count whose all_to_all stays within ``max_flows`` flows.

    >>> all_to_all_ranks(1024, 8, 2**16)
    256
    """
    ranks = gpus
    while ranks > gpus_per_node and ranks * (ranks - gpus_per_node) > max_flows:
        ranks -= gpus_per_node
    return ranks


def chain_depths(traffic: Traffic) -> NDArray[np.int64]:
    """Steps on the dependency chain up to and including each step (1 for a step with no
    dependencies); steps come after the steps they depend on.

    >>> from fabricplan.sim.traffic import GpuLayout, ring
    >>> chain_depths(ring(GpuLayout(16, 8, 8), "all_reduce", 2**20)).tolist()
    [1]
    """
    depth: list[int] = []
    for step in traffic.steps:
        depth.append(1 + max((depth[d] for d in step.deps), default=0))
    return np.asarray(depth, dtype=np.int64)


def fabric_span_us(
    traffic: Traffic, finish_us: NDArray[np.float64], latency_us: NDArray[np.float64]
) -> float:
    """When the last byte left the fabric, the path latency of every step on its chain taken
    off: the largest ``finish - latency x depth`` over the flows (0 without flows).

    Both levels deliver a flow's last byte one path latency after it leaves its sender, and a
    dependent step starts after the step before it delivered; ``alpha`` counts those latencies.

    Parameters
    ----------
    traffic
        The traffic that ran.
    finish_us
        Last byte of each flow at its receiver (µs).
    latency_us
        One-way path latency of each flow (µs).

    Returns
    -------
    float
        Fabric time in µs, at least 0.

    Examples
    --------
    >>> from fabricplan.sim.traffic import GpuLayout, ring
    >>> t = ring(GpuLayout(16, 8, 8), "all_reduce", 2**20)
    >>> fabric_span_us(t, np.full(t.flows, 12.0), np.full(t.flows, 2.0))
    10.0
    """
    if traffic.flows == 0:
        return 0.0
    depth = chain_depths(traffic)[traffic.step]
    return max(0.0, float(np.max(finish_us - latency_us * depth)))


def bound_time_us(analytic_us: float, alpha_us: float, fabric_us: float) -> float:
    """A simulated collective's time where NCCL runs LL or LL128: the slower of the analytic
    model's time at the size (protocol, algorithm, pipeline: what the simulators do not model)
    and ``alpha + fabric`` (the simulated fabric time on top of the 8-byte latency), us.

    Parameters
    ----------
    analytic_us
        The analytic model's time for the collective at this size.
    alpha_us
        The analytic model's time at :data:`ALPHA_SIZE_BYTES`.
    fabric_us
        The simulated fabric time at this size (:func:`fabric_span_us`).

    Returns
    -------
    float
        ``max(analytic, alpha + fabric)``.

    Examples
    --------
    >>> bound_time_us(33.9, 25.3, 0.2)     # 32 KiB tree all_reduce: the LL pipeline binds
    33.9
    >>> bound_time_us(30.0, 25.3, 40.0)     # a congested fabric binds
    65.3
    """
    return max(analytic_us, alpha_us + fabric_us)


def simple_time_us(analytic_us: float, transfer_us: float, fabric_us: float) -> float:
    """A simulated collective's time where NCCL runs Simple: the analytic time with its steady
    transfer (``size / algbw`` of the pair) replaced by the simulated fabric time, us.

    What is left of the analytic time, at least its base latency (the pipeline's time is
    ``base + max(link work, first piece + the rest)`` and the link work is at least the steady
    transfer), is NCCL's per-step latency and chunk pipeline, which no simulation level models.

    Parameters
    ----------
    analytic_us
        The analytic model's time for the collective at this size.
    transfer_us
        ``size / algbw`` of the analytic model's pair (:func:`fabricplan.units.transfer_time_us`).
    fabric_us
        The simulated fabric time at this size (:func:`fabric_span_us`, :func:`bounded_fabric_us`).

    Returns
    -------
    float
        ``max(0, analytic - transfer) + fabric``.

    Examples
    --------
    >>> simple_time_us(66.4, 3.8, 5.0)    # 1 MiB NVLSTree/Simple: latency and pipeline kept
    67.6
    >>> simple_time_us(20_000.0, 19_990.0, 21_000.0)   # 8 GiB: the simulated transfer binds
    21010.0
    """
    return round(max(0.0, analytic_us - transfer_us) + fabric_us, 9)


def bounded_fabric_us(simulated_us: float, unsimulated_us: float) -> float:
    """A collective's fabric time: the slower of its simulated fabric flows and what the level
    does not simulate of it (:func:`unsimulated_bound_us`: its NVLink part, a tree's
    per-channel cap). Every edge of a pipelined ring or tree carries its share at once, so the
    slowest resource binds.

    >>> bounded_fabric_us(10.0, 10_000.0)     # NVLink binds: 9 GB at 900 GB/s
    10000.0
    >>> bounded_fabric_us(10.0, 0.0)
    10.0
    """
    return max(simulated_us, unsimulated_us)


def fabric_shape(op: CollectiveName, pair: Candidate, heads: int) -> FabricShape | None:
    """The fabric flows a level simulates for ``op`` where NCCL runs ``pair``: NCCL's double
    binary tree for Tree, the same tree over the ``heads`` NVLS heads per domain for NVLSTree,
    NCCL's rings for Ring and for the collectives NCCL runs only as rings (PAT's peers are at
    power-of-two distances, but each rank sends the ring's ``(n-1)/n`` of the buffer, so the
    ring stands in for it); ``None`` where nothing of the pair is a fabric flow the levels
    simulate (:data:`UNSIMULATED_ALGORITHMS`: the analytic time is kept).

    >>> tree = Candidate("Tree", "Simple", 10.0, 100.0)
    >>> fabric_shape("all_reduce", tree, 8), fabric_shape("all_gather", tree, 8)
    (FabricShape(algorithm='tree', heads=0), FabricShape(algorithm='ring', heads=0))
    >>> fabric_shape("all_reduce", Candidate("NVLSTree", "Simple", 10.0, 100.0), 8).label
    'nvlstree'
    >>> fabric_shape("all_reduce", Candidate("CollNetChain", "Simple", 10.0, 100.0), 8) is None
    True
    """
    if pair.algorithm in UNSIMULATED_ALGORITHMS:
        return None
    if op == "all_reduce" and pair.algorithm in TREE_ALGORITHMS:
        return FabricShape("tree", heads if pair.algorithm == "NVLSTree" else 0)
    return RING


def unsimulated_bound_us(
    op: CollectiveName,
    shape: FabricShape,
    size: float,
    ranks: int,
    profile: FabricProfile,
    group: CommGroup,
    pair: Candidate,
) -> float:
    """The time of what a level does not simulate of ``op`` laid as ``shape``, us: its NVLink
    part (no level simulates NVLink) and, for a tree, NCCL's per-channel cap of the pair,
    whichever is slower. The simulated fabric time is at least this (:func:`bounded_fabric_us`).

    - ring: its NVLink edges (:func:`~fabricplan.sim.traffic.ring_nvlink_bytes`) at NVLink's
      rate; all_to_all: the pairs inside a domain
      (:func:`~fabricplan.sim.traffic.all_to_all_nvlink_bytes`), likewise;
    - Tree: each domain's NVLink chain (:func:`~fabricplan.sim.traffic.tree_nvlink_bytes`) at
      NVLink's rate, and ``size`` at the tree's per-channel cap
      (:func:`~fabricplan.analytic.collective.tree_channel_algbw_GBps`: NCCL's tree channels
      are SM-bound, and where the cap binds the analytic tree is bound by it);
    - NVLSTree: NVLS inside the domain (:func:`~fabricplan.sim.traffic.nvls_nvlink_bytes`) at
      the NVLink switch's reduction rate (``NVLS_REDUCTION_EFFICIENCY`` of NVLink's, as the
      analytic NVLS bound and the symmetric kernels' floor take it), and ``size`` at the NVLS
      heads' cap (:func:`~fabricplan.analytic.collective.nvlstree_heads_algbw_GBps`).

    The caps and rates are the analytic model's, without its calibrated collective efficiency
    (the simulated fabric moves bytes at the links' rates, the rings too).
    """
    nvlink = profile.nvlink_GBps
    local = group.local_ranks
    if op == "all_to_all":
        return transfer_time_us(all_to_all_nvlink_bytes(size, ranks, local), nvlink)
    if op not in RING_COLLECTIVES:
        return 0.0
    if shape.algorithm == "ring":
        bytes_ = ring_nvlink_bytes(op, size, ranks, local, group.domains)
        return transfer_time_us(bytes_, nvlink)
    if shape.heads:
        rate = nvlink * nvls_reduction_efficiency(profile.gpu_class)
        part = transfer_time_us(nvls_nvlink_bytes(size, local), rate)
        cap = nvlstree_heads_algbw_GBps(profile, group)
    else:
        part = transfer_time_us(tree_nvlink_bytes(size, local), nvlink)
        cap = tree_channel_algbw_GBps(profile, group, pair.protocol)
    return max(part, transfer_time_us(size, cap) if cap else 0.0)


def composed_time_us(
    analytic: CollectivePoint | None, alpha_us: float, fabric_us: float, transfer_us: float | None
) -> float:
    """A simulated collective's time from its fabric time: ``alpha + fabric`` without an
    analytic point; where the analytic pair runs LL or LL128, :func:`bound_time_us`; where it
    runs Simple and its transfer is given, :func:`simple_time_us`.

    >>> ll = CollectivePoint(collective="all_reduce", size_bytes=2**15, algorithm="Tree/LL",
    ...     time_us=33.9, algbw_GBps=1.0, busbw_GBps=1.0)
    >>> composed_time_us(ll, 25.3, 0.2, 1.0), composed_time_us(None, 25.3, 0.2, None)
    (33.9, 25.5)
    """
    if analytic is None:
        return alpha_us + fabric_us
    if runs_unsimulated_protocol(analytic):
        return bound_time_us(analytic.time_us, alpha_us, fabric_us)
    if transfer_us is None:
        return alpha_us + fabric_us
    return simple_time_us(analytic.time_us, transfer_us, fabric_us)


def runs_unsimulated_protocol(point: CollectivePoint) -> bool:
    """Whether the analytic point's pair runs a protocol the simulators do not model.

    >>> tree = CollectivePoint(collective="all_reduce", size_bytes=8, algorithm="Tree/LL",
    ...     time_us=25.0, algbw_GBps=0.0, busbw_GBps=0.0)
    >>> runs_unsimulated_protocol(tree)
    True
    """
    return point.algorithm.rsplit("/", 1)[-1] in UNSIMULATED_PROTOCOLS


def simulated_point(
    op: CollectiveName,
    size: int,
    ranks: int,
    alpha_us: float,
    fabric_us: float,
    level: str = "flow",
    analytic: CollectivePoint | None = None,
    transfer_us: float | None = None,
    shape: FabricShape = RING,
) -> CollectivePoint:
    """An nccl-tests row from a simulated fabric time, the analytic software latency and, where
    given, the analytic model's point at the same size (:func:`composed_time_us`): its time
    bounds the row's where its pair runs LL or LL128 (:data:`UNSIMULATED_PROTOCOLS`,
    :func:`bound_time_us`); where it runs Simple and ``transfer_us`` (its pair's
    ``size / algbw``) is given, the row's time is :func:`simple_time_us` (``alpha`` unused).

    The algorithm reads ``flow/ring`` or ``flow/tree`` (``flow/nvlstree``, ``/pairwise``,
    ``/p2p``: the simulated ``shape``) where the simulated fabric binds, ``flow/`` and the
    analytic pair (``flow/Tree/LL``) where the analytic model's does.

    >>> p = simulated_point("all_reduce", 2**20, 16, 10.0, 90.0)
    >>> p.algorithm, p.time_us
    ('flow/ring', 100.0)
    >>> tree = CollectivePoint(collective="all_reduce", size_bytes=2**20, algorithm="Tree/LL128",
    ...     time_us=120.0, algbw_GBps=8.7, busbw_GBps=16.4)
    >>> p = simulated_point("all_reduce", 2**20, 16, 10.0, 90.0, analytic=tree)
    >>> p.algorithm, p.time_us
    ('flow/Tree/LL128', 120.0)
    >>> nvlstree = CollectivePoint(collective="all_reduce", size_bytes=2**20,
    ...     algorithm="NVLSTree/Simple", time_us=66.4, algbw_GBps=15.8, busbw_GBps=29.6)
    >>> p = simulated_point("all_reduce", 2**20, 16, 10.0, 5.0, analytic=nvlstree,
    ...     transfer_us=3.8, shape=FabricShape("tree", 8))
    >>> p.algorithm, p.time_us
    ('flow/nvlstree', 67.6)
    """
    algorithm = {"all_to_all": f"{level}/pairwise", "sendrecv": f"{level}/p2p"}.get(
        op, f"{level}/{shape.label}"
    )
    time_us = composed_time_us(analytic, alpha_us, fabric_us, transfer_us)
    unsimulated = analytic is not None and runs_unsimulated_protocol(analytic)
    if unsimulated and analytic is not None and analytic.time_us > alpha_us + fabric_us:
        algorithm = f"{level}/{analytic.algorithm}"
    algbw = transfer_rate_GBps(size, time_us) if time_us > 0 else 0.0
    return CollectivePoint(
        collective=op,
        size_bytes=size,
        algorithm=algorithm,
        time_us=time_us,
        algbw_GBps=algbw,
        busbw_GBps=algbw * busbw_factor(op, ranks),
    )


def simulated_performance(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest, level: SimulatedLevel
) -> PerformanceResult:
    """nccl-tests-like tables from one simulation level (see the module docstring).

    Parameters
    ----------
    valid
        The validated scenario.
    design
        The designed fabric of one technology.
    request
        Collectives, sizes and seed.
    level
        The simulation level that gives the fabric time.

    Returns
    -------
    PerformanceResult
        ``backend`` is the level's name; where NCCL runs Simple a collective's time is the
        analytic time with the simulated transfer in place of its own (:func:`simple_time_us`),
        where it runs LL or LL128 the slower of the simulated and the analytic bound
        (:func:`bound_time_us`); perftest and step are the analytic model's.

    Examples
    --------
    >>> from fabricplan.sim.flow.performance import FlowLevel
    >>> from fabricplan.sim.flow.transport import transport_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": ["roce_v2"]}})
    >>> design = design_fabric(valid, "roce_v2")
    >>> level = FlowLevel(fabric_graph(design, valid),
    ...     transport_for(valid.technologies["roce_v2"], valid.switches["roce_v2"]))
    >>> r = simulated_performance(valid, design, PerfRequest(collectives=("all_reduce",),
    ...     sizes_bytes=(2**20,), p2p=False, step=False), level)
    >>> r.backend, r.collectives[0].algorithm
    ('flow', 'flow/Tree/LL128')
    """
    cluster = valid.spec.cluster
    profile = fabric_profile(valid, design, request)
    group = group_for(profile, request.gpus)
    layout = GpuLayout(
        cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node, profile.nvlink_domain_gpus
    )
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
    analytic_points = {(p.collective, p.size_bytes): p for p in analytic.collectives}
    sims = simulated_sizes(request.sizes_bytes, level.sizes_simulated)
    name = level.name
    runs = request.seeds or level.default_seeds
    seeds = run_seeds(request.seed, runs)
    notes = [
        f"{name}: {level.mechanisms}; seed {request.seed}"
        + (
            f" and {runs - 1} child seeds: the value is seed {request.seed}'s run, the"
            " *_seed_low/high range (inside the band) the fastest and slowest run"
            if runs > 1
            else ""
        ),
        f"{name}: fabric time simulated at "
        + ", ".join(f"{s} B" for s in sims)
        + "; other sizes scale the nearest linearly; each size runs the fabric flows of the"
        " algorithm NCCL runs there (the analytic model's pair: NCCL's rings, or its double"
        " binary tree for Tree and NVLSTree), laid over NVLink domains of"
        f" {profile.nvlink_domain_gpus} GPUs and bound by their NVLink part at"
        f" {profile.nvlink_GBps:.0f} GB/s (a tree also by NCCL's per-channel cap);"
        " where NCCL runs Simple, the analytic time with the"
        " simulated transfer in place of its own (NCCL's latency and pipeline kept); where it"
        " runs LL or LL128, the analytic time at the size where it is slower than the 8-byte"
        " latency (alpha) plus the simulated transfer (the protocol, algorithm and pipeline the"
        " simulation does not model)",
        f"{name}: perftest tables, base latency and the training step are the analytic model's",
    ]
    heads = nvls_heads(profile, group)
    points: list[CollectivePoint] = []
    for op in request.collectives:
        ranks_n = gpus
        if op == "all_to_all":
            ranks_n = all_to_all_ranks(gpus, cluster.gpus_per_node, level.max_all_to_all_flows)
            if ranks_n < gpus:
                notes.append(
                    f"{name}: all_to_all simulated on the first {ranks_n} GPUs (flow budget"
                    f" {level.max_all_to_all_flows}); its fabric time is that group's"
                )
        ranks = np.arange(ranks_n, dtype=np.int64)
        # the pair NCCL runs at each size, once: its fabric shape and its steady transfer
        pairs = {
            size: chosen_candidate(profile, group, op, size, request.algorithm)
            for size in request.sizes_bytes
        }
        shapes = {size: fabric_shape(op, pair, heads) for size, pair in pairs.items()}
        per_byte_us: dict[tuple[int, FabricShape], tuple[float, ...]] = {}
        for size in request.sizes_bytes:
            shape = shapes[size]
            key = (nearest_size(size, sims), shape) if shape is not None else None
            if key is None or key in per_byte_us:
                continue
            per_seed: list[float] = []
            for seed in seeds:
                run = level.fabric_run(op, layout, key[0], ranks, seed, key[1])
                per_seed.append(run.fabric_us / run.simulated_bytes if run.simulated_bytes else 0.0)
                if run.note and seed == seeds[0]:
                    notes.append(f"{name}: {run.note}")
            per_byte_us[key] = tuple(per_seed)
        kept: dict[str, list[int]] = {}
        for size in request.sizes_bytes:
            bound = analytic_points[(op, size)]
            shape = shapes[size]
            if shape is None:
                kept.setdefault(pairs[size].algorithm, []).append(size)
                points.append(bound.model_copy(update={"algorithm": f"{name}/{bound.algorithm}"}))
                continue
            floor_us = unsimulated_bound_us(op, shape, size, ranks_n, profile, group, pairs[size])
            fabric_us = [
                bounded_fabric_us(us * size, floor_us)
                for us in per_byte_us[(nearest_size(size, sims), shape)]
            ]
            alpha = alpha_us.get(op, 0.0)
            transfer = transfer_time_us(size, pairs[size].algbw_GBps)
            point = simulated_point(
                op, size, gpus, alpha, fabric_us[0], name, bound, transfer, shape
            )
            if len(fabric_us) > 1:
                low = composed_time_us(bound, alpha, min(fabric_us), transfer)
                high = composed_time_us(bound, alpha, max(fabric_us), transfer)
                point = point.model_copy(
                    update={"time_us_seed_low": low, "time_us_seed_high": high}
                )
            points.append(point)
        notes += [
            f"{name}: {op} at {', '.join(f'{s} B' for s in sizes)} keeps the analytic model's"
            f" time: NCCL runs {algorithm} there, and {UNSIMULATED_ALGORITHMS[algorithm]}"
            for algorithm, sizes in kept.items()
        ]
        if op in ("all_gather", "reduce_scatter") and any(
            pairs[size].algorithm == "PAT" for size in request.sizes_bytes
        ):
            notes.append(
                f"{name}: {op}: where NCCL runs PAT, the ring stands in for it (each rank sends"
                " the ring's (n-1)/n of the buffer; PAT's peers sit at power-of-two distances)"
            )
    return PerformanceResult(
        backend=name,
        technology=design.technology,
        base_latency_us=analytic.base_latency_us,
        p2p=analytic.p2p,
        collectives=tuple(points),
        step=analytic.step,
        notes=(*notes, *analytic.notes),
    )
