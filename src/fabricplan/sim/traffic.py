"""Traffic for the flow-level simulator: flows between host ports, grouped into dependent steps.

A :class:`Traffic` is a table of flows (source and destination NIC port, bytes, step, arrival
offset) and a tuple of :class:`StepSpec` (name, the collective it belongs to, the steps it waits
for). Builders return traffic for the patterns of the flow-level issue: collectives decomposed
as NCCL runs them over the fabric (ring, double binary tree, all-to-all), synthetic patterns
(permutation, incast, random pairs), background Poisson traffic drawn from a flow-size
distribution, a training step as a dependency graph of collectives, and several jobs placed on
one cluster.

GPUs are numbered ``node * gpus_per_node + local``. A flow between GPUs on different nodes uses,
at both ends, the NIC port(s) of the *destination* GPU's rail: NCCL's PXN moves data over NVLink
to the GPU on the destination's rail first, so that same-rail NICs talk (and a rail-optimized
fabric with one spine set per rail can carry every pair). Traffic between GPUs of one NVLink
domain (a node, or the trays of a GB200 NVL72 rack: :attr:`GpuLayout.domain_gpus`) stays on
NVLink and is not a fabric flow.

>>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
>>> t = all_to_all(layout, 32 * 2**20)
>>> t.flows, int(t.size_bytes[0])  # 32 x 24 off-node pairs, S/n each
(768, 1048576)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

RingCollective = Literal["all_reduce", "all_gather", "reduce_scatter", "broadcast"]
Placement = Literal["packed", "fragmented"]

WEBSEARCH_CDF: tuple[tuple[float, float], ...] = (
    (0, 0.0),
    (10_000, 0.15),
    (20_000, 0.20),
    (30_000, 0.30),
    (50_000, 0.40),
    (80_000, 0.53),
    (200_000, 0.60),
    (1_000_000, 0.70),
    (2_000_000, 0.80),
    (5_000_000, 0.90),
    (10_000_000, 0.97),
    (30_000_000, 1.0),
)
"""Web-search flow sizes (bytes, cumulative probability), from the DCTCP paper's measurements
as the HPCC paper uses them: alibaba-edu/High-Precision-Congestion-Control
traffic_gen/WebSearch_distribution.txt @9cf8b9e8c8d0. Sizes between points are interpolated
linearly, as that generator does."""

RING_BYTES_FACTOR: dict[RingCollective, tuple[int, int]] = {
    "all_reduce": (2, 1),
    "all_gather": (1, 1),
    "reduce_scatter": (1, 1),
    "broadcast": (0, 0),
}
"""Bytes each ring edge carries, as ``a(n-1)/n`` times the buffer (``(a, 1)``), or the whole
buffer for a pipelined broadcast (``(0, 0)``): nccl-tests PERFORMANCE.md."""


@dataclass(frozen=True)
class GpuLayout:
    """How GPUs sit on nodes and NIC ports."""

    gpus: int
    gpus_per_node: int
    nics_per_node: int
    domain_gpus: int = 0
    """GPUs of one NVLink domain, a whole number of nodes (``FabricProfile.nvlink_domain_gpus``:
    72 for a GB200 NVL72 rack of 18 trays); 0: one node."""

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    @property
    def nvlink_domain(self) -> int:
        """GPUs of one NVLink domain (:attr:`domain_gpus`, or one node's).

        >>> GpuLayout(144, 4, 4).nvlink_domain, GpuLayout(144, 4, 4, 72).nvlink_domain
        (4, 72)
        """
        return self.domain_gpus or self.gpus_per_node

    @property
    def ports_per_gpu(self) -> int:
        """NIC ports one GPU's traffic is spread over (more than one with several planes)."""
        return max(1, self.nics_per_node // self.gpus_per_node)

    def rail_port(self, gpu: IntArray) -> IntArray:
        """The first NIC port (index on the node) of each GPU's rail."""
        local = np.asarray(gpu) % self.gpus_per_node
        return (local * self.nics_per_node // self.gpus_per_node).astype(np.int64)


@dataclass(frozen=True)
class StepSpec:
    """One step of a traffic graph: its flows start when every step in ``deps`` has finished
    (plus ``delay_us``, e.g. compute between collectives)."""

    name: str
    collective: str
    """The collective (or pattern) this step belongs to; steps of one collective are timed
    together."""
    deps: tuple[int, ...] = ()
    delay_us: float = 0.0
    latency_steps: int = 1
    """Algorithm steps a message takes in sequence (each pays the path latency once), e.g.
    ``2(n-1)`` for a ring all_reduce; only the collective's time uses it."""
    job: int = 0


@dataclass(frozen=True, eq=False)
class Traffic:
    """Flows between host ports, in steps."""

    src: IntArray
    dst: IntArray
    size_bytes: FloatArray
    step: IntArray
    offset_us: FloatArray
    """Arrival of each flow after its step starts (0 for a collective)."""
    steps: tuple[StepSpec, ...]

    @property
    def flows(self) -> int:
        return int(self.src.size)

    @property
    def total_bytes(self) -> float:
        return float(self.size_bytes.sum())

    def whole_bytes(self) -> IntArray:
        """Each flow's size rounded up to whole bytes, at least one (what a transport sends).

        >>> incast(GpuLayout(3, 1, 1), 2, 2.5).whole_bytes().tolist()
        [3, 3]
        """
        sizes = np.ceil(np.asarray(self.size_bytes, dtype=np.float64))
        return np.maximum(sizes, 1).astype(np.int64)

    def packet_counts(self, payload_bytes: int) -> IntArray:
        """Packets of each flow at ``payload_bytes`` of payload per packet (the last one short).

        >>> incast(GpuLayout(3, 1, 1), 2, 10_000).packet_counts(4_000).tolist()
        [3, 3]
        """
        return (self.whole_bytes() + payload_bytes - 1) // payload_bytes


def _empty() -> Traffic:
    zero_i = np.zeros(0, dtype=np.int64)
    return Traffic(zero_i, zero_i, np.zeros(0), zero_i, np.zeros(0), ())


def gpu_flows(
    layout: GpuLayout,
    src_gpu: IntArray,
    dst_gpu: IntArray,
    size_bytes: FloatArray | float,
    step: StepSpec,
    qps: int = 1,
    offset_us: FloatArray | float = 0.0,
) -> Traffic:
    """One step of flows between GPUs, mapped onto NIC ports (rail of the destination GPU).

    Pairs in one NVLink domain are dropped (NVLink). Each connection is split over the GPU's NIC
    ports (planes) and over ``qps`` queue pairs, each a flow of its own (its own UDP source port).

    >>> layout = GpuLayout(gpus=16, gpus_per_node=8, nics_per_node=8)
    >>> t = gpu_flows(layout, np.array([0, 1]), np.array([9, 2]), 1e6, StepSpec("s", "p"))
    >>> t.src.tolist(), t.dst.tolist()  # GPU 0 -> GPU 9 leaves on rail 1; 1 -> 2 is NVLink
    ([1], [9])
    """
    src_gpu = np.asarray(src_gpu, dtype=np.int64)
    dst_gpu = np.asarray(dst_gpu, dtype=np.int64)
    sizes = np.broadcast_to(np.asarray(size_bytes, dtype=np.float64), src_gpu.shape)
    offsets = np.broadcast_to(np.asarray(offset_us, dtype=np.float64), src_gpu.shape)
    gpn, nics = layout.gpus_per_node, layout.nics_per_node
    domain = layout.nvlink_domain
    off_node = src_gpu // domain != dst_gpu // domain
    src_gpu, dst_gpu = src_gpu[off_node], dst_gpu[off_node]
    sizes, offsets = sizes[off_node], offsets[off_node]
    split = layout.ports_per_gpu * qps
    port = layout.rail_port(dst_gpu)
    sub = np.arange(split, dtype=np.int64) // qps
    src = ((src_gpu // gpn) * nics + port)[:, None] + sub[None, :]
    dst = ((dst_gpu // gpn) * nics + port)[:, None] + sub[None, :]
    n = src.size
    return Traffic(
        src=src.ravel(),
        dst=dst.ravel(),
        size_bytes=np.repeat(sizes / split, split),
        step=np.zeros(n, dtype=np.int64),
        offset_us=np.repeat(offsets, split),
        steps=(step,),
    )


def combine(parts: Sequence[Traffic]) -> Traffic:
    """Several traffic graphs as one (step numbers and dependencies renumbered; jobs kept).

    >>> layout = GpuLayout(gpus=16, gpus_per_node=8, nics_per_node=8)
    >>> both = combine([permutation(layout, 1e6, seed=0), incast(layout, 1, 1e6)])
    >>> [s.name for s in both.steps], both.flows
    (['permutation', 'incast'], 17)
    """
    parts = [p for p in parts if p.steps]
    if not parts:
        return _empty()
    steps: list[StepSpec] = []
    step_ids: list[IntArray] = []
    for part in parts:
        base = len(steps)
        steps += [
            StepSpec(
                s.name,
                s.collective,
                tuple(d + base for d in s.deps),
                s.delay_us,
                s.latency_steps,
                s.job,
            )
            for s in part.steps
        ]
        step_ids.append(part.step + base)
    return Traffic(
        src=np.concatenate([p.src for p in parts]),
        dst=np.concatenate([p.dst for p in parts]),
        size_bytes=np.concatenate([p.size_bytes for p in parts]),
        step=np.concatenate(step_ids),
        offset_us=np.concatenate([p.offset_us for p in parts]),
        steps=tuple(steps),
    )


def for_job(traffic: Traffic, job: int, prefix: str = "") -> Traffic:
    """The same traffic labelled as job ``job`` (collective names get ``prefix``)."""
    steps = tuple(
        StepSpec(s.name, prefix + s.collective, s.deps, s.delay_us, s.latency_steps, job)
        for s in traffic.steps
    )
    return Traffic(
        traffic.src, traffic.dst, traffic.size_bytes, traffic.step, traffic.offset_us, steps
    )


def _ranks(layout: GpuLayout, ranks: IntArray | None) -> IntArray:
    if ranks is None:
        return np.arange(layout.gpus, dtype=np.int64)
    out = np.asarray(ranks, dtype=np.int64)
    if out.size and (out.min() < 0 or out.max() >= layout.gpus):
        raise ModelError(
            "FP533",
            "traffic",
            "a rank is outside the cluster",
            int(out.max()),
            f"use GPUs 0..{layout.gpus - 1}",
        )
    return out


def all_to_all(
    layout: GpuLayout,
    size_bytes: float,
    ranks: IntArray | None = None,
    schedule: Literal["concurrent", "pairwise"] = "concurrent",
    qps: int = 1,
    name: str = "all_to_all",
) -> Traffic:
    """Every rank sends ``size_bytes / n`` to every other rank (nccl-tests ``alltoall``).

    ``concurrent`` posts every send at once, as NCCL's grouped send/recv does; ``pairwise``
    runs ``n - 1`` dependent steps, step ``k`` sending from rank ``i`` to rank ``i + k``.

    >>> layout = GpuLayout(gpus=16, gpus_per_node=8, nics_per_node=8)
    >>> len(all_to_all(layout, 1e6, schedule="pairwise").steps)
    15
    """
    ranks = _ranks(layout, ranks)
    n = ranks.size
    if n < 2:
        return _empty()
    chunk = size_bytes / n
    if schedule == "concurrent":
        a = np.repeat(ranks, n)
        b = np.tile(ranks, n)
        return gpu_flows(layout, a, b, chunk, StepSpec(name, name, latency_steps=1), qps)
    parts = []
    for k in range(1, n):
        deps = (k - 2,) if k > 1 else ()
        step = StepSpec(f"{name} step {k}", name, deps, latency_steps=1)
        part = gpu_flows(layout, ranks, np.roll(ranks, -k), chunk, step, qps)
        parts.append(
            Traffic(part.src, part.dst, part.size_bytes, part.step, part.offset_us, (step,))
        )
    return _chain(parts)


def _chain(parts: list[Traffic]) -> Traffic:
    """Combine parts whose step dependencies already count steps across the whole list."""
    steps = tuple(p.steps[0] for p in parts)
    return Traffic(
        src=np.concatenate([p.src for p in parts]),
        dst=np.concatenate([p.dst for p in parts]),
        size_bytes=np.concatenate([p.size_bytes for p in parts]),
        step=np.concatenate([np.full(p.flows, i, dtype=np.int64) for i, p in enumerate(parts)]),
        offset_us=np.concatenate([p.offset_us for p in parts]),
        steps=steps,
    )


def _node_groups(layout: GpuLayout, ranks: IntArray, per: int = 0) -> list[IntArray]:
    """The ranks of each node (of each group of ``per`` GPUs when given), in order of first
    appearance."""
    nodes = ranks // (per or layout.gpus_per_node)
    _, first = np.unique(nodes, return_index=True)
    order = nodes[np.sort(first)]
    return [ranks[nodes == node] for node in order]


def ring(
    layout: GpuLayout,
    collective: RingCollective,
    size_bytes: float,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """The fabric flows of a ring collective, as NCCL lays rings over NVLink domains.

    A ring visits the ranks of an NVLink domain (a node, or a GB200 NVL72 rack's trays:
    :attr:`GpuLayout.domain_gpus`) over NVLink and crosses the fabric once per domain; there
    are as many rings (channels) as ranks per domain, ring ``c`` leaving domain ``i`` from its
    ``c``-th rank towards the ``c``-th rank of domain ``i+1`` (same rail). The NVLink edges are
    not fabric flows (:func:`ring_nvlink_bytes` is what they carry). Each ring carries
    ``1/channels`` of the buffer; an edge carries ``2(n-1)/n`` of it for all_reduce,
    ``(n-1)/n`` for all_gather and reduce_scatter, all of it for broadcast (a chain from the
    root, no wrap-around). The steps are pipelined, so each edge is one flow.

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> t = ring(layout, "all_reduce", 2**20)
    >>> t.flows, float(t.size_bytes[0]) == 2 * 31 / 32 * 2**20 / 8
    (32, True)
    >>> ring(GpuLayout(144, 4, 4, domain_gpus=72), "all_reduce", 2**20).flows  # 2 NVL72 racks
    144
    """
    ranks = _ranks(layout, ranks)
    n = ranks.size
    groups = _node_groups(layout, ranks, layout.nvlink_domain)
    channels = min(g.size for g in groups) if groups else 0
    steps_n = {"all_reduce": 2 * (n - 1), "broadcast": max(len(groups) - 1, 0)}.get(
        collective, n - 1
    )
    step = StepSpec(collective, collective, latency_steps=max(steps_n, 1))
    if len(groups) < 2:
        return Traffic(*_empty_arrays(), steps=(step,))
    scale, per = RING_BYTES_FACTOR[collective]
    share = scale * (n - 1) / n if per else 1.0
    starts = np.array([g[:channels] for g in groups])  # (nodes, channels)
    nxt = np.roll(starts, -1, axis=0)
    if collective == "broadcast":
        starts, nxt = starts[:-1], nxt[:-1]
    return gpu_flows(layout, starts.ravel(), nxt.ravel(), share * size_bytes / channels, step, qps)


def ring_nvlink_bytes(
    collective: RingCollective, size_bytes: float, ranks: int, domain_ranks: int, domains: int
) -> float:
    """Bytes one GPU sends over NVLink in the rings :func:`ring` lays (``size_bytes`` per rank).

    Each GPU sends ``a(n-1)/n`` of the buffer in all (the whole of it for broadcast): every
    edge of a ring inside one domain, and ``(L-1)/L`` of it across ``domains > 1`` domains of
    ``L`` ranks, where one of the ``L`` rings a GPU is on leaves the domain from it over the
    fabric. The ring is pipelined, so its time is the slower of the fabric flows and this
    traffic at NVLink's rate (the analytic ring's ``min(B_net, B_nvl L / (L - 1))``).

    >>> ring_nvlink_bytes("all_reduce", 2**20, 8, 8, 1) == 2 * 7 / 8 * 2**20
    True
    >>> ring_nvlink_bytes("all_reduce", 72.0, 144, 72, 2) == 2 * 143 / 144 * 71
    True
    """
    if ranks < 2:
        return 0.0
    scale, per = RING_BYTES_FACTOR[collective]
    sent = scale * (ranks - 1) / ranks * size_bytes if per else size_bytes
    if domains > 1:
        sent *= (domain_ranks - 1) / domain_ranks
    return sent


def _empty_arrays() -> tuple[IntArray, IntArray, FloatArray, IntArray, FloatArray]:
    zero_i = np.zeros(0, dtype=np.int64)
    return zero_i, zero_i, np.zeros(0), zero_i, np.zeros(0)


def nccl_btree_parents(count: int) -> IntArray:
    """Parent of each of ``count`` ranks in NCCL's binary tree (-1 for the root, rank 0).

    NCCL's ``ncclGetBtree`` (``src/graph/trees.cc``, NVIDIA/nccl v2.19-v2.30) numbers the tree
    in order: a rank whose lowest set bit is ``b`` has its parent ``b`` ranks away (at
    ``rank ^ b | 2b``, or ``rank ^ b`` where that is out of range) and its children ``b/2``
    ranks away on each side; odd ranks are leaves, and rank 0 is the root with one child.

    >>> nccl_btree_parents(4).tolist(), nccl_btree_parents(6).tolist()
    ([-1, 2, 0, 2], [-1, 2, 4, 2, 0, 4])
    """
    parent = np.full(count, -1, dtype=np.int64)
    for rank in range(1, count):
        bit = rank & -rank
        up = (rank ^ bit) | (bit << 1)
        parent[rank] = up if up < count else rank ^ bit
    return parent


def nccl_double_tree_parents(count: int) -> tuple[IntArray, IntArray]:
    """Parents of ``count`` ranks in NCCL's double binary tree: :func:`nccl_btree_parents`
    and its mirror (rank ``r`` at ``count - 1 - r``) where ``count`` is even, or its shift by
    one rank where it is odd (``ncclGetDtree``, ``src/graph/trees.cc``). Mirrored, every rank
    is interior (has children) in at most one tree, so the two trees, each carrying half of
    the buffer, load every rank's links alike; shifted (odd counts) one rank can be interior
    in both.

    >>> [p.tolist() for p in nccl_double_tree_parents(4)]
    [[-1, 2, 0, 2], [1, 3, 1, -1]]
    >>> [p.tolist() for p in nccl_double_tree_parents(3)]
    [[-1, 2, 0], [1, -1, 0]]
    """
    first = nccl_btree_parents(count)
    ranks = np.arange(count, dtype=np.int64)
    if count % 2 == 0:
        up = first[count - 1 - ranks]
        second = np.where(up < 0, -1, count - 1 - up)
    else:
        up = first[(ranks - 1) % count]
        second = np.where(up < 0, -1, (up + 1) % count)
    return first, second.astype(np.int64)


def tree_channel_ranks(group: IntArray, channels: int) -> IntArray:
    """The ``channels`` ranks of one NVLink domain whose NICs carry a tree's channels: every
    rank when ``channels`` is the domain's size (NCCL's Tree: one channel per NIC), else
    ``channels`` spread evenly over it (NVLSTree's NVLS heads, one per NIC).

    >>> tree_channel_ranks(np.arange(8), 4).tolist()
    [0, 2, 4, 6]
    """
    pick = np.arange(channels, dtype=np.int64) * group.size // channels
    return group[pick]


def tree_all_reduce(
    layout: GpuLayout,
    size_bytes: float,
    ranks: IntArray | None = None,
    qps: int = 1,
    heads: int = 0,
) -> Traffic:
    """The fabric flows of NCCL's double-binary-tree all_reduce over NVLink domains.

    The trees run between NVLink domains (a node, or a GB200 NVL72 rack's trays:
    :attr:`GpuLayout.domain_gpus`), as :func:`ring` does; inside a domain the ranks form a chain
    over NVLink, which is not a fabric flow (:func:`tree_nvlink_bytes`). The two trees are
    NCCL's (:func:`nccl_double_tree_parents`, the binary tree and its mirror or shift), each
    reducing and then broadcasting half of the buffer, spread over the domain's channels:
    channel ``c`` crosses the fabric from the ``c``-th rank of each domain (its rail), so every
    tree edge carries ``S / 2 / channels`` once up and once down per channel. ``heads`` ranks
    per domain carry the channels (NVLSTree's NVLS heads, :func:`tree_channel_ranks`); 0: every
    rank. Both phases are pipelined, so each edge direction is one flow.

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> t = tree_all_reduce(layout, 2**20)
    >>> t.flows, t.total_bytes == 2 * 2 * 3 * 2**20 / 2   # 2 trees x 2 ways x 3 edges x S/2
    (96, True)
    >>> tree_all_reduce(GpuLayout(216, 4, 4, domain_gpus=72), 2**20).flows  # 3 NVL72 racks
    576
    """
    ranks = _ranks(layout, ranks)
    groups = _node_groups(layout, ranks, layout.nvlink_domain)
    domains = len(groups)
    step = StepSpec(
        "tree all_reduce",
        "all_reduce",
        latency_steps=2 * max(1, int(np.ceil(np.log2(max(domains, 2))))),
    )
    if domains < 2:
        return Traffic(*_empty_arrays(), steps=(step,))
    smallest = min(g.size for g in groups)
    channels = min(heads, smallest) if heads > 0 else smallest
    firsts = np.array([tree_channel_ranks(g, channels) for g in groups])  # (domains, channels)
    src_parts, dst_parts = [], []
    for parent in nccl_double_tree_parents(domains):
        child = np.flatnonzero(parent >= 0)
        par = parent[child]
        for a, b in ((child, par), (par, child)):
            src_parts.append(firsts[a].ravel())
            dst_parts.append(firsts[b].ravel())
    return gpu_flows(
        layout,
        np.concatenate(src_parts),
        np.concatenate(dst_parts),
        size_bytes / 2 / channels,
        step,
        qps,
    )


def tree_nvlink_bytes(size_bytes: float, domain_ranks: int) -> float:
    """Bytes one GPU sends over NVLink in the trees :func:`tree_all_reduce` lays
    (``size_bytes`` per rank): inside a domain of ``L`` ranks each channel's ranks form a chain
    whose ``L - 1`` NVLink edges carry the channel's ``1/L`` of the buffer once up (reduce) and
    once down (broadcast), so the domain's GPUs send ``2 (L - 1) S`` in all, ``2 (L - 1) / L x
    S`` each. The pipelined chain runs at the rate of its NVLink edges, so the tree's time is
    the slower of its fabric flows and this traffic at NVLink's rate (the analytic tree's
    ``B_nvl / 2`` bound, there without the ``(L - 1) / L``).

    >>> tree_nvlink_bytes(2**20, 8) == 2 * 7 / 8 * 2**20
    True
    >>> tree_nvlink_bytes(2**20, 1)
    0.0
    """
    return 2.0 * (domain_ranks - 1) / domain_ranks * size_bytes


def nvls_nvlink_bytes(size_bytes: float, domain_ranks: int) -> float:
    """Bytes one GPU moves each way over NVLink in NVLS (NVLink SHARP, the domain part of
    NVLSTree): the switch reduces, and each GPU sends ``S (1 + 1/L)`` (the analytic NVLS
    bound, ``B_nvl L / (L + 1)``); 0 for one rank.

    >>> nvls_nvlink_bytes(8.0, 8)
    9.0
    """
    if domain_ranks < 2:
        return 0.0
    return size_bytes * (domain_ranks + 1) / domain_ranks


def all_to_all_nvlink_bytes(size_bytes: float, ranks: int, domain_ranks: int) -> float:
    """Bytes one GPU sends over NVLink in :func:`all_to_all` (``size_bytes`` per rank): the
    ``S / n`` to each of the other ``L - 1`` ranks of its NVLink domain, which
    :func:`gpu_flows` drops from the fabric.

    >>> all_to_all_nvlink_bytes(32.0, 32, 8)
    7.0
    """
    if ranks < 2:
        return 0.0
    return size_bytes * (min(domain_ranks, ranks) - 1) / ranks


def permutation(
    layout: GpuLayout,
    size_bytes: float,
    seed: int,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """Every rank sends ``size_bytes`` to one rank and receives from one: a random derangement
    of the nodes applied to every rail, so every NIC port sends to and receives from exactly
    one port of its own rail.

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> t = permutation(layout, 1e6, seed=1)
    >>> sorted(t.src.tolist()) == sorted(t.dst.tolist()) == list(range(32))
    True
    """
    ranks = _ranks(layout, ranks)
    groups = _node_groups(layout, ranks)
    nodes = len(groups)
    step = StepSpec("permutation", "permutation")
    if nodes < 2:
        return Traffic(*_empty_arrays(), steps=(step,))
    rng = np.random.default_rng(seed)
    # A derangement: a random cyclic shift of a random order of the nodes.
    order = rng.permutation(nodes)
    shift = int(rng.integers(1, nodes))
    target = np.empty(nodes, dtype=np.int64)
    target[order] = order[(np.arange(nodes) + shift) % nodes]
    width = min(g.size for g in groups)
    src = np.concatenate([groups[i][:width] for i in range(nodes)])
    dst = np.concatenate([groups[int(target[i])][:width] for i in range(nodes)])
    return gpu_flows(layout, src, dst, size_bytes, step, qps)


def incast(
    layout: GpuLayout,
    senders: int,
    size_bytes: float,
    receiver: int | None = None,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """``senders`` GPUs on other nodes each send ``size_bytes`` to ``receiver`` (N-to-1).

    The receiver is the first of ``ranks`` unless given; senders are its rail-mates on the
    following nodes, then the other GPUs of those nodes (all within ``ranks``). Every flow ends
    on the receiver's NIC port, so the incast finishes no sooner than ``N * S / B``.

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> incast(layout, 3, 1e6, receiver=0).src.tolist()
    [8, 16, 24]
    """
    allowed = _ranks(layout, ranks)
    gpn = layout.gpus_per_node
    target = int(allowed[0]) if receiver is None else receiver
    home = target // gpn
    others = [(home + k) % layout.nodes for k in range(1, layout.nodes)]
    local = target % gpn
    order = [node * gpn + (local + j) % gpn for j in range(gpn) for node in others]
    candidates = [g for g in order if g in set(allowed.tolist())]
    if senders < 1 or senders > len(candidates):
        raise ModelError(
            "FP533",
            "incast",
            "senders must be between 1 and the GPUs on other nodes",
            senders,
            f"use 1..{len(candidates)}",
        )
    src = np.array(candidates[:senders], dtype=np.int64)
    return gpu_flows(
        layout, src, np.full(senders, target), size_bytes, StepSpec("incast", "incast"), qps
    )


def random_pairs(
    layout: GpuLayout,
    flows: int,
    size_bytes: float,
    seed: int,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """Up to ``flows`` flows between random ranks (pairs on one node stay on NVLink and are
    dropped).

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> random_pairs(layout, 10, 1e6, seed=0).flows
    10
    """
    rng = np.random.default_rng(seed)
    if ranks is None:
        src = rng.integers(0, layout.gpus, flows)
        other = rng.integers(1, max(layout.nodes, 2), flows)
        dst_node = (src // layout.gpus_per_node + other) % layout.nodes
        dst = dst_node * layout.gpus_per_node + rng.integers(0, layout.gpus_per_node, flows)
    else:
        chosen = _ranks(layout, ranks)
        src = chosen[rng.integers(0, chosen.size, flows)]
        dst = chosen[rng.integers(0, chosen.size, flows)]
    return gpu_flows(layout, src, dst, size_bytes, StepSpec("random", "random"), qps)


def sample_sizes(cdf: Sequence[tuple[float, float]], count: int, seed: int) -> FloatArray:
    """Flow sizes drawn from a piecewise-linear CDF (inverse transform).

    >>> sizes = sample_sizes(WEBSEARCH_CDF, 10_000, seed=0)
    >>> bool(0 <= sizes.min() and sizes.max() <= 30_000_000)
    True
    """
    points = np.asarray(cdf, dtype=np.float64)
    u = np.random.default_rng(seed).random(count)
    return np.maximum(np.interp(u, points[:, 1], points[:, 0]), 1.0)


def mean_size_bytes(cdf: Sequence[tuple[float, float]]) -> float:
    """Mean of a piecewise-linear CDF.

    >>> round(mean_size_bytes(WEBSEARCH_CDF) / 1e6, 2)
    1.71
    """
    points = np.asarray(cdf, dtype=np.float64)
    dp = np.diff(points[:, 1])
    mid = (points[1:, 0] + points[:-1, 0]) / 2
    return float((dp * mid).sum())


def background(
    layout: GpuLayout,
    load: float,
    duration_us: float,
    nic_bytes_per_us: float,
    seed: int,
    cdf: Sequence[tuple[float, float]] = WEBSEARCH_CDF,
    ranks: IntArray | None = None,
) -> Traffic:
    """Poisson arrivals at every rank, at ``load`` of its NIC rate, sizes drawn from ``cdf``,
    destinations uniform over the ranks of other nodes (the HPCC paper's traffic generator).

    >>> layout = GpuLayout(gpus=32, gpus_per_node=8, nics_per_node=8)
    >>> t = background(layout, 0.3, 1000.0, 50_000.0, seed=0)
    >>> bool(t.flows > 0 and t.offset_us.max() < 1000.0)
    True
    """
    if not 0 < load <= 1:
        raise ModelError(
            "FP533",
            "background.load",
            "must be in (0, 1]",
            load,
            "give the share of the NIC rate, e.g. 0.3",
        )
    ranks = _ranks(layout, ranks)
    rng = np.random.default_rng(seed)
    rate_per_us = load * nic_bytes_per_us / mean_size_bytes(cdf)
    counts = rng.poisson(rate_per_us * duration_us, ranks.size)
    src = np.repeat(ranks, counts)
    total = int(counts.sum())
    # Arrival times of a Poisson process on [0, T) given its count are uniform order stats.
    offsets = rng.random(total) * duration_us
    dst = ranks[rng.integers(0, ranks.size, total)]
    sizes = sample_sizes(cdf, total, int(rng.integers(0, 2**31)))
    step = StepSpec("background", "background")
    return gpu_flows(layout, src, dst, sizes, step, offset_us=offsets)


def place_jobs(
    layout: GpuLayout, gpus_per_job: Sequence[int], placement: Placement, seed: int
) -> list[IntArray]:
    """The GPUs of each job: whole nodes, ``packed`` (consecutive nodes, so a job fills leaves
    and pods) or ``fragmented`` (nodes drawn at random across the cluster).

    >>> layout = GpuLayout(gpus=64, gpus_per_node=8, nics_per_node=8)
    >>> [r[:2].tolist() for r in place_jobs(layout, [16, 16], "packed", seed=0)]
    [[0, 1], [16, 17]]
    """
    gpn = layout.gpus_per_node
    needed = [-(-g // gpn) for g in gpus_per_job]
    if sum(needed) > layout.nodes:
        raise ModelError(
            "FP533",
            "jobs",
            "need more nodes than the cluster has",
            sum(needed),
            f"fit the jobs in {layout.nodes} nodes",
        )
    nodes = np.arange(layout.nodes, dtype=np.int64)
    if placement == "fragmented":
        nodes = np.random.default_rng(seed).permutation(layout.nodes).astype(np.int64)
    out, first = [], 0
    for count, gpus in zip(needed, gpus_per_job, strict=True):
        chosen = np.sort(nodes[first : first + count])
        first += count
        out.append((chosen[:, None] * gpn + np.arange(gpn)[None, :]).ravel()[:gpus])
    return out


def training_step(
    layout: GpuLayout,
    *,
    tp: int,
    pp: int,
    ep: int,
    grad_bytes: float,
    activation_bytes: float,
    expert_bytes: float,
    ranks: IntArray | None = None,
    qps: int = 1,
) -> Traffic:
    """One training step's fabric traffic as a dependency graph of collectives.

    Ranks are laid out tensor-parallel innermost, then data-parallel, then pipeline stages
    (Megatron-LM's default order). The graph: forward send/recv of ``activation_bytes`` per
    rank from stage to stage; if ``ep > 1``, the expert all_to_all dispatch and combine
    (``expert_bytes`` per rank each) in groups of ``ep`` data-parallel ranks; the backward
    send/recv from the last stage to the first; then the data-parallel ring all_reduce of
    ``grad_bytes`` per rank. One micro-batch, no compute and no overlap: the fabric's share of
    the step.

    >>> layout = GpuLayout(gpus=64, gpus_per_node=8, nics_per_node=8)
    >>> t = training_step(layout, tp=8, pp=2, ep=1, grad_bytes=1e8, activation_bytes=1e7,
    ...                   expert_bytes=0)
    >>> [s.name for s in t.steps]
    ['pp forward 0->1', 'pp backward 1->0', 'dp all_reduce']
    """
    ranks = _ranks(layout, ranks)
    if tp < 1 or pp < 1 or ep < 1 or ranks.size % (tp * pp):
        raise ModelError(
            "FP533",
            "workload",
            "tp x pp must divide the GPUs",
            ranks.size,
            "choose tp, pp that divide the cluster",
        )
    dp = ranks.size // (tp * pp)
    grid = ranks.reshape(pp, dp, tp)
    parts: list[Traffic] = []

    def add(part: Traffic, name: str, collective: str, latency_steps: int) -> None:
        deps = (len(parts) - 1,) if parts else ()
        step = StepSpec(name, collective, deps, latency_steps=latency_steps)
        parts.append(
            Traffic(part.src, part.dst, part.size_bytes, part.step, part.offset_us, (step,))
        )

    for s in range(pp - 1):
        if activation_bytes > 0:
            add(
                gpu_flows(
                    layout,
                    grid[s].ravel(),
                    grid[s + 1].ravel(),
                    activation_bytes,
                    StepSpec("", ""),
                    qps,
                ),
                f"pp forward {s}->{s + 1}",
                "pp sendrecv",
                1,
            )
    if ep > 1 and expert_bytes > 0 and dp % ep == 0:
        groups = grid.transpose(0, 2, 1).reshape(-1, ep)  # (pp * tp * dp/ep, ep)
        a = np.repeat(groups, ep, axis=1).ravel()
        b = np.tile(groups, (1, ep)).ravel()
        for phase in ("dispatch", "combine"):
            add(
                gpu_flows(layout, a, b, expert_bytes / ep, StepSpec("", ""), qps),
                f"ep all_to_all {phase}",
                "ep all_to_all",
                1,
            )
    for s in range(pp - 1, 0, -1):
        if activation_bytes > 0:
            add(
                gpu_flows(
                    layout,
                    grid[s].ravel(),
                    grid[s - 1].ravel(),
                    activation_bytes,
                    StepSpec("", ""),
                    qps,
                ),
                f"pp backward {s}->{s - 1}",
                "pp sendrecv",
                1,
            )
    if dp > 1 and grad_bytes > 0:
        dp_groups = grid.transpose(0, 2, 1).reshape(-1, dp)  # one ring per (stage, tp rank)
        rings = [ring(layout, "all_reduce", grad_bytes, g, qps) for g in dp_groups]
        merged = combine(rings)
        add(
            Traffic(
                merged.src,
                merged.dst,
                merged.size_bytes,
                np.zeros(merged.flows, dtype=np.int64),
                merged.offset_us,
                (StepSpec("", ""),),
            ),
            "dp all_reduce",
            "dp all_reduce",
            2 * (dp - 1),
        )
    if not parts:
        return Traffic(*_empty_arrays(), steps=(StepSpec("empty", "training_step"),))
    return _chain(parts)
