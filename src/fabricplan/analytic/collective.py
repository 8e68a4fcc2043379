"""Collectives as NCCL runs them: algorithms, protocols, and nccl-tests' algbw and busbw.

Two views of every (algorithm, protocol), as in NCCL itself:

- what NCCL's tuner *expects* (``src/graph/tuning.cc``): one alpha-beta line, ``latency + size /
  algbw``, with a tree's bandwidth lowered at mid sizes by NCCL's ``treeCorrectionFactor``
  (:data:`NCCL_TREE_CORRECTION`); NCCL picks, per size, the pair with the lowest expected time,
  and so do we (:meth:`Candidate.time_us`). ``PerfRequest.algorithm`` forces one algorithm, as
  ``NCCL_ALGO`` does; NCCL still picks its protocol.
- what the chosen pair *takes*: the same latency and bandwidth run through NCCL's chunked pipeline
  (:mod:`.pipeline`, :meth:`Candidate.achieved_time_us`), which reduces to the alpha-beta line for
  tiny and for huge buffers.

The bandwidths are derived from the fabric (NIC goodput from the technology's header bytes and
MTU, the NIC's host interface, NICs per node, NVLink, oversubscription and routing through
:mod:`.traffic`), and the network part of each step's latency is the fabric's path latency
(adapters, switch hops, cables) on top of NCCL's software cost per step.

Bandwidth bounds (``B_net`` = goodput of the NICs a domain's ranks own, times the pattern's
topology factor; ``B_nvl`` = NVLink per GPU; ``L`` ranks per NVLink domain, ``D`` domains, ``n``
ranks):

- Ring (hierarchical, rail-aligned): busbw = ``min(B_net, B_nvl * L / (L - 1))``; inside one
  domain busbw = ``B_nvl``. Every rank moves busbw-factor x size bytes; one rank per channel and
  domain moves them over the network, the others over NVLink.
- Tree (double binary tree over domains, chain inside): algbw = ``min(B_net / t, B_nvl / 2,
  C * perChMaxTreeBw / 2)`` with ``t = 1`` for two domains, ``2`` beyond (a node that is interior
  in one tree and a leaf in the other sends ``2 x size``); with two domains busbw can exceed the
  NIC rate (NVIDIA/nccl-tests #169, NVIDIA/nccl #1576). ``C`` tree channels each reach at most
  NCCL's per-channel tree bandwidth (``perChMaxTreeBws``, per release). NCCL's tuner does not
  credit the two-domain saving (it halves every tree's bus bandwidth, ``t = 2``), so by default
  it runs the ring there; a forced tree gets the saving.
- NVLS (NVLink SHARP, one domain): the switch reduces; each GPU moves ``size * (1 + 1/L)`` each
  way, so algbw = ``B_nvl * L / (L + 1) * e`` with the architecture's reduction efficiency
  (:data:`NVLS_REDUCTION_EFFICIENCY`).
- CollNet Direct (InfiniBand SHARP): the fabric's switches reduce, so each domain sends its
  buffer once and receives the result once: algbw = ``min(B_nvl * L / (2 (L - 1)), B_sharp)``.
  SHARP trees are immune to oversubscription and collisions (one stream per link); a switch
  carries at most :data:`SHARP_MAX_TREES_PER_SWITCH` of them.
- CollNet Chain: the domain's GPUs form a chain; the buffer is reduced up it, the head sends it to
  the switches' reduction tree and receives the result, which goes back down the chain. Every GPU
  sends the whole buffer over NVLink twice (up and down): algbw = ``min(B_nvl / 2, B_sharp)``.
- NVLSTree / NVLS with SHARP: NVLS inside the domain, a tree or SHARP between domains.
- PAT (NCCL 2.23+, one GPU per domain): all_gather / reduce_scatter on NCCL's tuner line.
- Point to point (all_to_all, sendrecv): grouped sends; the proxy's posts overlap the data.
- SHARP is used only when ``PerfRequest.in_network_reduction`` allows it (default: wherever the
  technology and the switch have it).

Protocols: LL (8-byte flag per 8 bytes, lowest latency), LL128 (120 of 128 bytes) and Simple;
their bandwidth shares come from ``tuning.cc``, every bound is then scaled by the calibrated
collective efficiency. LL128 runs across domains only where NCCL enables it (:func:`ll128_enabled`).

Every latency, per-channel cap, LL ceiling and rule that changed between NCCL releases is read from
the profile's tables (``FabricProfile.nccl``, :mod:`.nccl_tuning`), never branched on here.

nccl-tests reports ``algbw = size / time`` and ``busbw = algbw * factor`` (nccl-tests
``doc/PERFORMANCE.md``): all_reduce ``2(n-1)/n``; all_gather, reduce_scatter, all_to_all
``(n-1)/n``; broadcast, reduce, sendrecv ``1``. For all_gather and reduce_scatter ``size`` is the
whole gathered buffer; for all_to_all it is what one rank sends in total.

>>> busbw_factor("all_reduce", 8), busbw_factor("all_gather", 8), busbw_factor("sendrecv", 8)
(1.75, 0.875, 1.0)
>>> ring_bytes_per_rank("all_reduce", 2**30, 4) / 2**30   # ring all_reduce: 2(n-1)/n of the data
1.5
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from fabricplan.analytic.pipeline import (
    NCCL_NET_CHANNELS,
    NCCL_NVLINK_CHANNELS,
    NCCL_NVLS_CHANNELS,
    PipelineShape,
    collnet_chain_shape,
    nvlstree_shape,
    pipelined_time_us,
    ring_shape,
    tree_levels,
    tree_shape,
)
from fabricplan.analytic.profile import FabricProfile
from fabricplan.analytic.symmetric_kernel import (
    SymmetricKernelChoice,
    kernel_base_latency_us,
    release_cell_bytes,
    symmetric_kernel_choice,
)
from fabricplan.analytic.traffic import (
    CommGroup,
    all_to_all_pattern,
    group_path_latency_us,
    pattern_throughput,
    ring_hop_latency_us,
    ring_pattern,
    tree_pattern,
)
from fabricplan.errors import ModelError
from fabricplan.model.results import AlgorithmName, CollectiveName, CollectivePoint
from fabricplan.units import transfer_rate_GBps, transfer_time_us

Protocol = str  # "LL" | "LL128" | "Simple"
PROTOCOLS: tuple[Protocol, ...] = ("LL", "LL128", "Simple")

# --- NCCL's tuning constants ---------------------------------------------------------------------
# The per-release tables (base and step latencies, per-channel caps, LL ceilings, the ring plateau,
# PAT) are data: FabricProfile.nccl (:mod:`.nccl_tuning`, ``analytic/data/nccl_tuning.yaml``).
# What follows is the same in every release modelled (2.19-2.30) or is not NCCL's tuner's.

NCCL_PATH_IN_NET_STEP_US = (2 * 350.0 + 130.0) / 1000.0
"""The network path inside NCCL's ``hwLat[NET]``, us (estimate: two ConnectX adapters at the
catalog's 350 ns per side and one Quantum switch hop at 130 ns, on the InfiniBand clusters NCCL
was tuned on). We subtract it and add the fabric's own path latency instead, so that adapters,
hops and cables come from the catalog."""

NCCL_NET_POST_OVERHEAD_US: dict[str, float] = {"intel": 1.0, "amd": 2.0, "arm": 1.0}
"""Proxy cost of posting one network operation by host CPU (``getNetOverhead``,
``src/graph/tuning.cc`` v2.19-v2.30: 1 us on Intel x86, 2 us on AMD x86, 1 us otherwise); a
multi-node ring step costs at least this, three times for Simple."""
NCCL_SIMPLE_POST_MULTIPLIER = 3.0
NCCL_P2P_NET_CHUNK_BYTES = 1 << 17
"""Chunk of a point-to-point transfer across nodes (``NCCL_P2P_NET_CHUNKSIZE``, 128 KiB,
``src/init.cc`` v2.19-v2.30): each chunk to each peer is one network operation the proxy posts
(at :func:`net_post_overhead_us` each)."""

NCCL_TREE_BW_SHARE: dict[Protocol, float] = {
    "LL": 0.92 / 3.8,
    "LL128": 0.92 * 120.0 / 128.0,
    "Simple": 0.92,
}
"""Share of the tree's bandwidth each protocol reaches (``tuning.cc`` 2.19-2.30: a tree's
``busBw * .92``, then LL ``* 1.0/3.8``, LL128 ``* 120.0/128.0`` across nodes). The ring's shares
are per release (``NcclTuning.ring_ll_bw_share``, ...); Simple rings reach 1."""

# fmt: off
NCCL_TREE_CORRECTION: dict[Protocol, tuple[float, ...]] = {
    # sizes 64 B, 128 B, ... 256 MiB
    "LL":     (1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5,
               0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0),
    "LL128":  (1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6,
               0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0),
    "Simple": (0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5,
               0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9),
}
# fmt: on
"""``treeCorrectionFactor`` (``tuning.cc``, v2.19-v2.30): NCCL's tuner multiplies a tree's bandwidth
by entry ``log2(size / 64)`` (64 B to 256 MiB; 1 outside), because "trees are not perfectly sticking
to the model for medium sizes" -- the pipeline fill that :mod:`.pipeline` models."""

