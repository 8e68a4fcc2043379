"""Scale limits a technology puts on a designed plane, reported as findings (never as crashes).

Each limit follows from the technology's scope, a mechanism in the catalog, not from its name:

- ``ib_subnet``: every host port and every switch (its management port 0) takes one unicast
  LID; one subnet has ``max_endpoints_per_domain`` of them (49,151 = 0x0001-0xBFFF at LMC 0).
  Beyond that the plane is split into subnets joined by IB routers (one per extra subnet).
- ``l2_domain`` (RoCEv1): frames are not routable, so a fabric of more than one switch must be
  one L2 domain: STP blocks redundant uplinks, MLAG spans only a pair of switches, EVPN-VXLAN
  stretches L2 but hashes on MAC pairs. A routed Clos as drawn cannot carry it.
- ``routed_ip`` (RoCEv2): uplinks are ECMP next hops; a group wider than the switch supports
  leaves links unused.

>>> subnets_needed(70_656, 49_151), ib_routers_needed(70_656, 49_151)
(2, 1)
"""

from __future__ import annotations

import math

from fabricplan.model.fabric import Finding
from fabricplan.model.hardware import TechnologySpec
from fabricplan.topology.fat_tree import FatTree

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


def l2_domain_findings(tech: TechnologySpec, plane: FatTree) -> tuple[Finding, ...]:
    """Finding for a multi-switch plane of a technology confined to one L2 domain."""
    if tech.scope != "l2_domain" or plane.switches <= 1:
        return ()
    spines_per_group = plane.spines // plane.spine_groups
    if plane.tiers == 2 and spines_per_group <= MLAG_PEER_SWITCHES:
        return (
            Finding(
                code="FP313",
                severity="warning",
                message=(
                    f"{tech.id} is not routable: this plane's {plane.switches} switches must form"
                    f" one L2 domain; with {spines_per_group} spine(s) per group that needs MLAG on"
                    f" the spine pair (no ECMP; STP would block all but one uplink per leaf)"
                ),
            ),
        )
    return (
        Finding(
            code="FP313",
            severity="error",
            message=(
                f"{tech.id} is not routable: a {plane.tiers}-tier Clos of {plane.switches} switches"
                f" per plane cannot be routed at L3 and needs one L2 domain (no ECMP; STP blocks"
                f" redundant uplinks, MLAG spans only {MLAG_PEER_SWITCHES} switches, EVPN-VXLAN"
                f" hashes on MAC pairs only); the counts assume every uplink carries traffic, which"
                f" such a domain does not give; use a routed technology or one switch per plane"
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
