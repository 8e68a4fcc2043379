"""Scale limits a technology puts on a designed plane, reported as findings (never as crashes).

Each limit follows from the technology's scope, a mechanism in the catalog, not from its name:

- ``ib_subnet``: every host port and every switch (its management port 0) takes one unicast
  LID; one subnet has ``max_endpoints_per_domain`` of them (49,151 = 0x0001-0xBFFF at LMC 0).
  Beyond that the plane is split into subnets joined by IB routers (one per extra subnet).
- ``l2_domain`` (RoCEv1): frames are not routable, so every host of a plane must share one L2
  domain: one switch, or one MLAG pair of spines with dual-homed leaves (STP would block all
  but one uplink; a third tier needs routing). A plane that needs more is refused (FP625).
- ``routed_ip`` (RoCEv2): uplinks are ECMP next hops; a group wider than the switch supports
  leaves links unused.

>>> subnets_needed(70_656, 49_151), ib_routers_needed(70_656, 49_151)
(2, 1)
"""

from __future__ import annotations

import math

from fabricplan.errors import DesignError
from fabricplan.model.fabric import Finding
from fabricplan.model.hardware import TechnologySpec
from fabricplan.topology.fat_tree import FatTree, leaf_split

LIDS_PER_SWITCH = 1
"""Unicast LIDs a switch uses: one, for its management port 0 (IBA Vol. 1; switch external
ports have no LID of their own)."""

ECMP_MAX_NEXT_HOPS = 128
"""Next hops per ECMP group assumed available on an Ethernet switch. Basis: AMD ROCm
gpu-cluster-networking ``roce-network-config.rst`` configures Juniper ``maximum-ecmp 128``;
the maxima of Spectrum-4 and Tomahawk 5 are not published (reference catalog B.5). An
assumption, not a datasheet limit."""

MLAG_PEER_SWITCHES = 2
"""Switches one MLAG (multi-chassis link aggregation) domain joins: a peer pair (Cumulus Linux
and Arista EOS MLAG documentation)."""


def subnets_needed(addresses: int, per_subnet: int) -> int:
    """Subnets (or L2 domains) needed for ``addresses`` unicast addresses.

    >>> subnets_needed(49_151, 49_151), subnets_needed(49_152, 49_151)
    (1, 2)
    """
    return max(1, math.ceil(addresses / per_subnet))


def ib_routers_needed(lids: int, lids_per_subnet: int) -> int:
    """IB routers joining the subnets of one plane: one per subnet beyond the first.

    A lower bound: the routers must also carry the traffic between subnets (UFM-SDN routers
    join 2 to 6 subnets each, reference catalog B.4).

    >>> ib_routers_needed(40_000, 49_151), ib_routers_needed(150_000, 49_151)
    (0, 3)
    """
    return subnets_needed(lids, lids_per_subnet) - 1


IB_ROUTER_PORTS = 64
"""Ports of one InfiniBand router. Estimate: an NDR router built on the Quantum-2 ASIC, like the
64-port QM9700 (UFM Enterprise UM "Appendix - IB Router" describes router systems joining 2-6
subnets; no router port count was retrieved). Its ports run at the fabric's port speed."""


def ib_routers_for_bandwidth(
    host_ports: int,
    subnets: int,
    port_speed_gbps: float,
    oversubscription: float,
    router_ports: int = IB_ROUTER_PORTS,
) -> int:
    """IB routers a plane split into ``subnets`` equal subnets needs to carry its traffic.

    Under uniform traffic a share ``(subnets - 1) / subnets`` of what the hosts send leaves its
    subnet; the fabric carries ``host_ports x speed / oversubscription`` at full load, so the
    routers must carry ``host_ports x speed x (subnets - 1) / subnets / oversubscription``. A
    router forwards at most ``router_ports x speed`` (every port full duplex, each crossing flow
    entering on one port and leaving on another). At least ``subnets - 1`` routers join the
    subnets at all.

    Examples
    --------
    >>> ib_routers_for_bandwidth(49_152, 2, 400, 1.0)   # two halves of a non-blocking fabric
    384
    >>> ib_routers_for_bandwidth(49_152, 2, 400, 8.0), ib_routers_for_bandwidth(100, 2, 400, 1)
    (48, 1)
    """
    if subnets <= 1:
        return 0
    crossing_gbps = host_ports * port_speed_gbps * (subnets - 1) / subnets / oversubscription
    by_bandwidth = math.ceil(crossing_gbps / (router_ports * port_speed_gbps))
    return max(subnets - 1, by_bandwidth)