NCCL_LL_CLASS_FOR_UNKNOWN_GPU = "ampere"
"""GPU class whose one-node LL ceiling a GPU of unknown class gets (the Ampere row, which 2.19's
table also gave Hopper)."""

NCCL_COLLNET_ARITY_LATENCY_US = 0.4
"""CollNet Direct's per-local-rank serialisation latency (tuning.cc), us."""

NVLS_REDUCTION_EFFICIENCY_HOPPER = 0.836
"""Share of the NVLS traffic bound ``B_nvl * L / (L + 1)`` the Hopper NVSwitch reduction sustains.
NCCL maintainers: 8 x H100 NVLS all_reduce peaks at busbw ~480 GB/s, algbw ~275 GB/s
(NVIDIA/nccl-tests #212); 275 / (450 * 0.865 * 0.95 * 8/9) = 0.836. The same constant gives the
258 GB/s reported at 5 GPUs (NVIDIA/nccl #1455)."""
NCCL_NVLS_EFFICIENCY: dict[str, float] = {"hopper": 0.85, "blackwell": 0.74}
"""NCCL's NVLS efficiency per architecture (``nvlsEfficiency``, ``src/graph/tuning.cc`` @
v2.28.9-1, unchanged to v2.30.7-1): a property of the NVSwitch generation, so it is used for every
release modelled."""
NVLS_REDUCTION_EFFICIENCY: dict[str, float] = {
    gpu: NVLS_REDUCTION_EFFICIENCY_HOPPER * share / NCCL_NVLS_EFFICIENCY["hopper"]
    for gpu, share in NCCL_NVLS_EFFICIENCY.items()
}
"""The measured Hopper share scaled per architecture by NCCL's ratio (Blackwell: 0.836 x 0.74 /
0.85 = 0.728); a GPU of unknown class gets Hopper's."""


def nvls_reduction_efficiency(gpu_class: str | None) -> float:
    """:data:`NVLS_REDUCTION_EFFICIENCY` of a GPU class; Hopper's for an unknown one.

    >>> nvls_reduction_efficiency("blackwell") < nvls_reduction_efficiency(None)
    True
    """
    return NVLS_REDUCTION_EFFICIENCY.get(gpu_class or "", NVLS_REDUCTION_EFFICIENCY_HOPPER)


LL128_NIC_PATHS: dict[str, tuple[str, ...]] = {
    "pre_hopper": ("pix", "pxb"),
    "hopper_and_later": ("pix", "pxb", "p2c", "pxn"),
}
"""GPU-NIC paths over which NCCL enables LL128 across nodes (``tuning.cc`` 2.19-2.30: ``typeInter
<= PATH_PXB``, or ``<= PATH_PXN`` on compute capability 9.0+ -- with ``NCCL_LL128_C2C=1``, the
default, since 2.27); the intra-node path must also be NVLink (``typeIntra <= PATH_NVB``)."""

NCCL_MAX_NVLS_ARITY = 32
"""Most NVLS heads (channels of the NVLS graph) per domain (``NCCL_MAX_NVLS_ARITY``,
``src/include/device.h``, v2.19-v2.30)."""

SHARP_BW_EFFICIENCY = 0.9
"""CollNet (SHARP) bandwidth factor in NCCL's tuning model (tuning.cc, NCCL 2.7-2.12:
``busBw *= .9``)."""

SHARP_MAX_TREES_PER_SWITCH = 2
"""Streaming-aggregation trees one switch can carry; NCCL opens one per HCA rail, so SHARP needs
rail-aligned leaves (NVIDIA SHARP v3 docs, reference catalog D)."""

