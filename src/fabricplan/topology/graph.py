"""A designed fabric expanded into its switches and directed links, with a vectorised router.

:class:`~fabricplan.model.fabric.FabricDesign` holds counts; the flow and packet simulators need
every switch and every link. :func:`fabric_graph` expands the design following the semantics
shared by the designer, the cost model and the simulators:

- ``planes`` P: NIC port ``j`` of a node belongs to plane ``j % P`` with rail ``j // P``; each
  plane is an independent fabric.
- ``spine_groups`` G: the leaves of a plane are split into G groups, each with its own spines.
  A rail-optimized plane with G > 1 gives rail ``r`` to group ``r * G // R`` (R rails per plane),
  so that G = R gives every rail its own spines.
- Rail-optimized leaves: leaf ``(su, rail)`` serves rail ``rail`` of the ``hosts_per_leaf`` nodes
  of scalable unit ``su = node // hosts_per_leaf``; inside a spine group, leaves are numbered
  SU-major (``su * rails_in_group + rail``), so a 3-tier pod of ``leaves_per_pod`` leaves holds
  whole SUs. Fat-tree leaves take host ports consecutively (node-major, port-minor).
- A leaf's ``up_ports`` uplinks go evenly to the spines of its group or pod: uplink ``u`` reaches
  spine ``u % A`` (A spines per pod) as its parallel link ``u // A``. At 3 tiers aggregation
  switch ``a`` of every pod connects to core group ``a``; its uplink ``v`` reaches core
  ``v % C`` of that group (C cores per group) as parallel link ``v // C``.

Vertices are numbered hosts (NIC ports, ``node * nics_per_node + port``) first, then leaves,
spines and cores. Every cable is two directed links. Links are grouped into *trunks* (the links
that leave a leaf upwards, the links into a leaf, the links that leave a pod upwards, the links
into a pod, and one trunk per host link): a flow sprayed evenly over its equal-cost paths loads
every link of a trunk equally, so a fluid model may treat a trunk as one pooled link.

Routing is up-down on shortest paths. :func:`route` gives each flow one path, chosen per hop
either by destination (``dmodk``, the D-mod-K rule of static fat-tree routing) or by a hash of
the flow's key and the switch (``hash``, ECMP); :func:`trunk_route` gives the trunk sequence of a
sprayed flow. Failed links and switches are avoided: a hop chooses among the options that still
lead to the destination.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> valid = parse_spec({"cluster": {"gpus": 256},
...     "fabric": {"technologies": ["infiniband"], "management_ports": 0}})
>>> graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
>>> graph.hosts, graph.leaves, graph.spines, graph.links
(256, 8, 4, 1024)
>>> import numpy as np
>>> paths = route(graph, np.array([0, 0]), np.array([1, 8]), "dmodk")
>>> [int((p >= 0).sum()) for p in paths]  # same node, other rail: up-down; same rail: one leaf
[4, 2]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign, LinkGroupName
from fabricplan.model.scenario import ValidScenario

IntArray = NDArray[np.int64]
Int32Array = NDArray[np.int32]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
KeyArray = NDArray[np.uint64]

RouteMode = Literal["dmodk", "hash"]

LINK_TIERS: tuple[str, ...] = (
    "node_to_leaf",
    "leaf_to_node",
    "leaf_to_spine",
    "spine_to_leaf",
    "spine_to_core",
    "core_to_spine",
)
"""Names of the link tiers, indexed by :attr:`FabricGraph.link_tier` (direction included)."""
NODE_TO_LEAF, LEAF_TO_NODE, LEAF_TO_SPINE, SPINE_TO_LEAF, SPINE_TO_CORE, CORE_TO_SPINE = range(6)

FIBRE_NS_PER_M = 4.9
"""Propagation delay used when a link group has no catalog cable (glass of group index ~1.47:
1.47 / 0.2998 m/ns), as the catalog's optics entries state."""

MAX_HOPS_BY_TIERS = {1: 2, 2: 4, 3: 6}
"""Links on the longest up-down path: host-leaf-host, via a spine, via a core."""

ROUTE_CHUNK_FLOWS = 1 << 15
"""Flows routed per vectorised batch (bounds the (flows x next hops) scratch matrices)."""

_GOLDEN_U64 = 0x9E3779B97F4A7C15
_MIX1_U64 = 0xBF58476D1CE4E5B9
_MIX2_U64 = 0x94D049BB133111EB


