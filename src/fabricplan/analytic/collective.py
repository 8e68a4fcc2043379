"""Collectives as NCCL runs them: algorithms, protocols, and nccl-tests' algbw and busbw.

Every algorithm is an alpha-beta model, ``time = latency + size / algbw``, as NCCL's own tuner
(``src/graph/tuning.cc``) models it; NCCL picks, per size, the (algorithm, protocol) pair with the
lowest predicted time, and so do we. What differs from NCCL's table is where the numbers come from:
the bandwidths are derived from the fabric (NIC goodput from the technology's header bytes and MTU,
NICs per node, NVLink, oversubscription and routing through :mod:`.traffic`), and the network part
of each step's latency is the fabric's path latency (adapters, switch hops, cables) on top of
NCCL's software cost per step.

Bandwidth bounds (``B_net`` = goodput of the NICs a domain's ranks own, times the pattern's
topology factor; ``B_nvl`` = NVLink per GPU; ``L`` ranks per NVLink domain, ``D`` domains, ``n``
ranks):

- Ring (hierarchical, rail-aligned): busbw = ``min(B_net, B_nvl * L / (L - 1))``; inside one
  domain busbw = ``B_nvl``. Every rank moves busbw-factor x size bytes; one rank per channel and
  domain moves them over the network, the others over NVLink.
- Tree (double binary tree over domains, chain inside): algbw = ``min(B_net / t, B_nvl / 2)``
  with ``t = 1`` for two domains, ``2`` beyond (a node that is interior in one tree and a leaf in
  the other sends ``2 x size``); with two domains busbw exceeds the NIC rate (NVIDIA/nccl-tests
  #169, NVIDIA/nccl #1576).
- NVLS (NVLink SHARP, one domain): the switch reduces; each GPU moves ``size * (1 + 1/L)`` each
  way, so algbw = ``B_nvl * L / (L + 1) * NVLS_REDUCTION_EFFICIENCY``.
- CollNet Direct (InfiniBand SHARP): the fabric's switches reduce, so each domain sends its
  buffer once and receives the result once: algbw = ``min(B_nvl * L / (2 (L - 1)), B_sharp)``.
  SHARP trees are immune to oversubscription and collisions (one stream per link); a switch
  carries at most :data:`SHARP_MAX_TREES_PER_SWITCH` of them.
- NVLSTree / NVLS with SHARP: NVLS inside the domain, a tree or SHARP between domains.

Protocols: LL (8-byte flag per 8 bytes, lowest latency), LL128 (120 of 128 bytes) and Simple;
their bandwidth shares come from ``tuning.cc``, every bound is then scaled by the calibrated
collective efficiency.

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

from fabricplan.analytic.profile import FabricProfile
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
from fabricplan.model.results import CollectiveName, CollectivePoint

Protocol = str  # "LL" | "LL128" | "Simple"
PROTOCOLS: tuple[Protocol, ...] = ("LL", "LL128", "Simple")

# --- NCCL's tuning constants (NVIDIA/nccl src/graph/tuning.cc, v2.19-v2.21 era) -------------------
NCCL_BASE_LATENCY_US: dict[tuple[str, Protocol], float] = {
    ("Ring", "LL"): 6.6,
    ("Ring", "LL128"): 14.0,
    ("Ring", "Simple"): 8.4,
    ("Tree", "LL"): 6.8,
    ("Tree", "LL128"): 14.0,
    ("Tree", "Simple"): 0.0,
}
"""``baseLat``: fixed cost of one collective (launch, synchronisation), us."""

NCCL_NVLINK_STEP_US: dict[tuple[str, Protocol], float] = {
    ("Ring", "LL"): 0.6,
    ("Ring", "LL128"): 1.9,
    ("Ring", "Simple"): 3.4,
    ("Tree", "LL"): 0.6,
    ("Tree", "LL128"): 1.25,
    ("Tree", "Simple"): 28.0,
    ("CollNetDirect", "Simple"): 3.7,
    ("NVLS", "Simple"): 23.0,
    ("NVLSTree", "Simple"): 23.0,
}
"""``hwLat[NVLINK]``: cost of one step over NVLink, us."""

NCCL_NET_STEP_US: dict[tuple[str, Protocol], float] = {
    ("Ring", "LL"): 2.7,
    ("Ring", "LL128"): 4.0,
    ("Ring", "Simple"): 14.0,
    ("Tree", "LL"): 5.0,
    ("Tree", "LL128"): 8.5,
    ("Tree", "Simple"): 28.0,
    ("CollNetDirect", "Simple"): 31.0,
    ("NVLS", "Simple"): 18.0,
    ("NVLSTree", "Simple"): 14.0,
}
"""``hwLat[NET]``: cost of one step over the network as NCCL measured it, path included, us."""

NCCL_PATH_IN_NET_STEP_US = 1.5
"""The network path inside :data:`NCCL_NET_STEP_US` (estimate: two ConnectX adapters at ~0.6 us
and one switch hop on the InfiniBand clusters NCCL was tuned on). We subtract it and add the
fabric's own path latency instead, so that adapters, hops and cables come from the catalog."""