NCCL_TREE_SEARCH_CHANNELS = NCCL_NET_CHANNELS // 2
"""Tree channels the per-channel caps count: NCCL searches one channel per tree pair and runs each
twice, once per tree of the double binary tree (``connectTrees``, ``src/graph/connect.cc``), so 16
SMs carry 8 searched channels. NCCL maintainers: a tree "would require 32 SMs" to match NVLSTree
on H100 (NVIDIA/nccl #1649) and "will struggle to get better performance than ring without using
32 SMs" with 8 NICs (NVIDIA/nccl-tests #196)."""

NCCL_RING_SEARCH_CHANNELS = NCCL_NET_CHANNELS // 2
"""Ring channels the per-channel caps count: NCCL's ring search finds them and ``ncclTopoPostset``
runs each twice ("Connect rings and trees. This should also duplicate the channels",
``src/graph/connect.cc``), and ``tuning.cc`` caps ``graphs[RING]->nChannels`` of them, as for the
tree (:data:`NCCL_TREE_SEARCH_CHANNELS`)."""

ALGORITHM_LABELS: dict[AlgorithmName, str] = {
    "ring": "Ring",
    "tree": "Tree",
    "nvls": "NVLS",
    "nvlstree": "NVLSTree",
    "collnet_direct": "CollNetDirect",
    "collnet_chain": "CollNetChain",
}
"""``NCCL_ALGO`` names (``PerfRequest.algorithm``) -> the labels candidates carry."""
POINT_TO_POINT: frozenset[str] = frozenset(("all_to_all", "sendrecv"))
"""Collectives NCCL runs as grouped sends and receives: ``NCCL_ALGO`` does not apply."""


def tree_correction(protocol: Protocol, size_bytes: float) -> float:
    """The factor NCCL's tuner puts on a tree's bandwidth at ``size_bytes``
    (:data:`NCCL_TREE_CORRECTION`).

    >>> tree_correction("LL128", 2**20), tree_correction("LL", 2**20), tree_correction("LL", 2**30)
    (0.6, 0.5, 1.0)
    """
    table = NCCL_TREE_CORRECTION[protocol]
    index = int(size_bytes) // 64
    log_size = index.bit_length() - 1  # log2i; -1 below 64 bytes
    return table[log_size] if 0 <= log_size < len(table) else 1.0


def busbw_factor(collective: CollectiveName, ranks: int) -> float:
    """nccl-tests' bus-bandwidth factor for ``ranks`` ranks (``doc/PERFORMANCE.md``).

    >>> busbw_factor("all_to_all", 4)
    0.75
    """
    if collective == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    return 1.0


def ring_bytes_per_rank(collective: CollectiveName, size_bytes: float, ranks: int) -> float:
    """Bytes one rank sends in NCCL's ring for an nccl-tests ``size`` (busbw factor x size).

    >>> ring_bytes_per_rank("reduce_scatter", 1000, 10)
    900.0
    """
    return busbw_factor(collective, ranks) * size_bytes


@dataclass(frozen=True, slots=True)
class Candidate:
    """One (algorithm, protocol) choice: its latency, bandwidth and pipeline."""

    algorithm: str
    protocol: Protocol
    latency_us: float
    algbw_GBps: float  # noqa: N815
    """Bandwidth the pair reaches on this fabric."""
    base_us: float = 0.0
    """The fixed part of ``latency_us`` (launch, synchronisation), outside the pipeline."""
    tuner_algbw_GBps: float | None = None  # noqa: N815
    """Bandwidth NCCL's tuner expects when it differs from ``algbw_GBps``."""
    shape: PipelineShape | None = None
    """How the data is pipelined; ``None``: one stage, the alpha-beta line."""
    pass_algbw_GBps: float | None = None  # noqa: N815
    """Bandwidth of the line-by-line (NVLink) stages when it is not ``algbw_GBps`` (LL)."""
    store_algbw_GBps: float | None = None  # noqa: N815
    """Bandwidth of the storing stages when it is not ``algbw_GBps`` (NVLSTree's network hops)."""
    plateau_min_bytes: float | None = None
    """Size from which NCCL's tuner multiplies the latency by ``plateau_factor`` (the ring
    plateau); ``None``: never."""
    plateau_factor: float = 1.0
    post_us: float = 0.0
    """Time the proxy spends posting network operations (grouped sends); it overlaps the data,
    so the transfer takes the longer of the two after the first step."""

    def time_us(self, size_bytes: float) -> float:
        """What NCCL's tuner expects: ``latency + size / algbw`` (GB/s = 1e3 bytes/us), a tree's
        algbw times :func:`tree_correction`, a multi-node Simple ring's latency times the
        plateau factor (``ncclTopoGetAlgoTime``)."""
        algbw = self.algbw_GBps if self.tuner_algbw_GBps is None else self.tuner_algbw_GBps
        if self.algorithm == "Tree":
            algbw *= tree_correction(self.protocol, size_bytes)
        latency = self.latency_us
        if self.plateau_min_bytes is not None and size_bytes >= self.plateau_min_bytes:
            latency *= self.plateau_factor
        return latency + max(self.post_us, transfer_time_us(size_bytes, algbw))

    def achieved_time_us(self, size_bytes: float) -> float:
        """What the pair takes: the pipeline (:func:`.pipeline.pipelined_time_us`)."""
        if self.shape is None:
            transfer = transfer_time_us(size_bytes, self.algbw_GBps)
            return self.latency_us + max(self.post_us, transfer)
        return pipelined_time_us(
            size_bytes,
            self.latency_us,
            self.base_us,
            self.algbw_GBps,
            self.shape,
            self.pass_algbw_GBps,
            self.store_algbw_GBps,
        )

    @property
    def label(self) -> str:
        return f"{self.algorithm}/{self.protocol}"


@dataclass(frozen=True, slots=True)
class GroupBandwidth:
    """Bandwidth figures of one group on one fabric, GB/s."""

    nvlink: float
    """NVLink per GPU."""
    net: float
    """Goodput of the NICs one domain's ranks own (no topology loss)."""


def _group_bandwidth(profile: FabricProfile, group: CommGroup) -> GroupBandwidth:
    return GroupBandwidth(
        nvlink=profile.nvlink_GBps,
        net=profile.nic_goodput_GBps * group.nics_per_domain(profile.rank_nics_per_node),
    )