def mix64(values: KeyArray) -> KeyArray:
    """A 64-bit finaliser (SplitMix64) applied element-wise: a cheap, well-spread hash.

    Reference: G. Steele, D. Lea, C. Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014.

    >>> import numpy as np
    >>> a = mix64(np.array([1, 2], dtype=np.uint64))
    >>> bool(a[0] != a[1]), a.dtype.name
    (True, 'uint64')
    """
    x = np.asarray(values, dtype=np.uint64) + np.uint64(_GOLDEN_U64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(_MIX1_U64)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(_MIX2_U64)
    return x ^ (x >> np.uint64(31))


@dataclass(frozen=True, eq=False)
class FabricGraph:
    """Every switch and directed link of one designed fabric, as numpy arrays.

    The shapes use ``H`` hosts, ``NL`` leaves, ``NS`` spines (aggregation switches at 3 tiers),
    ``NC`` cores, ``U1`` uplinks per leaf, ``U2`` uplinks per spine, ``LPP`` leaves per pod and
    ``PODS`` pods per domain (a domain is one spine group of one plane). Entries for absent
    leaves of a partial last pod are -1.
    """

    technology: str
    topology: str
    tiers: int
    planes: int
    spine_groups: int
    nodes: int
    gpus_per_node: int
    nics_per_node: int
    hosts: int
    leaves: int
    spines: int
    cores: int
    hosts_per_leaf: int
    leaves_per_domain: int
    pods: int
    """Pods per domain (1 at 2 tiers)."""
    leaves_per_pod: int
    spines_per_pod: int
    leaf_spine_parallel: int
    """Parallel links between a leaf and each spine of its pod."""
    cores_per_group: int
    spine_core_parallel: int
    """Parallel links between an aggregation switch and each core of its group."""
    nic_latency_ns: float
    """One adapter's latency, per side."""
    link_src: Int32Array
    link_dst: Int32Array
    link_speed_gbps: FloatArray
    link_latency_ns: FloatArray
    """Propagation over the cable plus the forwarding latency of the switch the link leaves."""
    link_tier: NDArray[np.int8]
    link_alive: BoolArray
    link_reverse: Int32Array
    """The other direction of each link's cable."""
    trunk_of_link: Int32Array
    trunks: int
    host_leaf: Int32Array
    host_index: Int32Array
    """Position of the host in its domain in tree order (leaf-major): the ``D`` of D-mod-K."""
    host_domain: Int32Array
    host_up_link: Int32Array
    host_down_link: Int32Array
    leaf_domain: Int32Array
    leaf_pod: Int32Array
    """Pod of each leaf, numbered across domains (``domain * pods + pod``)."""
    leaf_slot: Int32Array
    """Position of each leaf in its pod."""
    leaf_up_links: Int32Array
    """(NL, U1) leaf-to-spine links."""
    leaf_up_spine: Int32Array
    """(NL, U1) the spine each of those links reaches."""
    spine_pod: Int32Array
    spine_slot: Int32Array
    """Position ``a`` of each spine in its pod (its core group at 3 tiers)."""
    spine_down_links: Int32Array
    """(NS, LPP, leaf_spine_parallel) spine-to-leaf links."""
    spine_up_links: Int32Array
    """(NS, U2) aggregation-to-core links (width 0 below 3 tiers)."""
    spine_up_core: Int32Array
    core_down_links: Int32Array
    """(NC, PODS, spine_core_parallel) core-to-aggregation links, to slot ``core group`` of each
    pod of the core's domain."""
    core_group: Int32Array
    core_domain: Int32Array
    pod_spines: Int32Array
    """(domains * PODS, A) spines of each pod."""

    @property
    def links(self) -> int:
        """Directed links."""
        return int(self.link_src.size)

    @property
    def max_hops(self) -> int:
        """Links on the longest up-down path."""
        return MAX_HOPS_BY_TIERS[self.tiers]

    @property
    def vertices(self) -> int:
        return self.hosts + self.leaves + self.spines + self.cores

    @property
    def pods_total(self) -> int:
        """Pods over all domains."""
        return self.planes * self.spine_groups * self.pods

    @property
    def all_alive(self) -> bool:
        return bool(self.link_alive.all())

    def vertex_name(self, vertex: int) -> str:
        """A readable name: ``node12/nic3``, ``leaf5``, ``spine2``, ``core0``.

        >>> from fabricplan.spec import parse_spec
        >>> from fabricplan.topology.designer import design_fabric
        >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
        >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
        >>> g.vertex_name(9), g.vertex_name(g.hosts)
        ('node1/nic1', 'leaf0')
        """
        if vertex < self.hosts:
            node, port = divmod(vertex, self.nics_per_node)
            return f"node{node}/nic{port}"
        vertex -= self.hosts
        for name, count in (("leaf", self.leaves), ("spine", self.spines), ("core", self.cores)):
            if vertex < count:
                return f"{name}{vertex}"
            vertex -= count
        raise IndexError(vertex)

    def link_name(self, link: int) -> str:
        """``src->dst`` of one directed link."""
        return f"{self.vertex_name(int(self.link_src[link]))}->" + self.vertex_name(
            int(self.link_dst[link])
        )

    def trunk_capacity_gbps(self) -> FloatArray:
        """Live capacity of every trunk (sum of its live links)."""
        live = np.where(self.link_alive, self.link_speed_gbps, 0.0)
        return np.asarray(
            np.bincount(self.trunk_of_link, weights=live, minlength=self.trunks), dtype=np.float64
        )


def _check(condition: bool, what: str, value: object) -> None:
    if not condition:
        raise ModelError(
            "FP530",
            "fabric design",
            f"cannot be expanded into links: {what}",
            value,
            "report the spec that produced this design (the designer and the graph disagree)",
        )


def _group_latency_ns(
    design: FabricDesign, valid: ValidScenario
) -> dict[LinkGroupName, tuple[float, float]]:
    """(speed_gbps, propagation ns) per link group."""
    per_m = {cable.id: cable.ns_per_m.value for cable in valid.cables}
    out: dict[LinkGroupName, tuple[float, float]] = {}
    for group in design.link_groups:
        out[group.name] = (
            group.speed_gbps,
            group.reach_m * per_m.get(group.cable_id, FIBRE_NS_PER_M),
        )
    return out


def _host_placement(
    design: FabricDesign, nodes: int, nics: int, domains_leaves: int
) -> tuple[Int32Array, Int32Array, Int32Array]:
    """(domain, local leaf, slot on the leaf) of every host port."""
    planes, groups = design.planes, design.spine_groups
    rails = nics // planes
    host = np.arange(nodes * nics, dtype=np.int64)
    node, port = np.divmod(host, nics)
    plane, rail = port % planes, port // planes
    hpl = design.hosts_per_leaf
    if design.topology == "rail_optimized" and design.tiers > 1:
        _check(
            rails % groups == 0, "rails per plane not divisible by spine groups", (rails, groups)
        )
        rails_in_group = rails // groups
        group = rail // rails_in_group
        local = (node // hpl) * rails_in_group + rail % rails_in_group
        slot = node % hpl
    else:
        _check(groups == 1, "spine groups on a fat-tree topology", groups)
        group = np.zeros_like(rail)
        position = node * rails + rail
        local, slot = np.divmod(position, hpl)
    domain = plane * groups + group
    _check(
        int(local.max(initial=0)) < domains_leaves,
        "more leaves needed than designed",
        (int(local.max(initial=0)) + 1, domains_leaves),
    )
    return domain.astype(np.int32), local.astype(np.int32), slot.astype(np.int32)


def fabric_graph(design: FabricDesign, valid: ValidScenario) -> FabricGraph:
    """Expand a design into every switch and directed link (see the module docstring).

    Parameters
    ----------
    design
        A fabric from :func:`fabricplan.topology.designer.design_fabric` (or built by hand with
        the same semantics).
    valid
        The scenario the design is for (node and NIC counts, switch and NIC latencies, cables).

    Returns
    -------
    FabricGraph

    Raises
    ------
    ModelError
        FP530 when the design's counts do not expand into a consistent graph.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> g.leaves, g.spines, g.leaf_spine_parallel, int(g.link_tier.max())  # 128 x 400G switches
    (16, 8, 8, 3)
    """
    cluster = valid.spec.cluster
    nodes, nics = cluster.nodes, cluster.nics_per_node
    planes, groups, tiers = design.planes, design.spine_groups, design.tiers
    _check(nics % planes == 0, "NIC ports per node not divisible by planes", (nics, planes))
    counts = design.switches
    domains = planes * groups
    n_leaves, n_spines, n_cores = counts["leaf"], counts["spine"], counts["core"]
    _check(
        n_leaves % domains == 0,
        "leaves not divisible by planes x spine groups",
        (n_leaves, domains),
    )
    leaves_d = n_leaves // domains
    leaf_tier, spine_tier = design.tier("leaf"), design.tier("spine")
    _check(leaf_tier is not None, "no leaf tier", design.tier_designs)
    up1 = leaf_tier.up_ports if (leaf_tier is not None and tiers > 1) else 0
    if tiers == 1:
        lpp, pods, aggs = leaves_d, 1, 0
    else:
        lpp = min(design.leaves_per_pod, leaves_d)
        pods = -(-leaves_d // lpp)
        _check(
            n_spines % (domains * pods) == 0,
            "spines not divisible by pods",
            (n_spines, domains * pods),
        )
        aggs = n_spines // (domains * pods)
        _check(
            aggs > 0 and up1 % aggs == 0,
            "leaf uplinks not divisible by spines per pod",
            (up1, aggs),
        )
    m_ls = up1 // aggs if aggs else 0
    up2, cores_g, m_sc = 0, 0, 0
    if tiers == 3:
        up2 = spine_tier.up_ports if spine_tier is not None else 0
        _check(
            n_cores % (domains * aggs) == 0,
            "cores not divisible by core groups",
            (n_cores, domains * aggs),
        )
        cores_g = n_cores // (domains * aggs)
        _check(up2 % cores_g == 0, "spine uplinks not divisible by cores per group", (up2, cores_g))
        m_sc = up2 // cores_g

    hosts = nodes * nics
    domain_of_host, local_leaf, slot = _host_placement(design, nodes, nics, leaves_d)
    host_leaf = domain_of_host * leaves_d + local_leaf
    host_index = local_leaf * design.hosts_per_leaf + slot

    speed_lat = _group_latency_ns(design, valid)
    switch_ns = valid.switches[design.technology].latency_ns.value
    nic_ns = valid.nics[design.technology].latency_ns.value
    node_speed, node_prop = speed_lat.get("node_leaf", (cluster.nic_speed_gbps, 0.0))
    ls_speed, ls_prop = speed_lat.get("leaf_spine", (design.port_speed_gbps, 0.0))
    sc_speed, sc_prop = speed_lat.get("spine_core", (design.port_speed_gbps, 0.0))

    leaf_v0 = hosts
    spine_v0 = hosts + n_leaves
    core_v0 = spine_v0 + n_spines
    src_parts: list[IntArray] = []
    dst_parts: list[IntArray] = []
    speed_parts: list[FloatArray] = []
    lat_parts: list[FloatArray] = []
    tier_parts: list[IntArray] = []
    trunk_parts: list[IntArray] = []

    def add(
        src: IntArray, dst: IntArray, speed: float, lat: float, tier: int, trunk: IntArray
    ) -> int:
        base = sum(part.size for part in src_parts)
        src_parts.append(src.astype(np.int64))
        dst_parts.append(dst.astype(np.int64))
        speed_parts.append(np.full(src.size, speed))
        lat_parts.append(np.full(src.size, lat))
        tier_parts.append(np.full(src.size, tier, dtype=np.int64))
        trunk_parts.append(trunk.astype(np.int64))
        return base

    host_ids = np.arange(hosts, dtype=np.int64)
    host_up = add(host_ids, leaf_v0 + host_leaf, node_speed, node_prop, NODE_TO_LEAF, host_ids)
    host_down = add(
        leaf_v0 + host_leaf,
        host_ids,
        node_speed,
        node_prop + switch_ns,
        LEAF_TO_NODE,
        hosts + host_ids,
    )
    trunk_base = 2 * hosts

    leaf_ids = np.arange(n_leaves, dtype=np.int64)
    leaf_domain = leaf_ids // leaves_d
    leaf_local = leaf_ids % leaves_d
    leaf_pod = leaf_domain * pods + leaf_local // lpp
    leaf_slot = leaf_local % lpp
    pods_total = domains * pods

    leaf_up_links = np.zeros((n_leaves, up1), dtype=np.int32)
    leaf_up_spine = np.zeros((n_leaves, up1), dtype=np.int32)
    spine_down_links = np.full((n_spines, lpp, max(m_ls, 0)), -1, dtype=np.int32)
    spine_pod = (
        np.repeat(np.arange(pods_total, dtype=np.int32), aggs)
        if aggs
        else np.zeros(0, dtype=np.int32)
    )
    spine_slot = (
        np.tile(np.arange(aggs, dtype=np.int32), pods_total)
        if aggs
        else np.zeros(0, dtype=np.int32)
    )
    pod_spines = (
        np.arange(n_spines, dtype=np.int32).reshape(pods_total, aggs)
        if aggs
        else np.zeros((pods_total, 0), dtype=np.int32)
    )
    if tiers > 1:
        u = np.arange(up1, dtype=np.int64)
        spine_of = leaf_pod[:, None] * aggs + (u % aggs)[None, :]
        parallel = np.broadcast_to(u // aggs, spine_of.shape)
        flat_leaf = np.repeat(leaf_ids, up1)
        up_trunk = trunk_base + flat_leaf
        base = add(
            leaf_v0 + flat_leaf,
            spine_v0 + spine_of.ravel(),
            ls_speed,
            ls_prop + switch_ns,
            LEAF_TO_SPINE,
            up_trunk,
        )
        leaf_up_links[:] = (base + np.arange(n_leaves * up1)).reshape(n_leaves, up1)
        leaf_up_spine[:] = spine_of
        down_trunk = trunk_base + n_leaves + flat_leaf
        base = add(
            spine_v0 + spine_of.ravel(),
            leaf_v0 + flat_leaf,
            ls_speed,
            ls_prop + switch_ns,
            SPINE_TO_LEAF,
            down_trunk,
        )
        down_ids = base + np.arange(n_leaves * up1)
        spine_down_links[spine_of.ravel(), np.repeat(leaf_slot, up1), parallel.ravel()] = down_ids
        trunk_base += 2 * n_leaves

    spine_up_links = np.zeros((n_spines, up2), dtype=np.int32)
    spine_up_core = np.zeros((n_spines, up2), dtype=np.int32)
    core_down_links = np.full((n_cores, pods, max(m_sc, 0)), -1, dtype=np.int32)
    core_ids = np.arange(n_cores, dtype=np.int64)
    core_domain = core_ids // (aggs * cores_g) if tiers == 3 else np.zeros(0, dtype=np.int64)
    core_group = (core_ids % (aggs * cores_g)) // cores_g if tiers == 3 else core_domain
    if tiers == 3:
        spine_ids = np.arange(n_spines, dtype=np.int64)
        s_domain = spine_pod.astype(np.int64) // pods
        v = np.arange(up2, dtype=np.int64)
        core_of = (
            s_domain[:, None] * aggs * cores_g
            + spine_slot[:, None].astype(np.int64) * cores_g
            + (v % cores_g)[None, :]
        )
        parallel = np.broadcast_to(v // cores_g, core_of.shape)
        flat_spine = np.repeat(spine_ids, up2)
        flat_pod = np.repeat(spine_pod.astype(np.int64), up2)
        base = add(
            spine_v0 + flat_spine,
            core_v0 + core_of.ravel(),
            sc_speed,
            sc_prop + switch_ns,
            SPINE_TO_CORE,
            trunk_base + flat_pod,
        )
        spine_up_links[:] = (base + np.arange(n_spines * up2)).reshape(n_spines, up2)
        spine_up_core[:] = core_of
        base = add(
            core_v0 + core_of.ravel(),
            spine_v0 + flat_spine,
            sc_speed,
            sc_prop + switch_ns,
            CORE_TO_SPINE,
            trunk_base + pods_total + flat_pod,
        )
        down_ids = base + np.arange(n_spines * up2)
        core_down_links[core_of.ravel(), flat_pod % pods, parallel.ravel()] = down_ids
        trunk_base += 2 * pods_total

    # Links were added in pairs of blocks (one direction, then the other, in the same order).
    reverse_parts: list[IntArray] = []
    offset = 0
    for first, second in zip(src_parts[::2], src_parts[1::2], strict=True):
        ids = np.arange(first.size, dtype=np.int64) + offset
        reverse_parts += [ids + first.size, ids]
        offset += first.size + second.size

    return FabricGraph(
        technology=design.technology,
        topology=design.topology,
        tiers=tiers,
        planes=planes,
        spine_groups=groups,
        nodes=nodes,
        gpus_per_node=cluster.gpus_per_node,
        nics_per_node=nics,
        hosts=hosts,
        leaves=n_leaves,
        spines=n_spines,
        cores=n_cores,
        hosts_per_leaf=design.hosts_per_leaf,
        leaves_per_domain=leaves_d,
        pods=pods,
        leaves_per_pod=lpp,
        spines_per_pod=aggs,
        leaf_spine_parallel=m_ls,
        cores_per_group=cores_g,
        spine_core_parallel=m_sc,
        nic_latency_ns=nic_ns,
        link_src=np.concatenate(src_parts).astype(np.int32),
        link_dst=np.concatenate(dst_parts).astype(np.int32),
        link_speed_gbps=np.concatenate(speed_parts),
        link_latency_ns=np.concatenate(lat_parts),
        link_tier=np.concatenate(tier_parts).astype(np.int8),
        link_alive=np.ones(sum(part.size for part in src_parts), dtype=np.bool_),
        link_reverse=np.concatenate(reverse_parts).astype(np.int32),
        trunk_of_link=np.concatenate(trunk_parts).astype(np.int32),
        trunks=trunk_base,
        host_leaf=host_leaf.astype(np.int32),
        host_index=host_index.astype(np.int32),
        host_domain=domain_of_host,
        host_up_link=(host_up + host_ids).astype(np.int32),
        host_down_link=(host_down + host_ids).astype(np.int32),
        leaf_domain=leaf_domain.astype(np.int32),
        leaf_pod=leaf_pod.astype(np.int32),
        leaf_slot=leaf_slot.astype(np.int32),
        leaf_up_links=leaf_up_links,
        leaf_up_spine=leaf_up_spine,
        spine_pod=spine_pod,
        spine_slot=spine_slot,
        spine_down_links=spine_down_links,
        spine_up_links=spine_up_links,
        spine_up_core=spine_up_core,
        core_down_links=core_down_links,
        core_group=core_group.astype(np.int32),
        core_domain=core_domain.astype(np.int32),
        pod_spines=pod_spines,
    )


def with_failures(
    graph: FabricGraph,
    links: Sequence[int] | IntArray = (),
    switches: Sequence[int] | IntArray = (),
) -> FabricGraph:
    """The same fabric with some directed links and switches down.

    A failed cable takes both of its directions: pass both link ids (see
    :func:`reverse_links`). ``switches`` are vertex ids (spines and cores; a failed leaf cuts its
    hosts off, which routing reports as unreachable).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> int(with_failures(g, switches=[g.hosts + g.leaves]).link_alive.sum()) < g.links
    True
    """
    alive = graph.link_alive.copy()
    link_ids = np.asarray(links, dtype=np.int64)
    if link_ids.size:
        alive[link_ids] = False
    vertex_ids = np.asarray(switches, dtype=np.int64)
    if vertex_ids.size:
        down = np.isin(graph.link_src, vertex_ids) | np.isin(graph.link_dst, vertex_ids)
        alive &= ~down
    return dataclasses.replace(graph, link_alive=alive)


def reverse_links(graph: FabricGraph, links: IntArray | Sequence[int]) -> IntArray:
    """The opposite direction of each link (the other half of its cable).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> int(reverse_links(g, np.array([0]))[0]) == int(g.host_down_link[0])
    True
    """
    return graph.link_reverse[np.asarray(links, dtype=np.int64)].astype(np.int64)


def path_choices(graph: FabricGraph, src: IntArray, dst: IntArray) -> IntArray:
    """Equal-cost up-down paths between each pair of host ports (on the designed fabric).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> path_choices(g, np.array([0, 0]), np.array([8, 1])).tolist()  # 64 uplinks x 8 down
    [1, 512]
    """
    src_leaf = graph.host_leaf[np.asarray(src)]
    dst_leaf = graph.host_leaf[np.asarray(dst)]
    up1 = graph.leaf_up_links.shape[1]
    same_leaf = src_leaf == dst_leaf
    same_pod = graph.leaf_pod[src_leaf] == graph.leaf_pod[dst_leaf]
    in_pod = up1 * graph.leaf_spine_parallel
    cross = in_pod * graph.spine_up_links.shape[1] * graph.spine_core_parallel
    return np.where(same_leaf, 1, np.where(same_pod, in_pod, cross)).astype(np.int64)


def _unreachable(src: IntArray, dst: IntArray, where: BoolArray) -> ModelError:
    i = int(np.flatnonzero(where)[0])
    return ModelError(
        "FP532",
        "flow routing",
        "no live path between two host ports",
        (int(src[i]), int(dst[i])),
        "fail fewer links or switches, or keep the failed ones off every path of these hosts",
    )


def _check_domains(graph: FabricGraph, src: IntArray, dst: IntArray) -> None:
    other = graph.host_domain[src] != graph.host_domain[dst]
    if other.any():
        i = int(np.flatnonzero(other)[0])
        raise ModelError(
            "FP531",
            "flow routing",
            "the two host ports are in different planes or spine"
            " groups, which no fabric path joins",
            (int(src[i]), int(dst[i])),
            "send between NICs of the same rail and plane (NCCL PXN does so over NVLink)",
        )


def _select(options: Int32Array, ok: BoolArray | None, digit: KeyArray) -> IntArray:
    """Index of the chosen option per row: the ``digit``-th live one (modulo the live count)."""
    width = options.shape[1]
    if ok is None:
        return (digit % np.uint64(width)).astype(np.int64)
    live = ok.sum(axis=1)
    j = (digit % np.maximum(live, 1).astype(np.uint64)).astype(np.int64)
    chosen: IntArray = np.argmax(np.cumsum(ok, axis=1) > j[:, None], axis=1).astype(np.int64)
    return chosen


def _hop_digit(
    mode: RouteMode, key: KeyArray, switch_vertex: IntArray, salt: int, dmodk: IntArray
) -> KeyArray:
    if mode == "dmodk":
        return dmodk.astype(np.uint64)
    salted = mix64(np.array([salt % 2**64], dtype=np.uint64))
    return mix64(key ^ mix64(switch_vertex.astype(np.uint64) ^ salted))


@dataclass(frozen=True)
class _Reach:
    """Which switches still reach which leaves (only built when something has failed)."""

    spine_leaf: BoolArray
    """(NS, LPP): the spine has a live link down to the leaf in that slot of its pod."""
    core_leaf: BoolArray
    """(NC, PODS, LPP): the core reaches that leaf of that pod of its domain."""
    spine_remote: BoolArray
    """(NS, PODS, LPP): the aggregation switch reaches that leaf of another pod via a core."""


def _any(values: BoolArray, axis: int) -> BoolArray:
    return np.asarray(np.any(values, axis=axis), dtype=np.bool_)


def _reach(graph: FabricGraph) -> _Reach:
    alive = np.append(graph.link_alive, False)  # index -1 (absent) reads as dead
    spine_leaf = (
        _any(alive[graph.spine_down_links], axis=2)
        if graph.spines
        else np.zeros((0, graph.leaves_per_pod), dtype=np.bool_)
    )
    if graph.tiers < 3:
        empty = np.zeros((0, 0, 0), dtype=np.bool_)
        return _Reach(spine_leaf, empty, empty)
    pods = graph.pods
    domain_pod = graph.core_domain[:, None] * pods + np.arange(pods)[None, :]  # (NC, PODS)
    target_spine = graph.pod_spines[domain_pod, graph.core_group[:, None]]  # (NC, PODS)
    link_ok = _any(alive[graph.core_down_links], axis=2)  # (NC, PODS)
    core_leaf = link_ok[:, :, None] & spine_leaf[target_spine]
    up_ok = alive[graph.spine_up_links]  # (NS, U2)
    spine_remote = _any(up_ok[:, :, None, None] & core_leaf[graph.spine_up_core], axis=1)
    return _Reach(spine_leaf, core_leaf, spine_remote)


def route(
    graph: FabricGraph,
    src: IntArray,
    dst: IntArray,
    mode: RouteMode,
    key: KeyArray | None = None,
    salt: int = 0,
) -> Int32Array:
    """One up-down path per flow, as a padded matrix of link ids (-1 after the last hop).

    Parameters
    ----------
    graph
        The fabric.
    src, dst
        Host ports of each flow (same plane and spine group).
    mode
        ``dmodk``: static destination-based routing; at the leaf the uplink is ``D mod U1``
        (``D`` = :attr:`FabricGraph.host_index`), at an aggregation switch ``(D div U1) mod U2``,
        and the way down repeats the parallel-link index of the way up, as OpenSM's fat-tree
        routing does (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic for Shift
        Permutations on Real Life Fat Trees", 2010). ``hash``: every switch picks among its
        equal-cost next hops by a hash of the flow ``key`` (the 5-tuple) and its own seed.
    key
        Per-flow 64-bit key (``hash`` mode).
    salt
        Seeds the switches' hash functions (``hash`` mode).

    Returns
    -------
    numpy.ndarray
        ``(n_flows, graph.max_hops)`` int32.

    Raises
    ------
    ModelError
        FP531 when a flow joins two domains, FP532 when failures leave no path.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> p = route(g, np.array([0]), np.array([1]), "hash", np.array([7], dtype=np.uint64))
    >>> g.link_tier[p[0]].tolist()
    [0, 2, 3, 1]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = src.size
    flow_key = np.zeros(n, dtype=np.uint64) if key is None else np.asarray(key, dtype=np.uint64)
    if n > ROUTE_CHUNK_FLOWS:
        return np.concatenate(
            [
                route(
                    graph,
                    src[i : i + ROUTE_CHUNK_FLOWS],
                    dst[i : i + ROUTE_CHUNK_FLOWS],
                    mode,
                    flow_key[i : i + ROUTE_CHUNK_FLOWS],
                    salt,
                )
                for i in range(0, n, ROUTE_CHUNK_FLOWS)
            ]
        )
    out = np.full((n, graph.max_hops), -1, dtype=np.int32)
    if n == 0:
        return out
    _check_domains(graph, src, dst)
    alive = graph.link_alive
    dead_hosts = ~(alive[graph.host_up_link[src]] & alive[graph.host_down_link[dst]])
    if dead_hosts.any():
        raise _unreachable(src, dst, dead_hosts)
    reach = None if graph.all_alive else _reach(graph)
    s_leaf = graph.host_leaf[src].astype(np.int64)
    d_leaf = graph.host_leaf[dst].astype(np.int64)
    out[:, 0] = graph.host_up_link[src]
    same_leaf = s_leaf == d_leaf
    out[same_leaf, 1] = graph.host_down_link[dst[same_leaf]]
    if graph.tiers == 1 or same_leaf.all():
        return out
    d_index = graph.host_index[dst].astype(np.int64)
    up1 = graph.leaf_up_links.shape[1]
    same_pod = (graph.leaf_pod[s_leaf] == graph.leaf_pod[d_leaf]) & ~same_leaf
    cross = ~same_pod & ~same_leaf
    leaf_v0 = graph.hosts
    spine_v0 = graph.hosts + graph.leaves
    core_v0 = spine_v0 + graph.spines
    aggs = graph.spines_per_pod

    def up_hop(rows: IntArray, remote: bool) -> IntArray:
        opts = graph.leaf_up_links[s_leaf[rows]]
        nxt = graph.leaf_up_spine[s_leaf[rows]].astype(np.int64)
        ok = None
        if reach is not None:
            slot = graph.leaf_slot[d_leaf[rows]]
            if remote:
                pod = graph.leaf_pod[d_leaf[rows]] % graph.pods
                further = reach.spine_remote[nxt, pod[:, None], slot[:, None]]
            else:
                further = reach.spine_leaf[nxt, slot[:, None]]
            ok = alive[opts] & further
            reachable = _any(ok, axis=1)
            if not reachable.all():
                raise _unreachable(src[rows], dst[rows], ~reachable)
        digit = _hop_digit(mode, flow_key[rows], leaf_v0 + s_leaf[rows], salt, d_index[rows] % up1)
        pick = _select(opts, ok, digit)
        out[rows, 1] = opts[np.arange(rows.size), pick]
        return nxt[np.arange(rows.size), pick]

    def down_to_leaf(rows: IntArray, spine: IntArray, hop: int) -> None:
        opts = graph.spine_down_links[spine, graph.leaf_slot[d_leaf[rows]]]
        ok = None if reach is None else alive[np.maximum(opts, 0)] & (opts >= 0)
        digit = _hop_digit(
            mode, flow_key[rows], spine_v0 + spine, salt + 1, (d_index[rows] % up1) // aggs
        )
        pick = _select(opts, ok, digit)
        out[rows, hop] = opts[np.arange(rows.size), pick]
        out[rows, hop + 1] = graph.host_down_link[dst[rows]]

    rows = np.flatnonzero(same_pod)
    if rows.size:
        spine = up_hop(rows, remote=False)
        down_to_leaf(rows, spine, 2)
    rows = np.flatnonzero(cross)
    if rows.size:
        agg = up_hop(rows, remote=True)
        up2 = graph.spine_up_links.shape[1]
        opts = graph.spine_up_links[agg]
        nxt = graph.spine_up_core[agg].astype(np.int64)
        d_pod = (graph.leaf_pod[d_leaf[rows]] % graph.pods).astype(np.int64)
        d_slot = graph.leaf_slot[d_leaf[rows]].astype(np.int64)
        ok = None
        if reach is not None:
            ok = alive[opts] & reach.core_leaf[nxt, d_pod[:, None], d_slot[:, None]]
        digit = _hop_digit(
            mode, flow_key[rows], spine_v0 + agg, salt + 2, (d_index[rows] // up1) % up2
        )
        pick = _select(opts, ok, digit)
        take = np.arange(rows.size)
        out[rows, 2] = opts[take, pick]
        core = nxt[take, pick]
        opts = graph.core_down_links[core, d_pod]
        d_domain = graph.leaf_domain[d_leaf[rows]].astype(np.int64)
        agg_down = graph.pod_spines[d_domain * graph.pods + d_pod, graph.core_group[core]]
        ok = None
        if reach is not None:
            ok = (
                alive[np.maximum(opts, 0)]
                & (opts >= 0)
                & reach.spine_leaf[agg_down, d_slot][:, None]
            )
        digit = _hop_digit(
            mode,
            flow_key[rows],
            core_v0 + core,
            salt + 3,
            (d_index[rows] // up1) % up2 // max(graph.cores_per_group, 1),
        )
        pick = _select(opts, ok, digit)
        out[rows, 3] = opts[take, pick]
        down_to_leaf(rows, agg_down.astype(np.int64), 4)
    return out


def trunk_route(graph: FabricGraph, src: IntArray, dst: IntArray) -> Int32Array:
    """The trunks a flow sprayed evenly over all its equal-cost paths crosses (-1 padded).

    Same leaf: the two host links. Same pod: host, the source leaf's uplinks, the links into the
    destination leaf, host. Across pods: also the source pod's uplinks to the core and the links
    into the destination pod.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> trunk_route(g, np.array([0]), np.array([1]))[0].tolist()
    [0, 512, 521, 257]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = src.size
    out = np.full((n, graph.max_hops), -1, dtype=np.int32)
    if n == 0:
        return out
    _check_domains(graph, src, dst)
    trunk_up = graph.trunk_of_link[graph.host_up_link[src]]
    trunk_down = graph.trunk_of_link[graph.host_down_link[dst]]
    s_leaf = graph.host_leaf[src].astype(np.int64)
    d_leaf = graph.host_leaf[dst].astype(np.int64)
    same_leaf = s_leaf == d_leaf
    out[:, 0] = trunk_up
    out[same_leaf, 1] = trunk_down[same_leaf]
    if graph.tiers == 1 or same_leaf.all():
        return _checked_trunks(graph, src, dst, out)
    base = 2 * graph.hosts
    same_pod = (graph.leaf_pod[s_leaf] == graph.leaf_pod[d_leaf]) & ~same_leaf
    cross = ~same_pod & ~same_leaf
    out[same_pod, 1] = base + s_leaf[same_pod]
    out[same_pod, 2] = base + graph.leaves + d_leaf[same_pod]
    out[same_pod, 3] = trunk_down[same_pod]
    if not cross.any():
        return _checked_trunks(graph, src, dst, out)
    pods_total = graph.pods_total
    pod_base = base + 2 * graph.leaves
    out[cross, 1] = base + s_leaf[cross]
    out[cross, 2] = pod_base + graph.leaf_pod[s_leaf[cross]]
    out[cross, 3] = pod_base + pods_total + graph.leaf_pod[d_leaf[cross]]
    out[cross, 4] = base + graph.leaves + d_leaf[cross]
    out[cross, 5] = trunk_down[cross]
    return _checked_trunks(graph, src, dst, out)


def _checked_trunks(
    graph: FabricGraph, src: IntArray, dst: IntArray, out: Int32Array
) -> Int32Array:
    if not graph.all_alive:
        caps = graph.trunk_capacity_gbps()
        dead = _any(np.where(out >= 0, caps[np.maximum(out, 0)], 1.0) <= 0, axis=1)
        if dead.any():
            raise _unreachable(src, dst, dead)
    return out


def path_latency_ns(graph: FabricGraph, paths: Int32Array) -> FloatArray:
    """One-way latency of each path: its links (propagation and switches) plus both NICs.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> lat = path_latency_ns(g, route(g, np.array([0, 0]), np.array([8, 1]), "dmodk"))
    >>> bool(lat[1] > lat[0])
    True
    """
    lat = np.append(graph.link_latency_ns, 0.0)
    return np.asarray(lat[paths].sum(axis=1) + 2 * graph.nic_latency_ns, dtype=np.float64)