NCCL_NET_POST_OVERHEAD_US = 1.0
"""Proxy cost of posting one network operation (``getNetOverhead``: 1 us on Intel x86, 2 us on
AMD); a multi-node ring step costs at least this, three times for Simple."""
NCCL_SIMPLE_POST_MULTIPLIER = 3.0

NCCL_PROTOCOL_BW_SHARE: dict[tuple[str, Protocol], float] = {
    ("Ring", "LL"): 1.0 / 4.0,
    ("Ring", "LL128"): 0.92,
    ("Ring", "Simple"): 1.0,
    ("Tree", "LL"): 0.92 / 3.8,
    ("Tree", "LL128"): 0.92 * 120.0 / 128.0,
    ("Tree", "Simple"): 0.92,
}
"""Share of the algorithm's bandwidth each protocol reaches (LL: 4 flag bytes per 4 data bytes and
a store per line; LL128: 120 of 128 bytes; trees lose a further 8 %)."""

NCCL_LL_BUSBW_CAP_GBPS_ONE_DOMAIN = 87.7
"""LL bandwidth ceiling inside one node (``llMaxBws``, Ampere/Hopper, one node), GB/s."""
NCCL_LL_BUSBW_CAP_GBPS_MULTI_DOMAIN = 39.0
"""LL bandwidth ceiling across nodes (``llMaxBws``, Intel hosts, two nodes), GB/s."""

NCCL_COLLNET_ARITY_LATENCY_US = 0.4
"""CollNet Direct's per-local-rank serialisation latency (tuning.cc), us."""

NVLS_REDUCTION_EFFICIENCY = 0.836
"""Share of the NVLS traffic bound ``B_nvl * L / (L + 1)`` the NVSwitch reduction sustains.
NCCL maintainers: 8 x H100 NVLS all_reduce peaks at busbw ~480 GB/s, algbw ~275 GB/s
(NVIDIA/nccl-tests #212); 275 / (450 * 0.865 * 0.95 * 8/9) = 0.836. The same constant gives the
258 GB/s algbw reported at 5 GPUs (NVIDIA/nccl #1455)."""

SHARP_BW_EFFICIENCY = 0.9
"""CollNet (SHARP) bandwidth factor in NCCL's tuning model (tuning.cc, NCCL 2.7-2.12:
``busBw *= .9``)."""

SHARP_MAX_TREES_PER_SWITCH = 2
"""Streaming-aggregation trees one switch can carry; NCCL opens one per HCA rail, so SHARP needs
rail-aligned leaves (NVIDIA SHARP v3 docs, reference catalog D)."""

_PROTOCOL_ALGORITHMS = ("Ring", "Tree")


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
    """One (algorithm, protocol) choice: fixed latency and bandwidth."""

    algorithm: str
    protocol: Protocol
    latency_us: float
    algbw_GBps: float  # noqa: N815

    def time_us(self, size_bytes: float) -> float:
        """``latency + size / algbw`` (GB/s = 1e3 bytes/us)."""
        return self.latency_us + size_bytes / (self.algbw_GBps * 1e3)

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
        net=profile.nic_goodput_GBps * group.nics_per_domain(profile.nics_per_node),
    )


def _software_step_us(
    profile: FabricProfile,
    table: dict[tuple[str, Protocol], float],
    key: tuple[str, Protocol],
    net: bool,
) -> float:
    if profile.step_software_us is not None:
        return profile.step_software_us
    if net:
        return max(0.0, table[key] - NCCL_PATH_IN_NET_STEP_US)
    return table[key]


def _packet(profile: FabricProfile, size_bytes: float) -> float:
    """The first packet of a message: its serialisation is latency; the rest is bandwidth."""
    return min(size_bytes, float(profile.mtu_bytes))