def _nvlink_step_us(profile: FabricProfile, key: tuple[str, Protocol]) -> float:
    """NCCL's cost of one NVLink step (``hwLat[NVLINK]``), or the calibrated one."""
    if profile.step_software_us is not None:
        return profile.step_software_us
    return profile.nccl.nvlink_step_us[key[0]][key[1]]


def _net_step_us(profile: FabricProfile, group: CommGroup, key: tuple[str, Protocol]) -> float:
    """NCCL's software cost of one network step (``hwLat[NET]`` without the path inside it).

    From 2.23, "with ppn=1 latencies are fully exposed": one rank per node takes the tree's
    network latency for every algorithm (``tuning.cc``)."""
    if profile.step_software_us is not None:
        return profile.step_software_us
    algorithm, protocol = key
    if group.local_ranks == 1 and profile.nccl.one_rank_per_node_tree_net_latency:
        algorithm = "Tree"
    return max(0.0, profile.nccl.net_step_us[algorithm][protocol] - NCCL_PATH_IN_NET_STEP_US)


def net_post_overhead_us(profile: FabricProfile) -> float:
    """What NCCL counts for one network post on these hosts (:data:`NCCL_NET_POST_OVERHEAD_US`).

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 16, "host": {"cpu_vendor": "amd"}}})
    >>> net_post_overhead_us(fabric_profile(valid, design_fabric(valid, "infiniband")))
    2.0
    """
    return NCCL_NET_POST_OVERHEAD_US.get(profile.cpu_vendor, NCCL_NET_POST_OVERHEAD_US["intel"])


def _base_latency_us(profile: FabricProfile, key: tuple[str, Protocol]) -> float:
    """``baseLat``: the fixed cost of one collective (Tree and Ring; 0 for the others)."""
    return profile.nccl.base_latency_us.get(key[0], {}).get(key[1], 0.0)


def ll128_enabled(profile: FabricProfile, group: CommGroup) -> bool:
    """Whether NCCL enables LL128 here: inside one domain always (NVLink); across domains only
    when the GPU-NIC path allows it (:data:`LL128_NIC_PATHS`).

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> spec = {"cluster": {"gpus": 16, "gpu": "a100", "nic_speed_gbps": 200,
    ...         "host": {"gpu_nic_path": "phb"}}, "fabric": {"technologies": ["roce_v2"]}}
    >>> valid = parse_spec(spec)
    >>> profile = fabric_profile(valid, design_fabric(valid, "roce_v2"))
    >>> [ll128_enabled(profile, group_for(profile, gpus)) for gpus in (16, 8)]
    [False, True]
    """
    if group.domains < 2:
        return True
    later = profile.gpu_class in ("hopper", "blackwell")
    allowed = LL128_NIC_PATHS["hopper_and_later" if later else "pre_hopper"]
    return profile.gpu_nic_path in allowed


def _protocols(profile: FabricProfile, group: CommGroup) -> tuple[Protocol, ...]:
    if ll128_enabled(profile, group):
        return PROTOCOLS
    return tuple(p for p in PROTOCOLS if p != "LL128")


def _packet(profile: FabricProfile, size_bytes: float) -> float:
    """The first packet of a message: its serialisation is latency; the rest is bandwidth."""
    return min(size_bytes, float(profile.mtu_bytes))


def _ll_cap(
    profile: FabricProfile, busbw: float, protocol: Protocol, domains: int, tuner: bool = False
) -> float:
    """LL's bus-bandwidth ceiling (``llMaxBws``): inside one domain the GPU class's row; across
    domains the host CPU's row (AMD, or Intel for Intel and Arm hosts, as NCCL picks it) at its
    two-node figure, which is what LL reaches across any number of domains (with it the
    pipeline gives CoreWeave's 128 A100 GPUs 1 KiB and 64 KiB all_reduce within 10 %,
    docs/validation.md); ``tuner``: beyond two domains NCCL's tuner expects the lower many-node
    figure and leaves LL for LL128 at smaller sizes."""
    if protocol != "LL":
        return busbw
    tuning = profile.nccl
    if domains == 1:
        cap = tuning.ll_one_node_busbw_GBps[profile.gpu_class or NCCL_LL_CLASS_FOR_UNKNOWN_GPU]
    else:
        amd = profile.cpu_vendor == "amd"
        row = tuning.ll_busbw_GBps_amd if amd else tuning.ll_busbw_GBps_intel
        cap = row[2 if tuner and domains > 2 else 1]
    return min(busbw, cap)


def _max_channels(group: CommGroup) -> int:
    return NCCL_NVLINK_CHANNELS if group.domains == 1 else NCCL_NET_CHANNELS


def _ring_candidates(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: float
) -> Iterator[Candidate]:
    n, local, domains = group.ranks, group.local_ranks, group.domains
    bw = _group_bandwidth(profile, group)
    # NVLink's bound on a hierarchical ring: one rank per domain and channel uses the network
    nvlink_busbw = bw.nvlink if domains == 1 or local == 1 else bw.nvlink * local / (local - 1)
    busbw = nvlink_busbw
    if domains > 1:
        pattern = ring_pattern(
            domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
        )
        net = bw.net * pattern_throughput(profile, pattern, group.span_nodes)
        busbw = min(net, nvlink_busbw) if local > 1 else net
    factor = busbw_factor(collective, n)
    steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
    inter = min(steps, profile.nccl.ring_net_steps(collective, domains))
    hop_us = ring_hop_latency_us(profile, group, _packet(profile, size_bytes / max(1, steps)))
    for protocol in _protocols(profile, group):
        key = ("Ring", protocol)
        intra = _nvlink_step_us(profile, key)
        if domains > 1 and profile.step_software_us is None:
            post = net_post_overhead_us(profile)
            post *= NCCL_SIMPLE_POST_MULTIPLIER if protocol == "Simple" else 1.0
            intra = max(intra, post)
        net_step = _net_step_us(profile, group, key) + hop_us
        base = _base_latency_us(profile, key)
        latency = base + (steps - inter) * intra + inter * net_step
        share = _ring_share(profile, group, collective, protocol)
        to_algbw = profile.collective_efficiency / factor  # η, and bus to algorithm bandwidth
        shared = _ring_ll128_cap(profile, group, busbw * share, protocol)
        algbw = _ll_cap(profile, shared, protocol, domains) * to_algbw
        tuner = _ll_cap(profile, shared, protocol, domains, tuner=True) * to_algbw
        # LL's cross-domain ceiling comes from its network steps; its NVLink steps run at the
        # one-domain ceiling.
        nvlink = algbw
        if protocol == "LL":
            nvlink = _ll_cap(profile, nvlink_busbw * share, protocol, 1) * to_algbw
        plateau = collective == "all_reduce" and protocol == "Simple" and domains > 1
        channels = _max_channels(group)
        yield Candidate(
            "Ring",
            protocol,
            latency,
            algbw,
            base_us=base,
            tuner_algbw_GBps=tuner if tuner != algbw else None,
            pass_algbw_GBps=nvlink if nvlink != algbw else None,
            shape=ring_shape(collective, n, protocol, channels, inter),
            plateau_min_bytes=profile.nccl.ring_plateau_min_bytes * channels * n
            if plateau
            else None,
            plateau_factor=_by_class(profile, profile.nccl.ring_plateau_factor),
        )


