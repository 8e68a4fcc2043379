"""Where a communicator's traffic goes: which tiers it crosses and what the crossing costs.

A :class:`CommGroup` is the ranks of one communicator laid on consecutive nodes (as a scheduler
places a job), ``local_ranks`` of them in each NVLink domain. NCCL keeps traffic on rails: a ring's
channel ``c`` leaves every node through NIC ``c`` and enters the next node through its NIC ``c``
(rail-aligned rings), and all-to-all/point-to-point data first crosses NVLink to the GPU whose NIC
sits on the destination's rail (PXN, NCCL >= 2.12). So a flow between node ``a`` and node ``b``
stays under one leaf when both nodes' same-rail ports share that leaf: ``nodes_per_leaf`` nodes in a
rail-optimized design (a whole scalable unit), only ``hosts_per_leaf / ports_per_node`` in a
fat tree whose leaves take whole nodes. Everything else crosses the spines, and between pods the
core.

The share of a pattern's flows that leave the leaf (``leaf_share``) and the pod (``pod_share``)
decides the load on each tier; :func:`pattern_throughput` turns it into a throughput factor with
the tier's oversubscription and its routing (hash collisions, see :mod:`.collision`).

>>> ring_pattern(1024, nodes_per_domain=1, nodes_per_leaf=32, nodes_per_pod=1024).leaf_share
0.03125
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.analytic.collision import (
    adaptive_throughput,
    hashed_throughput,
    in_order_goodput_share,
)
from fabricplan.analytic.lossless import congestion_settle_us, victim_share
from fabricplan.analytic.profile import FabricProfile, path_latency_ns
from fabricplan.errors import ModelError
from fabricplan.units import gbps_to_bytes_per_us, ns_to_us

NCCL_CHANNELS_PER_NIC = 2
"""Flows NCCL opens per NIC for one peer: DGX H100 runs 16 collective channels over 8 NICs
(``NCCL INFO 16 coll channels`` in NCCL_DEBUG=INFO logs posted on NVIDIA/nccl issues, e.g. #1244),
each channel its own queue pair, so two ECMP flows per NIC and peer."""

HOPS_SAME_LEAF = 1
HOPS_SAME_POD = 3
HOPS_ACROSS_CORE = 5


@dataclass(frozen=True, slots=True)
class CommGroup:
    """The ranks of one communicator: ``ranks`` GPUs, ``local_ranks`` per NVLink domain."""

    ranks: int
    local_ranks: int
    gpus_per_node: int

    @property
    def domains(self) -> int:
        """NVLink domains the group spans (NCCL's "nodes")."""
        return self.ranks // self.local_ranks

    @property
    def nodes_per_domain(self) -> float:
        """Servers one domain of the group spans (more than 1 for a multi-node NVLink domain)."""
        return max(1.0, self.local_ranks / self.gpus_per_node)

    @property
    def span_nodes(self) -> float:
        """Consecutive servers the group occupies."""
        return self.domains * self.nodes_per_domain

    def nics_per_domain(self, nics_per_node: float) -> float:
        """NICs the group's ranks in one domain own (their GPUs' share of the node's NICs)."""
        return nics_per_node * self.local_ranks / self.gpus_per_node


@dataclass(frozen=True, slots=True)
class TrafficPattern:
    """How one NIC's flows of a pattern spread over the tiers."""

    flows_per_nic: float
    leaf_share: float
    """Share of the flows that leave their leaf."""
    pod_share: float
    """Share of the flows that leave their pod (cross the core)."""


def group_for(profile: FabricProfile, gpus: int | None) -> CommGroup:
    """The communicator of ``gpus`` ranks (default: the whole cluster) on consecutive nodes.

    Raises
    ------
    ModelError
        FP504 when ``gpus`` is below 2 or above the cluster; FP505 when a multi-domain group is
        not a whole number of NVLink domains.
    """
    ranks = profile.gpus if gpus is None else gpus
    if ranks < 2 or ranks > profile.gpus:
        raise ModelError(
            "FP504",
            "gpus",
            f"must be between 2 and the cluster's {profile.gpus}",
            ranks,
            "ask for a sub-group of the cluster",
        )
    domain = profile.nvlink_domain_gpus
    if ranks > domain and ranks % domain:
        lower = ranks - ranks % domain
        raise ModelError(
            "FP505",
            "gpus",
            f"spans NVLink domains of {domain} GPUs unevenly",
            ranks,
            f"use {lower} or {lower + domain}",
        )
    return CommGroup(
        ranks=ranks, local_ranks=min(ranks, domain), gpus_per_node=profile.gpus_per_node
    )


def _boundaries(span_nodes: float, group_nodes: float) -> int:
    """Ring hops crossing a group boundary when a ring closes over ``span_nodes`` in order."""
    groups = math.ceil(span_nodes / group_nodes - 1e-9)
    return groups if groups > 1 else 0


def ring_pattern(
    domains: int, nodes_per_domain: float, nodes_per_leaf: float, nodes_per_pod: float
) -> TrafficPattern:
    """A rail-aligned ring over ``domains`` consecutive domains: it leaves a leaf once per leaf.

    >>> p = ring_pattern(64, 1, nodes_per_leaf=4, nodes_per_pod=64)   # fat-tree leaves: 4 nodes
    >>> p.leaf_share, p.pod_share
    (0.25, 0.0)
    """
    if domains < 2:
        return TrafficPattern(NCCL_CHANNELS_PER_NIC, 0.0, 0.0)
    span = domains * nodes_per_domain
    return TrafficPattern(
        flows_per_nic=NCCL_CHANNELS_PER_NIC,
        leaf_share=_boundaries(span, nodes_per_leaf) / domains,
        pod_share=_boundaries(span, nodes_per_pod) / domains,
    )


def tree_pattern(
    domains: int, nodes_per_domain: float, nodes_per_leaf: float, nodes_per_pod: float
) -> TrafficPattern:
    """NCCL's binary tree over consecutive domains: level ``j`` links domains ``2**j`` apart.

    Each node sends to its parent and its two children (3 flows per channel); an edge of distance
    ``d`` domains crosses a boundary of a ``g``-node group with probability ``min(1, d * nd / g)``.

    >>> round(tree_pattern(64, 1, 32, 64).leaf_share, 3)
    0.095
    """
    if domains < 2:
        return TrafficPattern(3 * NCCL_CHANNELS_PER_NIC, 0.0, 0.0)
    levels = math.ceil(math.log2(domains))
    leaf = pod = 0.0
    for level in range(levels):
        distance = 2**level * nodes_per_domain
        edges = domains / 2 ** (level + 1)
        leaf += edges * min(1.0, distance / nodes_per_leaf)
        pod += edges * min(1.0, distance / nodes_per_pod)
    edges_total = domains - 1
    return TrafficPattern(
        3 * NCCL_CHANNELS_PER_NIC, min(1.0, leaf / edges_total), min(1.0, pod / edges_total)
    )


def all_to_all_pattern(
    group: CommGroup, nics_per_node: int, nodes_per_leaf: float, nodes_per_pod: float
) -> TrafficPattern:
    """Every rank sends to every remote rank at once; NIC flows are (source, destination) pairs.

    >>> g = CommGroup(ranks=1024, local_ranks=8, gpus_per_node=8)
    >>> p = all_to_all_pattern(g, 8, nodes_per_leaf=32, nodes_per_pod=128)
    >>> p.flows_per_nic, round(p.leaf_share, 4)
    (1016.0, 0.7559)
    """
    domains = group.domains
    if domains < 2:
        return TrafficPattern(0.0, 0.0, 0.0)
    local = group.local_ranks
    flows = local * (group.ranks - local) / group.nics_per_domain(nics_per_node)
    per_leaf = min(domains, max(1.0, nodes_per_leaf / group.nodes_per_domain))
    per_pod = min(domains, max(1.0, nodes_per_pod / group.nodes_per_domain))
    return TrafficPattern(
        flows_per_nic=flows,
        leaf_share=(domains - per_leaf) / (domains - 1),
        pod_share=(domains - per_pod) / (domains - 1),
    )


def pair_pattern(
    distance_nodes: float, nodes_per_leaf: float, nodes_per_pod: float
) -> TrafficPattern:
    """Point-to-point between nodes ``distance_nodes`` apart (pipeline stages, send/recv).

    >>> pair_pattern(16, 32, 128).leaf_share
    0.5
    """
    return TrafficPattern(
        flows_per_nic=NCCL_CHANNELS_PER_NIC,
        leaf_share=min(1.0, distance_nodes / nodes_per_leaf),
        pod_share=min(1.0, distance_nodes / nodes_per_pod),
    )


def per_packet_routing(profile: FabricProfile) -> bool:
    """True when the fabric places each packet (or cell) on its own path: spraying, or adaptive
    routing whose implementation is per packet (not flowlet)."""
    if profile.routing == "spray":
        return True
    return profile.routing == "adaptive" and profile.adaptive_granularity == "per_packet"


def reorder_goodput_share(profile: FabricProfile, paths: int) -> float:
    """Goodput share left to a flow crossing ``paths`` equal-cost links after reordering.

    1 unless the routing is per packet, the fabric does not reassemble and the receiver accepts
    packets only in order; then go-back-N on every overtaking packet
    (:func:`.collision.in_order_goodput_share`) with the packets in flight of one round trip
    through the spines.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> reorder_goodput_share(fabric_profile(valid, design_fabric(valid, "infiniband")), 32)
    1.0
    """
    if not per_packet_routing(profile) or profile.fabric_reassembles:
        return 1.0
    if profile.delivery != "in_order":
        return 1.0
    rtt_ns = 2 * path_latency_ns(profile, HOPS_SAME_POD, profile.mtu_bytes)
    in_flight = gbps_to_bytes_per_us(profile.link_speed_gbps) * ns_to_us(rtt_ns)
    packets = in_flight / (profile.mtu_bytes + profile.header_bytes)
    return in_order_goodput_share(paths, packets)


def _fabric_demand(profile: FabricProfile, demand_ratio: float) -> float:
    """A flow's demand on a fabric link: cells carry less payload than the host link's packets."""
    if profile.fabric_payload_share is None:
        return demand_ratio
    host_share = profile.mtu_bytes / (profile.mtu_bytes + profile.header_bytes)
    return demand_ratio * host_share / profile.fabric_payload_share


def _stage(profile: FabricProfile, flows: float, paths: int, demand_ratio: float) -> float:
    count = max(1, round(flows))
    if paths <= 0:
        return 1.0
    demand = _fabric_demand(profile, demand_ratio)
    if per_packet_routing(profile):
        spread = adaptive_throughput(count, paths, demand)
        return spread * reorder_goodput_share(profile, paths)
    # ECMP, static, flowlet (a long-lived flow never idles long enough to be moved) and flowlet
    # adaptive routing: up at the source switch and down at the destination: two hashes.
    return hashed_throughput(count, paths, demand, stages=2)


def pattern_throughput(profile: FabricProfile, pattern: TrafficPattern, span_nodes: float) -> float:
    """Throughput factor (0..1] of a pattern on the fabric: oversubscription and routing.

    Every NIC of the group runs the pattern at once. At a leaf, the group's ``h`` host ports send
    ``h * flows_per_nic * leaf_share`` flows up its ``U`` uplinks, each flow asking for
    ``link / (port * flows_per_nic)`` of an uplink; so the offered load is
    ``oversubscription * leaf_share`` (times the link/port speed ratio). At a spine (three tiers)
    the flows that leave the pod go up its core links in the same way. Per-packet routing
    (spraying, per-packet adaptive routing) spreads them evenly, minus go-back-N where the
    receiver needs order (:func:`reorder_goodput_share`); static, ECMP and flowlet routing hash
    them (:func:`.collision.hashed_throughput`). On a cell fabric each flow asks for more of a
    fabric link than of its host link (:attr:`.FabricProfile.fabric_payload_share`).

    Parameters
    ----------
    profile
        The fabric.
    pattern
        Flows per NIC and the shares leaving the leaf and the pod.
    span_nodes
        Servers the group occupies (a small group fills only part of a leaf).

    Returns
    -------
    float
        The rate of the slowest flow as a share of its unconstrained rate.
    """
    if pattern.leaf_share <= 0 or pattern.flows_per_nic <= 0 or profile.leaf_up_ports <= 0:
        return 1.0
    hosts = min(profile.nodes_per_leaf, span_nodes) * profile.ports_per_leaf_per_node
    hosts = min(hosts, float(profile.hosts_per_leaf))
    # Each queue pair of a connection is hashed on its own (nccl.qps_per_connection).
    flows_per_nic = pattern.flows_per_nic * profile.qps_per_connection
    demand = profile.link_speed_gbps / (profile.port_speed_gbps * flows_per_nic)
    flows_up = hosts * flows_per_nic * pattern.leaf_share
    factor = _stage(profile, flows_up, profile.leaf_up_ports, demand)
    if profile.tiers >= 3 and pattern.pod_share > 0 and profile.spine_up_ports > 0:
        # A spine collects the pod-leaving flows of spine_down / leaf_up leaves' worth of hosts.
        flows_core = (
            hosts
            * flows_per_nic
            * pattern.pod_share
            * profile.spine_down_ports
            / profile.leaf_up_ports
        )
        factor = min(factor, _stage(profile, flows_core, profile.spine_up_ports, demand))
    return factor


def span_switch_hops(profile: FabricProfile, span_nodes: float) -> int:
    """Switch hops of the longest path inside a group of ``span_nodes`` consecutive servers."""
    if profile.tiers <= 1 or span_nodes <= 1:
        return HOPS_SAME_LEAF
    if span_nodes <= profile.nodes_per_leaf:
        return HOPS_SAME_LEAF
    if profile.tiers < 3 or span_nodes <= profile.nodes_per_pod:
        return HOPS_SAME_POD
    return HOPS_ACROSS_CORE


def ring_hop_latency_us(profile: FabricProfile, group: CommGroup, size_bytes: float) -> float:
    """Mean one-way latency of a ring's inter-domain hop, counting hops that cross tiers."""
    domains = group.domains
    if domains < 2:
        return 0.0
    span = group.span_nodes
    cross_leaf = _boundaries(span, profile.nodes_per_leaf) if profile.tiers > 1 else 0
    cross_pod = _boundaries(span, profile.nodes_per_pod) if profile.tiers > 2 else 0
    cross_leaf = max(cross_leaf, cross_pod)
    local = domains - cross_leaf
    total = (
        local * path_latency_ns(profile, HOPS_SAME_LEAF, size_bytes)
        + (cross_leaf - cross_pod) * path_latency_ns(profile, HOPS_SAME_POD, size_bytes)
        + cross_pod * path_latency_ns(profile, HOPS_ACROSS_CORE, size_bytes)
    )
    return ns_to_us(total / domains)


def group_path_latency_us(profile: FabricProfile, group: CommGroup, size_bytes: float) -> float:
    """One-way latency of the longest path inside the group."""
    hops = span_switch_hops(profile, group.span_nodes)
    return ns_to_us(path_latency_ns(profile, hops, size_bytes))


INCAST_NOTE_SENDERS = 16
"""Senders of the incast the performance notes describe (an illustration of the mechanism, not
a workload figure: 16 ranks pushing into one, as in an all_to_all's hot spot)."""
INCAST_NOTE_VICTIM_BYTES = 2**20
"""Bytes of the victim transfer the notes follow (1 MiB: a mid-size NCCL chunk)."""


def incast_victim_note(profile: FabricProfile) -> str:
    """What a victim flow beside an incast keeps of its line, by the fabric's mechanisms
    (:func:`.lossless.victim_share`, :func:`.lossless.congestion_settle_us`).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.analytic.profile import fabric_profile
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> incast_victim_note(fabric_profile(valid, design_fabric(valid, "roce_v2")))[:58]
    'victim beside a 16-to-1 incast (1 MiB at line rate, 21 us)'
    """
    rtt_us = ns_to_us(2 * path_latency_ns(profile, HOPS_SAME_POD, profile.mtu_bytes))
    duration_us = INCAST_NOTE_VICTIM_BYTES / gbps_to_bytes_per_us(profile.link_speed_gbps)
    settle = congestion_settle_us(
        profile.congestion_control,
        INCAST_NOTE_SENDERS,
        rtt_us,
        ns_to_us(profile.fabric_request_grant_ns),
    )
    share = victim_share(profile.link_flow_control, INCAST_NOTE_SENDERS, settle, duration_us)
    settle_text = "never settles" if math.isinf(settle) else f"settles in {settle:.1f} us"
    return (
        f"victim beside a {INCAST_NOTE_SENDERS}-to-1 incast ({INCAST_NOTE_VICTIM_BYTES // 2**20}"
        f" MiB at line rate, {duration_us:.0f} us): keeps {share:.0%} of its line"
        f" ({profile.link_flow_control} link flow control; {profile.congestion_control}"
        f" {settle_text})"
    )