def _ll_cap(busbw: float, protocol: Protocol, domains: int) -> float:
    if protocol != "LL":
        return busbw
    cap = NCCL_LL_BUSBW_CAP_GBPS_ONE_DOMAIN if domains == 1 else NCCL_LL_BUSBW_CAP_GBPS_MULTI_DOMAIN
    return min(busbw, cap)


def _ring_candidates(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: float
) -> Iterator[Candidate]:
    n, local, domains = group.ranks, group.local_ranks, group.domains
    bw = _group_bandwidth(profile, group)
    if domains == 1:
        busbw = bw.nvlink
    else:
        pattern = ring_pattern(
            domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
        )
        net = bw.net * pattern_throughput(profile, pattern, group.span_nodes)
        busbw = min(net, bw.nvlink * local / (local - 1)) if local > 1 else net
    factor = busbw_factor(collective, n)
    steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
    inter = 0
    if domains > 1:
        inter = min(steps, 2 * domains if collective == "all_reduce" else domains - 1)
    hop_us = ring_hop_latency_us(profile, group, _packet(profile, size_bytes / max(1, steps)))
    for protocol in PROTOCOLS:
        key = ("Ring", protocol)
        intra = _software_step_us(profile, NCCL_NVLINK_STEP_US, key, net=False)
        if domains > 1 and profile.step_software_us is None:
            post = NCCL_NET_POST_OVERHEAD_US
            post *= NCCL_SIMPLE_POST_MULTIPLIER if protocol == "Simple" else 1.0
            intra = max(intra, post)
        net_step = _software_step_us(profile, NCCL_NET_STEP_US, key, net=True) + hop_us
        latency = NCCL_BASE_LATENCY_US[key] + (steps - inter) * intra + inter * net_step
        protocol_busbw = _ll_cap(busbw * NCCL_PROTOCOL_BW_SHARE[key], protocol, domains)
        protocol_busbw *= profile.collective_efficiency
        yield Candidate("Ring", protocol, latency, protocol_busbw / factor)


def _tree_net_bandwidth(profile: FabricProfile, group: CommGroup) -> float:
    """Network algbw bound of a double binary tree over the group's domains."""
    bw = _group_bandwidth(profile, group)
    pattern = tree_pattern(
        group.domains, group.nodes_per_domain, profile.nodes_per_leaf, profile.nodes_per_pod
    )
    sends = 1.0 if group.domains == 2 else 2.0
    return bw.net * pattern_throughput(profile, pattern, group.span_nodes) / sends


def _tree_levels(domains: int) -> int:
    return math.ceil(math.log2(domains)) if domains > 1 else 0


def _tree_candidates(
    profile: FabricProfile, group: CommGroup, size_bytes: float
) -> Iterator[Candidate]:
    local, domains = group.local_ranks, group.domains
    bw = _group_bandwidth(profile, group)
    algbw = _tree_net_bandwidth(profile, group)
    if local > 1:
        algbw = min(algbw, bw.nvlink / 2.0)  # a chain: every GPU sends the buffer up and down
    levels = _tree_levels(domains)
    path_us = group_path_latency_us(profile, group, _packet(profile, size_bytes))
    factor = busbw_factor("all_reduce", group.ranks)
    for protocol in PROTOCOLS:
        key = ("Tree", protocol)
        intra = _software_step_us(profile, NCCL_NVLINK_STEP_US, key, net=False)
        inter = _software_step_us(profile, NCCL_NET_STEP_US, key, net=True) + path_us
        latency = NCCL_BASE_LATENCY_US[key] + 2 * ((local - 1) * intra + levels * inter)
        busbw = _ll_cap(algbw * factor * NCCL_PROTOCOL_BW_SHARE[key], protocol, domains)
        yield Candidate("Tree", protocol, latency, busbw * profile.collective_efficiency / factor)


def _nvls_bandwidth(profile: FabricProfile, local: int) -> float:
    return profile.nvlink_GBps * local / (local + 1) * NVLS_REDUCTION_EFFICIENCY


def _sharp_bandwidth(profile: FabricProfile, group: CommGroup) -> float:
    trees = min(1.0, SHARP_MAX_TREES_PER_SWITCH / max(1.0, profile.ports_per_leaf_per_node))
    return _group_bandwidth(profile, group).net * SHARP_BW_EFFICIENCY * trees