def ring_ll128_channel_busbw_GBps(  # noqa: N802 - GB/s
    profile: FabricProfile, group: CommGroup
) -> float | None:
    """A ring's LL128 bound: ``channels x perChMaxRingLL128Bw`` of bus bandwidth (NCCL 2.25+,
    per GPU class and node count; :data:`NCCL_RING_SEARCH_CHANNELS` channels); ``None`` where
    the release has no such table or the GPU class is unknown.

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 32}})          # 4 x 8 H100
    >>> ring_ll128_channel_busbw_GBps(fabric_profile(valid, design_fabric(valid, "infiniband")),
    ...                               group_for(fabric_profile(valid, design_fabric(valid,
    ...                               "infiniband")), 32))     # 8 x 36.7
    293.6
    """
    table = profile.nccl.ring_ll128_channel_busbw_GBps
    if table is None or profile.gpu_class is None or profile.gpu_class not in table:
        return None
    per_channel = table[profile.gpu_class][_nodes_class(group.domains)]
    return NCCL_RING_SEARCH_CHANNELS * per_channel


def _ring_ll128_cap(
    profile: FabricProfile, group: CommGroup, busbw: float, protocol: Protocol
) -> float:
    """LL128's bus bandwidth on a ring after NCCL's per-channel cap (2.25+)."""
    cap = ring_ll128_channel_busbw_GBps(profile, group) if protocol == "LL128" else None
    return busbw if cap is None else min(busbw, cap)


def _ring_share(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, protocol: Protocol
) -> float:
    """Share of the ring's bandwidth a protocol reaches (per release, ``tuning.cc``)."""
    if protocol == "LL":
        if group.domains == 1 and collective != "all_reduce":
            return profile.nccl.ring_ll_one_node_gather_bw_share
        return profile.nccl.ring_ll_bw_share
    if protocol == "LL128":
        if group.local_ranks == 1:
            return profile.nccl.ring_ll128_one_rank_per_node_bw_share
        return profile.nccl.ring_ll128_bw_share
    return 1.0


def _by_class(profile: FabricProfile, table: dict[str, float]) -> float:
    """A per-GPU-class constant; a GPU of unknown class takes the Ampere row."""
    return table[profile.gpu_class or NCCL_LL_CLASS_FOR_UNKNOWN_GPU]


def _pat_candidate(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: float
) -> Candidate | None:
    """PAT (2.23+): all-gather / reduce-scatter with one GPU per node, as NCCL's tuner rates it
    (``tuning.cc``): ``base + log2i(nNodes) * interLat / 3.5 + nRanks * 2.8`` us, and the ring's
    bus bandwidth times ``bw_share`` as the algorithm bandwidth (NCCL does not convert PAT's).
    The network latency ``interLat`` is the tree's (one rank per node) with this fabric's path;
    PAT is timed on that line (no pipeline model)."""
    pat = profile.nccl.pat
    if pat is None or group.local_ranks != 1 or group.domains < 2:
        return None
    if collective not in ("all_gather", "reduce_scatter"):
        return None
    bw = _group_bandwidth(profile, group)
    pattern = ring_pattern(
        group.domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
    )
    busbw = bw.net * pattern_throughput(profile, pattern, group.span_nodes)
    path_us = group_path_latency_us(profile, group, _packet(profile, size_bytes))
    inter = _net_step_us(profile, group, ("Tree", "Simple")) + path_us
    log_nodes = max(1, group.domains).bit_length() - 1  # log2i
    latency = pat.base_us + log_nodes * inter / pat.log_latency_divisor
    latency += group.ranks * pat.per_rank_us
    algbw = busbw * pat.bw_share * profile.collective_efficiency
    return Candidate("PAT", "Simple", latency, algbw, base_us=pat.base_us)


def _tree_net_bandwidth(profile: FabricProfile, group: CommGroup, sends: float) -> float:
    """Network algbw bound of a double binary tree whose busiest node sends ``sends x size``."""
    bw = _group_bandwidth(profile, group)
    pattern = tree_pattern(
        group.domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
    )
    return bw.net * pattern_throughput(profile, pattern, group.span_nodes) / sends


def _tree_sends(domains: int) -> float:
    """``size``s the busiest node sends: a leaf and an interior node of the two trees send two;
    with two domains each node is the root of one tree and a leaf of the other, and sends one."""
    return 1.0 if domains == 2 else 2.0


def _nodes_class(domains: int) -> int:
    """NCCL's node-count column in its per-channel tables: 1, 2, or more nodes."""
    return min(domains, 3) - 1


def tree_channel_algbw_GBps(  # noqa: N802 - GB/s
    profile: FabricProfile, group: CommGroup, protocol: Protocol
) -> float | None:
    """The tree's channel bound: ``channels x perChMaxTreeBw`` of bus bandwidth, halved to algbw.

    ``None`` when the GPU's class is unknown or the protocol has no such cap (LL has its own).

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> tree_channel_algbw_GBps(profile, group_for(profile, 1024), "Simple")   # 8 x 36.0 / 2
    144.0
    """
    tuning = profile.nccl
    table = {
        "Simple": tuning.tree_channel_busbw_GBps,
        "LL128": tuning.tree_ll128_channel_busbw_GBps,
    }
    if profile.gpu_class is None or protocol not in table:
        return None
    per_channel = table[protocol][profile.gpu_class][_nodes_class(group.domains)]
    return NCCL_TREE_SEARCH_CHANNELS * per_channel / 2.0


