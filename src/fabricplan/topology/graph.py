"""A designed fabric expanded into its switches and directed links.

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

Routing on the graph (one path per flow, the trunks of a sprayed flow, path latencies) is
:mod:`fabricplan.topology.routing`: the graph is the data, routing the algorithms over it.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> valid = parse_spec({"cluster": {"gpus": 256},
...     "fabric": {"technologies": ["infiniband"], "management_ports": 0}})
>>> graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
>>> graph.hosts, graph.leaves, graph.spines, graph.links
(256, 8, 4, 1024)
>>> int(graph.host_leaf[0]) != int(graph.host_leaf[1]), graph.max_hops
(True, 4)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

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
    leaf_latency_ns: float = 0.0
    """Forwarding latency of a leaf, part of every link leaving one (a scheduled fabric's
    request and grant cells cross the fabric without it)."""
    spine_extra_latency_ns: float = 0.0
    """What a switch of the spine tier adds over the leaf's latency on every link leaving it:
    a scheduled fabric's fabric element minus its leaf (catalog), 0 for one switch model in
    every tier. ``link_latency_ns`` keeps the leaf's figure on every link, so a level that
    builds its own link delays from it adds this difference to the links leaving a spine;
    path latencies add it (:func:`~fabricplan.topology.routing.path_latency_ns`)."""

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
        >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
        ...     "switch": {"roce_v2": "sn5600"}}})
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
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
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
    # A scheduled fabric's spine tier is its fabric elements (cell switches with their own
    # latency); every other design has one switch model in every tier. Links keep the leaf's
    # latency; paths (and a level building its own link delays) add the difference.
    element = valid.fabric_elements.get(design.technology)
    spine_extra_ns = 0.0 if element is None or tiers < 2 else element.latency_ns.value - switch_ns
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
        leaf_latency_ns=switch_ns,
        spine_extra_latency_ns=spine_extra_ns,
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
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
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
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> int(reverse_links(g, np.array([0]))[0]) == int(g.host_down_link[0])
    True
    """
    return graph.link_reverse[np.asarray(links, dtype=np.int64)].astype(np.int64)