def addresses_per_plane(tech: TechnologySpec, plane: FatTree) -> int:
    """Unicast addresses one plane uses in its domain (LIDs for an IB subnet).

    >>> from fabricplan.model.hardware import Figure
    >>> from fabricplan.topology.fat_tree import fat_tree
    >>> ib = TechnologySpec(id="ib", name="ib", source="IBTA", date="2024",
    ...     switch_family="infiniband", link_flow_control="credit", congestion_control="ib_cc",
    ...     routing="adaptive", adaptive_routing_available=True, scope="ib_subnet",
    ...     mtu_bytes=4096, header_bytes=Figure(value=26, basis="standard"))
    >>> addresses_per_plane(ib, fat_tree(65_536, 64))  # host ports + 5,120 switches
    70656
    """
    switch_addresses = plane.switches * LIDS_PER_SWITCH if tech.scope == "ib_subnet" else 0
    return plane.host_ports + switch_addresses


def domain_findings(tech: TechnologySpec, plane: FatTree, planes: int) -> tuple[Finding, ...]:
    """Address-space finding (IB LIDs) for one plane of ``planes`` identical ones."""
    if tech.max_endpoints_per_domain is None:
        return ()
    limit = int(tech.max_endpoints_per_domain.value)
    addresses = addresses_per_plane(tech, plane)
    if addresses <= limit:
        return ()
    subnets = subnets_needed(addresses, limit)
    if tech.scope == "ib_subnet":
        routers = ib_routers_needed(addresses, limit)
        return (
            Finding(
                code="FP312",
                severity="warning",
                message=(
                    f"{tech.id}: a plane needs {addresses:,} LIDs ({plane.host_ports:,} host"
                    f" ports + {plane.switches:,} switches), above the {limit:,} unicast LIDs of"
                    f" one subnet (LMC 0); it is split into {subnets} subnets; joining them takes"
                    f" at least {routers} IB router(s) per plane, and carrying the traffic that"
                    " crosses subnets takes more (the bill of materials counts routers by that"
                    " bandwidth); or add fabric.planes so that each plane fits one subnet"
                ),
            ),
        )
    return (
        Finding(
            code="FP312",
            severity="error",
            message=(
                f"{tech.id}: a plane needs {addresses:,} addresses, above the {limit:,} of one"
                f" {tech.scope} domain; split the cluster into {subnets} domains or add"
                f" fabric.planes"
            ),
        ),
    )


MLAG_PEER_LINK_PORTS = 2
"""Ports each spine of an MLAG pair gives to the peer link between them. Estimate: the peer link
is a bond of at least two ports for redundancy (Cumulus Linux and Arista EOS MLAG guides
configure it as a bond); with every leaf dual-homed it carries only failover and flooded
traffic, so two ports are taken as enough. Not a datasheet limit."""

MAC_TABLE_ENTRIES = 50_000
"""MAC addresses one switch's forwarding table holds, the bound on an L2 domain's hosts plus
switches: 50k in the default forwarding profile of Spectrum-2 and Spectrum-3 (115k with
``l2-heavy``) in the Cumulus Linux 4.4 user guide, 'Supported Route Table Entries'. The
Spectrum-4 and Broadcom tables were not retrieved; the smaller default is used for all."""


def l2_domain_host_ports(radix: int, oversubscription: float = 1.0) -> int:
    """Most host ports one L2 domain of ``radix``-port switches holds (RoCEv1).

    An L2 fabric that keeps every uplink working is one switch or one MLAG pair of spines with
    every leaf dual-homed to both (its uplinks one LAG): a leaf of ``d`` host ports and ``u``
    uplinks (:func:`~.fat_tree.leaf_split`) sends them to two spines that each keep
    :data:`MLAG_PEER_LINK_PORTS` for the peer link, so ``leaves <= 2 (k - peer) / u``. A third
    tier or a third spine needs spanning tree (which blocks all but one uplink) or routing, which
    RoCEv1 frames cannot cross. Capped by :data:`MAC_TABLE_ENTRIES` less the switches' own MACs.

    Examples
    --------
    >>> l2_domain_host_ports(64)      # 32:32 leaves; 2 x 62 / 32 = 3 leaves
    96
    >>> l2_domain_host_ports(128), l2_domain_host_ports(128, 3.0)   # 400G on a 51.2T switch
    (192, 672)
    """
    down, up = leaf_split(radix, oversubscription)
    leaves = (MLAG_PEER_SWITCHES * (radix - MLAG_PEER_LINK_PORTS)) // up if up else 0
    mlag_hosts = leaves * down if leaves >= 2 else 0
    hosts = max(radix, mlag_hosts)
    return min(hosts, MAC_TABLE_ENTRIES - (leaves + MLAG_PEER_SWITCHES))