def _tree_algbw(
    profile: FabricProfile,
    group: CommGroup,
    net_algbw: float,
    protocol: Protocol,
    tuner: bool = False,
    ll_domains: int | None = None,
) -> float:
    """One protocol's tree algbw from a network bound: NVLink chain, protocol share, caps, η;
    ``tuner``: what NCCL's tuner expects of it; ``ll_domains``: the domain count LL's cap is
    taken at (1 for the NVLink hops)."""
    algbw = net_algbw
    if group.local_ranks > 1:
        algbw = min(algbw, profile.nvlink_GBps / 2.0)  # a chain: every GPU sends up and down
    algbw *= NCCL_TREE_BW_SHARE[protocol]
    channel_cap = tree_channel_algbw_GBps(profile, group, protocol)
    if channel_cap is not None:
        algbw = min(algbw, channel_cap)
    factor = busbw_factor("all_reduce", group.ranks)
    domains = group.domains if ll_domains is None else ll_domains
    algbw = _ll_cap(profile, algbw * factor, protocol, domains, tuner) / factor
    return algbw * profile.collective_efficiency


def _tree_candidates(
    profile: FabricProfile, group: CommGroup, size_bytes: float
) -> Iterator[Candidate]:
    local, domains = group.local_ranks, group.domains
    achieved_net = _tree_net_bandwidth(profile, group, _tree_sends(domains))
    # tuning.cc converts every tree's bus bandwidth to algbw with a factor 1/2, two nodes or not.
    tuner_net = _tree_net_bandwidth(profile, group, 2.0)
    levels = tree_levels(domains)
    path_us = group_path_latency_us(profile, group, _packet(profile, size_bytes))
    for protocol in _protocols(profile, group):
        key = ("Tree", protocol)
        intra = _nvlink_step_us(profile, key)
        inter = _net_step_us(profile, group, key) + path_us
        base = _base_latency_us(profile, key)
        latency = base + 2 * ((local - 1) * intra + levels * inter)
        algbw = _tree_algbw(profile, group, achieved_net, protocol)
        tuner = _tree_algbw(profile, group, tuner_net, protocol, tuner=True)
        nvlink = _tree_algbw(profile, group, achieved_net, protocol, ll_domains=1)
        yield Candidate(
            "Tree",
            protocol,
            latency,
            algbw,
            base_us=base,
            tuner_algbw_GBps=tuner if tuner != algbw else None,
            pass_algbw_GBps=nvlink if nvlink != algbw else None,
            shape=tree_shape(
                local,
                domains,
                protocol,
                _max_channels(group),
                size_bytes,
                fixed_threads=profile.nccl.tree_threads,
            ),
        )


def _nvls_bandwidth(profile: FabricProfile, local: int) -> float:
    efficiency = nvls_reduction_efficiency(profile.gpu_class)
    return profile.nvlink_GBps * local / (local + 1) * efficiency


def nvls_heads(profile: FabricProfile, group: CommGroup) -> int:
    """NVLS heads of one domain: the GPU-NIC pairs NCCL's NVLS graph search picks, one per NIC
    with a local GPU and no GPU twice, at most :data:`NCCL_MAX_NVLS_ARITY`
    (``ncclTopoCompute``, ``src/graph/search.cc``; ``NVLS Head`` lines in NCCL's log, one per
    NIC: 4 heads with 4 NICs, NVIDIA/nccl #1357). Only heads carry NVLSTree's inter-domain
    traffic."""
    nics = int(group.nics_per_domain(profile.rank_nics_per_node))
    return max(1, min(NCCL_MAX_NVLS_ARITY, nics, group.local_ranks))


def nvlstree_heads_algbw_GBps(  # noqa: N802 - GB/s
    profile: FabricProfile, group: CommGroup
) -> float | None:
    """NVLSTree's bound from its heads: ``heads x perChMaxNVLSTreeBw`` of bus bandwidth (NCCL
    2.28+, per release and GPU class; 2 nodes vs more), as algorithm bandwidth; ``None`` where
    the release has no such table or the GPU class is unknown.

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 32}})          # 4 x 8 H100, 8 NICs each
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> round(nvlstree_heads_algbw_GBps(profile, group_for(profile, 32)) * 2 * 31 / 32, 1)
    364.0
    """
    table = profile.nccl.nvlstree_channel_busbw_GBps
    if table is None or profile.gpu_class is None or profile.gpu_class not in table:
        return None
    per_head = table[profile.gpu_class][_nodes_class(group.domains)]
    if per_head <= 0:
        return None
    return nvls_heads(profile, group) * per_head / busbw_factor("all_reduce", group.ranks)


def _sharp_bandwidth(profile: FabricProfile, group: CommGroup) -> float:
    trees = min(1.0, SHARP_MAX_TREES_PER_SWITCH / max(1.0, profile.ports_per_leaf_per_node))
    return _group_bandwidth(profile, group).net * SHARP_BW_EFFICIENCY * trees


def _in_switch_candidates(
    profile: FabricProfile, group: CommGroup, size_bytes: float
) -> Iterator[Candidate]:
    """NVLS, NVLSTree, CollNet Direct and Chain (SHARP), NVLS+SHARP, where the hardware has them."""
    local, domains = group.local_ranks, group.domains
    eff = profile.collective_efficiency
    simple = "Simple"
    nvls_intra = _nvlink_step_us(profile, ("NVLS", simple))
    path_us = group_path_latency_us(profile, group, _packet(profile, size_bytes))
    if profile.nvls and local > 1 and domains == 1:
        yield Candidate("NVLS", simple, nvls_intra, _nvls_bandwidth(profile, local) * eff)
    if profile.nvls and local > 1 and domains > 1:
        levels = tree_levels(domains)
        inter = _net_step_us(profile, group, ("NVLSTree", simple)) + path_us
        net = _tree_net_bandwidth(profile, group, _tree_sends(domains))
        nvls = _nvls_bandwidth(profile, local)
        algbw = min(nvls, net)
        heads_cap = nvlstree_heads_algbw_GBps(profile, group)
        if heads_cap is not None:
            algbw = min(algbw, heads_cap)
        channels = NCCL_NVLS_CHANNELS.get(profile.gpu_class or "", NCCL_NVLS_CHANNELS["hopper"])
        # one hop of the tree: a head's link, undivided by the double binary tree's two sends
        hop = _tree_net_bandwidth(profile, group, 1.0)
        yield Candidate(
            "NVLSTree",
            simple,
            nvls_intra + 2 * levels * inter,
            algbw * eff,
            pass_algbw_GBps=nvls * eff if nvls != algbw else None,
            store_algbw_GBps=hop * eff if hop != algbw else None,
            shape=nvlstree_shape(size_bytes, domains, nvls_heads(profile, group), channels),
        )
    if profile.in_network_reduction and domains > 1:
        sharp = _sharp_bandwidth(profile, group)
        if profile.nvls and local > 1:
            inter = _net_step_us(profile, group, ("NVLS", simple))
            algbw = min(_nvls_bandwidth(profile, local), sharp)
            yield Candidate("NVLS", simple, nvls_intra + inter + path_us, algbw * eff)
        intra = _nvlink_step_us(profile, ("CollNetDirect", simple))
        inter = _net_step_us(profile, group, ("CollNetDirect", simple))
        latency = (
            2 * (min(1, local - 1) * intra + (local - 1) * NCCL_COLLNET_ARITY_LATENCY_US)
            + inter
            + path_us
        )
        algbw = min(profile.nvlink_GBps * local / (2 * (local - 1)), sharp) if local > 1 else sharp
        yield Candidate("CollNetDirect", simple, latency, algbw * eff)
        yield _collnet_chain_candidate(profile, group, size_bytes, sharp, path_us)