def _in_switch_candidates(
    profile: FabricProfile, group: CommGroup, size_bytes: float
) -> Iterator[Candidate]:
    """NVLS, NVLSTree, CollNet Direct (SHARP) and NVLS+SHARP, where the hardware has them."""
    local, domains = group.local_ranks, group.domains
    eff = profile.collective_efficiency
    simple = "Simple"
    nvls_intra = _software_step_us(profile, NCCL_NVLINK_STEP_US, ("NVLS", simple), net=False)
    path_us = group_path_latency_us(profile, group, _packet(profile, size_bytes))
    if profile.nvls and local > 1 and domains == 1:
        yield Candidate("NVLS", simple, nvls_intra, _nvls_bandwidth(profile, local) * eff)
    if profile.nvls and local > 1 and domains > 1:
        levels = _tree_levels(domains)
        inter = (
            _software_step_us(profile, NCCL_NET_STEP_US, ("NVLSTree", simple), net=True) + path_us
        )
        algbw = min(_nvls_bandwidth(profile, local), _tree_net_bandwidth(profile, group))
        yield Candidate("NVLSTree", simple, nvls_intra + 2 * levels * inter, algbw * eff)
    if profile.in_network_reduction and domains > 1:
        sharp = _sharp_bandwidth(profile, group)
        if profile.nvls and local > 1:
            inter = _software_step_us(profile, NCCL_NET_STEP_US, ("NVLS", simple), net=True)
            algbw = min(_nvls_bandwidth(profile, local), sharp)
            yield Candidate("NVLS", simple, nvls_intra + inter + path_us, algbw * eff)
        intra = _software_step_us(
            profile, NCCL_NVLINK_STEP_US, ("CollNetDirect", simple), net=False
        )
        inter = _software_step_us(profile, NCCL_NET_STEP_US, ("CollNetDirect", simple), net=True)
        latency = (
            2 * (min(1, local - 1) * intra + (local - 1) * NCCL_COLLNET_ARITY_LATENCY_US)
            + inter
            + path_us
        )
        algbw = min(profile.nvlink_GBps * local / (2 * (local - 1)), sharp) if local > 1 else sharp
        yield Candidate("CollNetDirect", simple, latency, algbw * eff)


def _p2p_latency_us(
    profile: FabricProfile, group: CommGroup, size_bytes: float, remote_peers: int
) -> float:
    key = ("Ring", "Simple")
    base = NCCL_BASE_LATENCY_US[key]
    if group.domains == 1:
        return base + _software_step_us(profile, NCCL_NVLINK_STEP_US, key, net=False)
    step = _software_step_us(profile, NCCL_NET_STEP_US, key, net=True) + group_path_latency_us(
        profile, group, _packet(profile, size_bytes)
    )
    return base + step + max(0, remote_peers - 1) * NCCL_NET_POST_OVERHEAD_US


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
        nics = group.nics_per_domain(profile.nics_per_node)
        nvlink_bytes += (n - local) / n * max(0.0, 1.0 - 1.0 / max(1.0, nics))
    if local > 1:
        seconds_per_byte = max(seconds_per_byte, nvlink_bytes / bw.nvlink)
    algbw = profile.collective_efficiency / seconds_per_byte
    latency = _p2p_latency_us(profile, group, size_bytes / max(1, n), n - local)
    return Candidate("P2P", "Simple", latency, algbw)


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
    latency = _p2p_latency_us(profile, group, size_bytes, 1)
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
    if collective == "all_reduce":
        if group.domains > 1:
            candidates += list(_tree_candidates(profile, group, size_bytes))
        candidates += list(_in_switch_candidates(profile, group, size_bytes))
    return candidates


def collective_point(
    profile: FabricProfile, group: CommGroup, collective: CollectiveName, size_bytes: int
) -> CollectivePoint:
    """One nccl-tests row: the fastest algorithm and protocol for this size, as NCCL's tuner picks.

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

    Returns
    -------
    CollectivePoint
        Time, ``algbw = size / time`` and ``busbw = algbw * factor`` in GB/s (1e9 B/s).

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
    if size_bytes <= 0:
        raise ModelError(
            "FP506",
            "sizes",
            "a message size must be positive",
            size_bytes,
            "use sizes such as 8, 1M, 8G",
        )
    best = min(
        collective_candidates(profile, group, collective, size_bytes),
        key=lambda c: c.time_us(size_bytes),
    )
    time_us = best.time_us(size_bytes)
    algbw = size_bytes / (time_us * 1e3)
    return CollectivePoint(
        collective=collective,
        size_bytes=size_bytes,
        algorithm=best.label,
        time_us=time_us,
        algbw_GBps=algbw,
        busbw_GBps=algbw * busbw_factor(collective, group.ranks),
    )