def l2_domain_findings(
    tech: TechnologySpec, plane: FatTree, planes: int, oversubscription: float = 1.0
) -> tuple[Finding, ...]:
    """What confining a plane to one L2 domain means, for a technology with ``l2_domain``
    scope; a plane that does not fit one domain is refused.

    Each plane, and each spine group of a rail-optimized plane, is its own L2 domain: its hosts
    reach one another over the fabric; traffic between domains crosses NVLink first (as between
    planes), never a router.

    Raises
    ------
    DesignError
        FP625 when a domain's hosts exceed :func:`l2_domain_host_ports`, or its shape (a third
        tier, more than an MLAG pair of spines) needs routing: RoCEv1 across two L2 domains.

    Examples
    --------
    >>> from fabricplan.catalog.loader import load_catalog
    >>> from fabricplan.topology.fat_tree import fat_tree
    >>> v1 = load_catalog().get_typed("roce_v1", TechnologySpec, "doc")
    >>> [f.code for f in l2_domain_findings(v1, fat_tree(96, 64), 1)]
    ['FP313']
    >>> try:
    ...     l2_domain_findings(v1, fat_tree(1024, 64), 1)   # 1,024 hosts: 11 domains
    ... except DesignError as exc:
    ...     exc.code
    'FP625'
    """
    if tech.scope != "l2_domain":
        return ()
    groups = plane.spine_groups
    domain_hosts = math.ceil(plane.host_ports / groups)
    limit = l2_domain_host_ports(plane.radix, oversubscription)
    spines_per_group = plane.spines // groups if plane.tiers >= 2 else 0
    fits = plane.tiers == 1 or (
        plane.tiers == 2 and spines_per_group <= MLAG_PEER_SWITCHES and domain_hosts <= limit
    )
    domains = planes * groups
    scope = (
        f"{domains} L2 domain(s) ({planes} plane(s) x {groups} spine group(s)), each of"
        f" {domain_hosts:,} host ports"
    )
    if not fits:
        needed = max(2, math.ceil(domain_hosts / limit))
        raise DesignError(
            "FP625",
            "fabric.technologies",
            f"{tech.id} is not routable and one L2 domain of {plane.radix}-port switches at"
            f" {oversubscription:g}:1 holds at most {limit:,} host ports (one switch, or leaves"
            f" on one MLAG spine pair with {MLAG_PEER_LINK_PORTS} peer-link ports each), but this"
            f" {plane.tiers}-tier plane has {domain_hosts:,} per spine set: {needed} L2 domains",
            domain_hosts,
            "use roce_v2 (routable), add fabric.planes (each plane is its own L2 domain),"
            " raise fabric.oversubscription, or choose a switch with more ports",
        )
    if plane.tiers == 1:
        return (
            Finding(
                code="FP313",
                severity="info",
                message=(
                    f"{tech.id}: {scope}, one switch each; every ARP/ND broadcast of a domain"
                    f" floods its {domain_hosts:,} host ports"
                ),
            ),
        )
    return (
        Finding(
            code="FP313",
            severity="warning",
            message=(
                f"{tech.id} is not routable: {scope}; each is one MLAG pair of spines with every"
                f" leaf dual-homed (its {plane.leaf_up_ports} uplinks one LAG hashed on the MAC"
                f" pair, no ECMP and no adaptive routing); each spine keeps"
                f" {MLAG_PEER_LINK_PORTS} peer-link ports (not in the bill of materials); every"
                f" ARP/ND broadcast floods all {domain_hosts:,} host ports of its domain; MAC"
                f" tables hold {domain_hosts + plane.switches:,} of {MAC_TABLE_ENTRIES:,}"
                f" entries; at most {limit:,} host ports fit one domain"
            ),
        ),
    )


def ecmp_findings(tech: TechnologySpec, plane: FatTree) -> tuple[Finding, ...]:
    """Finding when a routed plane's ECMP groups are wider than :data:`ECMP_MAX_NEXT_HOPS`."""
    if tech.scope != "routed_ip":
        return ()
    width = max(plane.leaf_up_ports, plane.spine_up_ports)
    if width <= ECMP_MAX_NEXT_HOPS:
        return ()
    return (
        Finding(
            code="FP314",
            severity="warning",
            message=(
                f"{tech.id}: a switch has {width} routed uplinks, an ECMP group of {width} next"
                f" hops, above the {ECMP_MAX_NEXT_HOPS} assumed supported (vendor maxima are not"
                f" published); check the switch's limit or bundle parallel links into LAGs"
            ),
        ),
    )