def _collnet_chain_candidate(
    profile: FabricProfile, group: CommGroup, size_bytes: float, sharp: float, path_us: float
) -> Candidate:
    """CollNet Chain: reduce up the domain's NVLink chain, SHARP between domains, back down.

    Latency as ``tuning.cc``: ``2 (L - 1)`` NVLink steps and one network step. Bandwidth: every
    chain GPU sends the buffer over NVLink twice (up and down), so ``B_nvl / 2``; the head sends
    it to the switches once and receives the result once, so ``B_sharp``.
    """
    local = group.local_ranks
    key = ("CollNetChain", "Simple")
    intra = _nvlink_step_us(profile, key)
    inter = _net_step_us(profile, group, key) + path_us
    latency = 2 * (local - 1) * intra + inter
    algbw = min(profile.nvlink_GBps / 2.0, sharp) if local > 1 else sharp
    return Candidate(
        "CollNetChain",
        "Simple",
        latency,
        algbw * profile.collective_efficiency,
        shape=collnet_chain_shape(size_bytes, local, _max_channels(group)),
    )


def _p2p_latency_us(profile: FabricProfile, group: CommGroup, size_bytes: float) -> float:
    """One send's latency: launch, one step, the path (NVLink only inside one domain)."""
    key = ("Ring", "Simple")
    base = _base_latency_us(profile, key)
    if group.domains == 1:
        return base + _nvlink_step_us(profile, key)
    step = _net_step_us(profile, group, key) + group_path_latency_us(
        profile, group, _packet(profile, size_bytes)
    )
    return base + step


def p2p_posts(bytes_per_peer: float, remote_peers: int) -> int:
    """Network operations one rank's proxy posts for a grouped send to ``remote_peers``: each
    peer's data goes in chunks of :data:`NCCL_P2P_NET_CHUNK_BYTES`.

    >>> p2p_posts(65536, 248), p2p_posts(262144, 248)
    (248, 496)
    """
    if remote_peers <= 0:
        return 0
    chunks = max(1, math.ceil(bytes_per_peer / NCCL_P2P_NET_CHUNK_BYTES))
    return remote_peers * chunks


def _all_to_all_candidate(profile: FabricProfile, group: CommGroup, size_bytes: float) -> Candidate:
    """NCCL's grouped send/recv with PXN: remote data leaves through the destination rail's NIC.

    One GPU sends ``size * (n - L) / n`` to remote ranks and ``size * (L - 1) / n`` over NVLink;
    the ``L`` GPUs of a domain share its NICs; PXN moves the remote data not already on the
    right rail across NVLink once.
    """
    n, local = group.ranks, group.local_ranks
    bw = _group_bandwidth(profile, group)
    nvlink_bytes = (local - 1) / n
    seconds_per_byte = 0.0
    if group.domains > 1:
        pattern = all_to_all_pattern(
            group, profile.nics_per_node, profile.nodes_per_leaf, profile.nodes_per_pod
        )
        net = bw.net * pattern_throughput(profile, pattern, group.span_nodes)
        seconds_per_byte = local * (n - local) / n / net
        nics = group.nics_per_domain(profile.rank_nics_per_node)
        nvlink_bytes += (n - local) / n * max(0.0, 1.0 - 1.0 / max(1.0, nics))
    if local > 1:
        seconds_per_byte = max(seconds_per_byte, nvlink_bytes / bw.nvlink)
    algbw = profile.collective_efficiency / seconds_per_byte
    latency = _p2p_latency_us(profile, group, size_bytes / max(1, n))
    posts = p2p_posts(size_bytes / max(1, n), n - local) if group.domains > 1 else 0
    return Candidate("P2P", "Simple", latency, algbw, post_us=posts * net_post_overhead_us(profile))


def _sendrecv_candidate(profile: FabricProfile, group: CommGroup, size_bytes: float) -> Candidate:
    """Rank ``r`` sends to ``r + 1``: the pair that crosses a domain boundary is the slowest."""
    bw = _group_bandwidth(profile, group)
    if group.domains == 1:
        algbw = bw.nvlink
    else:
        pattern = ring_pattern(
            group.domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
        )
        algbw = profile.nic_goodput_GBps * pattern_throughput(profile, pattern, group.span_nodes)
    latency = _p2p_latency_us(profile, group, size_bytes)
    return Candidate("P2P", "Simple", latency, algbw * profile.collective_efficiency)


def collective_candidates(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: float
) -> list[Candidate]:
    """Every (algorithm, protocol) NCCL could use for this collective on this hardware."""
    if collective == "all_to_all":
        return [_all_to_all_candidate(profile, group, size_bytes)]
    if collective == "sendrecv":
        return [_sendrecv_candidate(profile, group, size_bytes)]
    candidates = list(_ring_candidates(profile, group, collective, size_bytes))
    pat = _pat_candidate(profile, group, collective, size_bytes)
    if pat is not None:
        candidates.append(pat)
    if collective == "all_reduce":
        if group.domains > 1:
            candidates += list(_tree_candidates(profile, group, size_bytes))
        candidates += list(_in_switch_candidates(profile, group, size_bytes))
    return candidates


def symmetric_kernel_estimate(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: int
) -> SymmetricKernelChoice | None:
    """The symmetric kernel NCCL picks here and NCCL's own estimate of its time, or ``None``
    where none runs (see :func:`symmetric_kernel_candidate`)."""
    if not profile.symmetric_memory or group.domains != 1 or profile.gpu_class is None:
        return None
    return symmetric_kernel_choice(
        collective,
        size_bytes,
        group.ranks,
        profile.gpu_class,
        multicast=profile.nvls,
        cell_bytes=release_cell_bytes(profile.nccl_release),
    )


def symmetric_kernel_candidate(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: int
) -> Candidate | None:
    """The symmetric kernel NCCL runs instead of every algorithm, where it runs one.

    With ``nccl.symmetric_memory`` (registered windows) on a 2.27+ release, NCCL runs
    all_reduce, all_gather and reduce_scatter inside one NVLink domain with a symmetric kernel,
    whatever its tuner or ``NCCL_ALGO`` would pick, and times it with its own model
    (:func:`.symmetric_kernel.symmetric_kernel_choice`). The time is NCCL's estimate, but never
    below the kernel's base latency plus its NVLink bytes over this fabric's NVLink (through
    the NVSwitch's reduction, :data:`NVLS_REDUCTION_EFFICIENCY`, where the switch reduces):
    NCCL's peak constants are per architecture, not per part, and its multicast all_reduce
    peak (480 GiB/s of bus bytes on Hopper) is above what NVLS is measured to reach. ``None``
    elsewhere: across domains, a GPU NCCL's tables do not know, another collective, a release
    before 2.27.

    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "nccl": {"symmetric_memory": True}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> symmetric_kernel_candidate(profile, group_for(profile, 8), "all_reduce", 8).label
    'Symmetric/AGxLLMC_R'
    >>> symmetric_kernel_candidate(profile, group_for(profile, 16), "all_reduce", 8) is None
    True
    """
    choice = symmetric_kernel_estimate(profile, group, collective, size_bytes)
    if choice is None or profile.gpu_class is None:
        return None
    kernel = choice.kernel
    base = kernel_base_latency_us(kernel, profile.gpu_class)
    rate = profile.nvlink_GBps
    if kernel.switch_reduces:  # the NVSwitch's reduction rate, as for NVLS
        rate *= nvls_reduction_efficiency(profile.gpu_class)
    floor = base + transfer_time_us(kernel.line_bytes(choice.nbytes, group.ranks), rate)
    return Candidate("Symmetric", kernel.label, max(choice.time_us, floor), math.inf)


def forced_candidates(
    candidates: list[Candidate], collective: CollectiveName, algorithm: AlgorithmName | None
) -> list[Candidate]:
    """The candidates ``NCCL_ALGO=algorithm`` leaves (all of them when ``None``).

    Raises
    ------
    ModelError
        FP509 when the algorithm cannot run this collective on this hardware (NCCL fails with
        "No algorithm/protocol available").
    """
    if algorithm is None or collective in POINT_TO_POINT:
        return candidates
    label = ALGORITHM_LABELS[algorithm]
    kept = [c for c in candidates if c.algorithm == label]
    if not kept:
        offered = sorted({c.algorithm for c in candidates})
        raise ModelError(
            "FP509",
            "algorithm",
            f"{label} cannot run {collective} on this fabric (available: {', '.join(offered)})",
            algorithm,
            "leave algorithm unset, or pick one the hardware has (NVLS needs NVLink SHARP,"
            " CollNet needs in-network reduction, Tree needs two or more NVLink domains)",
        )
    return kept


def chosen_candidate(
    profile: FabricProfile,
    group: CommGroup,
    collective: CollectiveName,
    size_bytes: int,
    algorithm: AlgorithmName | None = None,
) -> Candidate:
    """The pair NCCL runs: the symmetric kernel where it applies, else the candidate with the
    lowest expected time (:meth:`Candidate.time_us`) among those ``algorithm`` leaves.

    Raises
    ------
    ModelError
        FP506 for a size below 1; FP509 for an algorithm that cannot run here.

    Examples
    --------
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 16}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> chosen_candidate(profile, group_for(profile, 16), "all_reduce", 2**33).label
    'NVLSTree/Simple'
    """
    if size_bytes <= 0:
        raise ModelError(
            "FP506",
            "sizes",
            "a message size must be positive",
            size_bytes,
            "use sizes such as 8, 1M, 8G",
        )
    symmetric = symmetric_kernel_candidate(profile, group, collective, size_bytes)
    if symmetric is not None:
        return symmetric
    candidates = forced_candidates(
        collective_candidates(profile, group, collective, size_bytes), collective, algorithm
    )
    return min(candidates, key=lambda c: c.time_us(size_bytes))


def collective_point(
    profile: FabricProfile,
    group: CommGroup,
    collective: CollectiveName,
    size_bytes: int,
    algorithm: AlgorithmName | None = None,
) -> CollectivePoint:
    """One nccl-tests row: the pair NCCL's tuner picks, timed through NCCL's pipeline.

    Parameters
    ----------
    profile
        The fabric.
    group
        The communicator's ranks (see :func:`.traffic.group_for`).
    collective
        The nccl-tests operation.
    size_bytes
        nccl-tests ``size`` (the whole buffer for all_gather/reduce_scatter; per rank for
        all_to_all).
    algorithm
        Force one algorithm as ``NCCL_ALGO`` does (NCCL still picks the protocol).

    Returns
    -------
    CollectivePoint
        Time, ``algbw = size / time`` and ``busbw = algbw * factor`` in GB/s (1e9 B/s).

    Raises
    ------
    ModelError
        FP506 for a size below 1; FP509 for an algorithm that cannot run here.

    Examples
    --------
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> from fabricplan.analytic.traffic import group_for
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> point = collective_point(profile, group_for(profile, 8), "all_reduce", 8 * 2**30)
    >>> point.algorithm, round(point.busbw_GBps)    # one node: NVLink SHARP
    ('NVLS/Simple', 481)
    """
    best = chosen_candidate(profile, group, collective, size_bytes, algorithm)
    time_us = best.achieved_time_us(size_bytes)
    algbw = transfer_rate_GBps(size_bytes, time_us)
    return CollectivePoint(
        collective=collective,
        size_bytes=size_bytes,
        algorithm=best.label,
        time_us=time_us,
        algbw_GBps=algbw,
        busbw_GBps=algbw * busbw_factor(collective, group.ranks),
    )
