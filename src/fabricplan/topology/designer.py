"""Design one technology's fabric for a scenario: the entry point of :mod:`fabricplan.topology`.

:func:`design_fabric` builds one :class:`~fabricplan.model.fabric.DesignChoice` (a switch, a
topology, tiers, planes): one plane with :func:`~.fat_tree.fat_tree` or
:func:`~.fat_tree.rail_optimized`, replicated over the planes, with cables, the bill of materials
and the technology's scale limits as findings. :func:`design_space` lists every choice the spec
leaves open; the search that prices them and keeps the best is
:func:`fabricplan.evaluate.search_design`.
"""

from __future__ import annotations

import math

from fabricplan.errors import DesignError
from fabricplan.model.fabric import (
    BomLine,
    CableRun,
    DesignChoice,
    FabricDesign,
    Finding,
    LinkGroup,
    LinkGroupName,
    TierDesign,
)
from fabricplan.model.hardware import NicSpec, PortMode, SwitchSpec, TechnologySpec
from fabricplan.model.scenario import TechnologyName, TopologyName, ValidScenario
from fabricplan.topology.cable import (
    Lanes,
    cable_chooser,
    host_module_for,
    port_lanes,
    switch_module,
)
from fabricplan.topology.fat_tree import FatTree, fat_tree, rail_optimized
from fabricplan.topology.layout import FixedLengths, layout_runs
from fabricplan.topology.scale_limit import (
    IB_ROUTER_PORTS,
    addresses_per_plane,
    domain_findings,
    ecmp_findings,
    ib_routers_for_bandwidth,
    l2_domain_findings,
    subnets_needed,
)
from fabricplan.topology.scheduled_fabric import scheduled_fabric
from fabricplan.units import gbps_to_tbps

MANAGEMENT_PORTS_PER_SUBNET = 4
"""Fabric ports of the subnet manager per IB subnet with ``management_ports: auto``. Basis: the
DGX H100 SuperPOD RA counts compute+UFM cables = 8 x nodes + 4 in every row (1-4 SU; reference
catalog B.2). Technologies without an in-band subnet manager get 0."""

MANAGEMENT_PORTS_PER_APPLIANCE = 1
"""Fabric ports per subnet-manager appliance. Inference: the 4-SU DGX H100 SuperPOD lists 4 UFM
appliances and has 4 compute+UFM cables beyond 8 per node (reference catalog B.2)."""

UNUSED_PORTS_WARNING_FRACTION = 0.5
"""Share of switch ports left unused above which the unused-ports finding is a warning (a
reporting threshold of ours, not a hardware figure)."""

IB_ROUTER_ITEM = "ib-router"
UFM_APPLIANCE_ITEM = "ufm-appliance"
NO_CABLE_ID = "none"
"""``LinkGroup.cable_id`` when no catalog cable reaches (an FP316 finding says so)."""

_ROLE: dict[LinkGroupName, str] = {
    "node_leaf": "node-leaf links",
    "management": "management links",
    "leaf_spine": "leaf-spine links",
    "spine_core": "spine-core links",
}


def port_mode_for_nic(switch: SwitchSpec, nic_speed_gbps: float) -> PortMode:
    """The switch port mode at the NIC speed, else the slowest faster one.

    Raises
    ------
    DesignError
        FP304 when every port mode is slower than the NIC.

    Examples
    --------
    >>> from fabricplan.model.hardware import Figure
    >>> figure = Figure(value=1, basis="estimate")
    >>> sw = SwitchSpec(id="sw", name="sw", source="test", date="2024", family="ethernet",
    ...     port_modes=(PortMode(ports=64, speed_gbps=800), PortMode(ports=256, speed_gbps=200)),
    ...     capacity_tbps=figure, latency_ns=figure, power_w=figure)
    >>> port_mode_for_nic(sw, 200).ports, port_mode_for_nic(sw, 100).ports
    (256, 256)
    """
    exact = switch.port_mode_for(nic_speed_gbps)
    if exact is not None:
        return exact
    faster = [mode for mode in switch.port_modes if mode.speed_gbps > nic_speed_gbps]
    if not faster:
        raise DesignError(
            "FP304",
            "cluster.nic_speed_gbps",
            f"switch {switch.id} has no port mode at or above the NIC speed",
            nic_speed_gbps,
            "choose a faster switch or lower cluster.nic_speed_gbps",
        )
    return min(faster, key=lambda mode: (mode.speed_gbps, -mode.ports))


def management_ports_per_plane(setting: int | str, tech: TechnologySpec) -> int:
    """Management ports per plane: the spec's number, or for ``auto`` the RA's subnet manager.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> [management_ports_per_plane("auto", t) for t in valid.technologies.values()]
    [4, 0]
    """
    if isinstance(setting, int):
        return setting
    return MANAGEMENT_PORTS_PER_SUBNET if tech.scope == "ib_subnet" else 0


def _embedded_sm_finding(
    valid: ValidScenario, technology: TechnologyName, switch: SwitchSpec, plane: FatTree
) -> Finding | None:
    """FP862 when the managed switches' embedded subnet manager can run the subnet of ``plane``
    (built without management ports), else ``None`` (UFM appliances as the RA has them).

    It can when the subnet's nodes (host ports, one HCA each, plus its switches) stay within the
    switch's ``embedded_sm_max_nodes`` and the fabric does not rely on what that SM lacks
    (adaptive routing and SHARP, MLNX-OS UM "Subnet Manager"): a single switch has one path
    between any two hosts, so adaptive routing has nothing to choose there.
    """
    limit = switch.embedded_sm_max_nodes
    if limit is None:
        return None
    switches = sum(tier.switches for tier in plane.tier_designs())
    nodes = plane.host_ports + switches
    if nodes > limit.value:
        return None
    routing = valid.spec.fabric.routing.get(technology) or valid.technologies[technology].routing
    needs = [
        name
        for name, used in (
            ("adaptive routing", routing == "adaptive" and plane.tiers > 1),
            ("SHARP", valid.spec.fabric.sharp_for(technology) == "on"),
        )
        if used
    ]
    if needs:
        return None
    where = (
        f"master and standby on two of the {switches} {switch.id} switches of each subnet"
        if switches >= 2
        else f"on the one {switch.id} switch of each subnet: a single point of failure for the"
        " SM (the programmed routes stay, but no link change is handled until it returns; run"
        " a standby OpenSM on a host to remove it)"
    )
    return Finding(
        code="FP862",
        severity="info",
        message=(
            f"the subnet manager runs embedded on the managed {switch.id}"
            f" ({nodes:,} nodes per subnet, within the {limit.value:,.0f} its embedded SM"
            f" manages), {where}; no UFM appliance is bought. Set fabric.management_ports:"
            f" {MANAGEMENT_PORTS_PER_SUBNET} to buy UFM appliances as the DGX SuperPOD RA does"
        ),
    )


DEFAULT_TOPOLOGY: TopologyName = "rail_optimized"
"""The topology :func:`default_choice` builds when the spec says ``auto`` (the DGX SuperPOD
RAs' choice); the search tries the others."""


def default_choice(valid: ValidScenario, technology: TechnologyName) -> DesignChoice:
    """The design the spec names, with ``auto`` read as the resolver's switch, a rail-optimized
    topology, the fewest tiers and one plane.

    >>> from fabricplan.spec import parse_spec
    >>> default_choice(parse_spec({"cluster": {"gpus": 256}}), "infiniband").label
    'qm9700 rail_optimized, fewest tiers, 1 plane(s)'
    """
    fabric = valid.spec.fabric
    return DesignChoice(
        switch=valid.switches[technology],
        topology=DEFAULT_TOPOLOGY if fabric.topology == "auto" else fabric.topology,
        tiers=None if fabric.tiers == "auto" else fabric.tiers,
        planes=1 if fabric.planes == "auto" else fabric.planes,
    )


TOPOLOGIES: tuple[TopologyName, ...] = ("rail_optimized", "fat_tree")


def design_space(valid: ValidScenario, technology: TechnologyName) -> tuple[DesignChoice, ...]:
    """Every choice the spec leaves open for ``technology``, the default first.

    Switches: ``valid.switch_candidates`` (the pinned one alone); topology: both unless pinned;
    tiers: the fewest that fit and three unless pinned; planes: the divisors of
    ``cluster.nics_per_node`` unless pinned.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["infiniband"],
    ...     "topology": "fat_tree", "tiers": 2, "planes": 1}})
    >>> [c.label for c in design_space(valid, "infiniband")]
    ['qm9700 fat_tree, 2 tiers, 1 plane(s)']
    """
    fabric = valid.spec.fabric
    nics = valid.spec.cluster.nics_per_node
    switches = valid.switch_candidates.get(technology) or (valid.switches[technology],)
    topologies = TOPOLOGIES if fabric.topology == "auto" else (fabric.topology,)
    tiers_options: tuple[int | None, ...] = (None, 3) if fabric.tiers == "auto" else (fabric.tiers,)
    if fabric.planes == "auto":
        planes_options = tuple(p for p in range(1, nics + 1) if nics % p == 0)
    else:
        planes_options = (fabric.planes,)
    default = default_choice(valid, technology)
    choices = [default]
    for switch in switches:
        for topology in topologies:
            for planes in planes_options:
                for tiers in tiers_options:
                    choice = DesignChoice(
                        switch=switch, topology=topology, tiers=tiers, planes=planes
                    )
                    if choice != default:
                        choices.append(choice)
    return tuple(choices)


def _plane(
    valid: ValidScenario,
    choice: DesignChoice,
    radix: int,
    rails: int,
    management: int,
    oversubscription: float,
) -> FatTree:
    nodes = valid.spec.cluster.nodes
    if choice.topology == "rail_optimized":
        return rail_optimized(nodes, rails, radix, oversubscription, choice.tiers, management)
    return fat_tree(nodes * rails, radix, oversubscription, choice.tiers, management)


def _fixed_lengths(valid: ValidScenario) -> FixedLengths | None:
    """``fabric.cable_reach`` as one length per group, when the spec sets it."""
    fabric = valid.spec.fabric
    if "cable_reach" not in fabric.model_fields_set:
        return None
    reach = fabric.cable_reach
    return (
        ("node_leaf", reach.node_leaf_m),
        ("management", reach.node_leaf_m),
        ("leaf_spine", reach.leaf_spine_m),
        ("spine_core", reach.spine_core_m),
    )


def _link_groups(
    valid: ValidScenario,
    technology: TechnologyName,
    choice: DesignChoice,
    plane: FatTree,
    mode: PortMode,
    management: int,
) -> tuple[tuple[LinkGroup, ...], tuple[CableRun, ...], list[Finding]]:
    """Link groups (count, longest run and its cable) and the runs by orderable length; each
    run's cable has parts of the switch's and the NIC's electrical lane rates at its ends."""
    cluster = valid.spec.cluster
    nic = valid.nics[technology]
    nic_speed = cluster.nic_speed_gbps
    planes = choice.planes
    runs = layout_runs(
        valid.spec.layout,
        choice.topology,
        plane,
        planes,
        cluster.nodes,
        cluster.nics_per_node,
        cluster.gpus_per_node,
        management * planes,
        _fixed_lengths(valid),
        valid.node.nvlink_domain_gpus,
    )
    per_cage = choice.switch.links_per_cage(mode)
    groups: list[LinkGroup] = []
    cable_runs: list[CableRun] = []
    findings: list[Finding] = []
    names: tuple[LinkGroupName, ...] = ("node_leaf", "management", "leaf_spine", "spine_core")
    for name in names:
        if not runs[name]:
            continue
        host_end = name in ("node_leaf", "management")
        speed = nic_speed if host_end else mode.speed_gbps
        longest_id = NO_CABLE_ID
        switch_lane = port_lanes(choice.switch.lane_gbps, speed)
        host_lane = port_lanes(nic.lane_gbps, speed, nic.slower_lanes_gbps) if host_end else None
        choose = cable_chooser(
            valid.cables, valid.prices, speed, host_end, per_cage, switch_lane, host_lane
        )
        for length_m, count in runs[name]:
            cable = choose(length_m)
            if cable is None and cable_chooser(
                valid.cables, valid.prices, speed, host_end, per_cage
            )(length_m):
                findings.append(
                    Finding(
                        code="FP1234",
                        severity="error",
                        message=_lane_mismatch(
                            name, speed, length_m, count, choice.switch, switch_lane, nic, host_lane
                        ),
                    )
                )
            elif cable is None:
                findings.append(
                    Finding(
                        code="FP316",
                        severity="error",
                        message=(
                            f"{_ROLE[name]}: no catalog cable carries {speed:g}G over"
                            f" {length_m:g} m; the {count} links are unpriced; add such a cable"
                            " to the catalog, shorten fabric.cable_reach or change layout"
                        ),
                    )
                )
            elif cable.speed_gbps > speed:
                findings.append(
                    Finding(
                        code="FP318",
                        severity="info",
                        message=(
                            f"{_ROLE[name]}: no {speed:g}G cable reaches {length_m:g} m; using"
                            f" {cable.id} ({cable.speed_gbps:g}G class) at {speed:g}G"
                        ),
                    )
                )
            longest_id = cable.id if cable is not None else NO_CABLE_ID
            cable_runs.append(
                CableRun(group=name, count=count, length_m=length_m, cable_id=longest_id)
            )
        groups.append(
            LinkGroup(
                name=name,
                count=sum(n for _, n in runs[name]),
                speed_gbps=speed,
                reach_m=runs[name][-1][0],
                cable_id=longest_id,
            )
        )
    return tuple(groups), tuple(cable_runs), findings


def _lane_mismatch(
    name: LinkGroupName,
    speed: float,
    length_m: float,
    count: int,
    switch: SwitchSpec,
    switch_lane: Lanes,
    nic: NicSpec,
    host_lane: Lanes,
) -> str:
    """FP1234: classes reach, but none has parts of the ends' lane rates."""

    def shown(lanes: frozenset[float]) -> str:
        return "/".join(f"{lane:g}G" for lane in sorted(lanes, reverse=True))

    ends = f"{switch.id} lanes {shown(switch_lane)}" if switch_lane is not None else switch.id
    if host_lane is not None:
        ends += f", {nic.id} lanes {shown(host_lane)}"
    return (
        f"{_ROLE[name]}: no catalog cable of {speed:g}G over {length_m:g} m matches the"
        f" electrical lane rates of its ends ({ends}); the {count} links are unpriced; add a"
        " class (or a gearbox module) of those lane rates to the catalog, or choose another"
        " switch or NIC"
    )


def _bisection_tbps(
    plane: FatTree, planes: int, nic_speed_gbps: float, port_speed_gbps: float
) -> float:
    """Half the traffic the node ports of a plane can push across a cut, summed over planes."""
    uplink_gbps = plane.leaf_up_ports * port_speed_gbps if plane.tiers > 1 else float("inf")
    leaf_gbps = sum(
        count * min(ports * nic_speed_gbps, uplink_gbps) for count, ports in plane.leaf_fill
    )
    return gbps_to_tbps(planes * leaf_gbps / 2)


def _port_findings(tiers: tuple[TierDesign, ...], headroom_gpus: int) -> list[Finding]:
    total = sum(tier.switches * tier.radix for tier in tiers)
    free = sum(tier.ports_free for tier in tiers)
    if free == 0:
        return []
    share = free / total
    detail = ", ".join(f"{tier.name} {tier.ports_free}" for tier in tiers if tier.ports_free)
    return [
        Finding(
            code="FP315",
            severity="warning" if share > UNUSED_PORTS_WARNING_FRACTION else "info",
            message=(
                f"{free} of {total} switch ports are unused ({share:.1%}: {detail}); the design"
                f" takes {headroom_gpus} more GPUs before it needs another tier or switch"
            ),
        )
    ]


def _design_findings(
    valid: ValidScenario,
    tech: TechnologySpec,
    choice: DesignChoice,
    mode: PortMode,
    plane: FatTree,
    management: int,
    tiers: tuple[TierDesign, ...],
    headroom_gpus: int,
    oversubscription: float,
) -> list[Finding]:
    """Findings about the design as built (port mode, grouping, management, scale, ports)."""
    nic_speed = valid.spec.cluster.nic_speed_gbps
    switch = choice.switch
    notes: list[Finding] = []
    if mode.speed_gbps != nic_speed:
        notes.append(
            Finding(
                code="FP310",
                severity="info",
                message=(
                    f"{switch.id} has no {nic_speed:g}G port mode; the design uses"
                    f" its {mode.ports} x {mode.speed_gbps:g}G ports, host links run at"
                    f" {nic_speed:g}G and switch-to-switch links at"
                    f" {mode.speed_gbps:g}G"
                ),
            )
        )
    if plane.spine_groups > 1:
        notes.append(
            Finding(
                code="FP311",
                severity="info",
                message=(
                    f"each of the {plane.spine_groups} rails has its own spines (one spine set"
                    f" cannot reach all {plane.leaves} leaves of a plane at 2 tiers); traffic"
                    f" between rails must first cross NVLink to the destination's rail (NCCL"
                    f" PXN); set tiers: 3 for a fabric where every NIC reaches every NIC (as the"
                    f" DGX B200 RA does at 16 SU)"
                ),
            )
        )
    if plane.tiers == 1 and choice.planes > 1:
        notes.append(
            Finding(
                code="FP860",
                severity="info",
                message=(
                    f"each of the {choice.planes} planes is one {switch.id}: no spine tier, one"
                    " switch hop inside a plane; traffic between planes must first cross NVLink"
                    " to the destination's plane (NCCL PXN), and nothing in the fabric joins the"
                    " planes; set fabric.planes: 1 for a fabric where every NIC reaches every NIC"
                ),
            )
        )
    if plane.tiers == 1 and oversubscription > 1:
        notes.append(
            Finding(
                code="FP861",
                severity="info",
                message=(
                    f"the asked {oversubscription:g}:1 is not built: one switch per plane has no"
                    " uplinks to oversubscribe, so the fabric is non-blocking"
                ),
            )
        )
    if management and plane.tiers > 1:
        rails = valid.spec.cluster.nics_per_node // choice.planes
        bare = _plane(valid, choice, mode.ports, rails, 0, oversubscription)
        extra = plane.switches - bare.switches
        if extra > 0:
            notes.append(
                Finding(
                    code="FP317",
                    severity="warning",
                    message=(
                        f"the {management} management port(s) per plane add {extra} switch(es) per"
                        f" plane because every leaf host port is taken; leave a node slot free (the"
                        f" DGX H100 RA runs 31 nodes per 32-node SU) or set fabric.management_ports"
                    ),
                )
            )
    notes.extend(domain_findings(tech, plane, choice.planes))
    notes.extend(l2_domain_findings(tech, plane, choice.planes, oversubscription))
    if not tech.fabric_element_asics:
        notes.extend(ecmp_findings(tech, plane))
    if tech.packet_trimming and not switch.packet_trimming and tech.link_flow_control == "none":
        notes.append(
            Finding(
                code="FP630",
                severity="warning",
                message=(
                    f"{tech.id} relies on packet trimming, but {switch.id} does not trim (no"
                    " source says it does): a packet that overflows a queue is dropped and"
                    " recovered by the sender's timeout instead of a NACK on its trimmed header;"
                    " a switch that trims (e.g. sn5600) keeps the fast retransmit"
                ),
            )
        )
    notes.extend(_port_findings(tiers, headroom_gpus))
    return notes


def _scheduled_plane(
    valid: ValidScenario,
    technology: TechnologyName,
    tech: TechnologySpec,
    choice: DesignChoice,
    mode: PortMode,
    rails: int,
) -> tuple[FatTree, SwitchSpec, list[Finding]]:
    """One plane of a scheduled fabric (:func:`~.scheduled_fabric.scheduled_fabric`), its
    fabric element and the findings about cells and stages."""
    leaf = choice.switch
    nodes = valid.spec.cluster.nodes
    if choice.tiers == 3:
        raise DesignError(
            "FP626",
            "fabric.tiers",
            f"{technology} is built as two stages (leaves and one fabric-element stage); a third"
            " stage is not modelled",
            3,
            "set tiers: auto or 2, or add fabric.planes",
        )
    element = valid.fabric_elements.get(technology)
    fabric_mode = leaf.fabric_port_mode_for(mode.speed_gbps)
    element_mode = (
        element.port_mode_for(fabric_mode.speed_gbps)
        if element is not None and fabric_mode is not None
        else None
    )
    if element is None or fabric_mode is None or element_mode is None:
        raise DesignError(
            "FP624",
            f"fabric.switch.{technology}",
            f"{leaf.id} has no fabric ports at {mode.speed_gbps:g}G that a catalog fabric element"
            " takes",
            leaf.id,
            "choose a scheduled-fabric leaf and fabric element with matching fabric ports",
        )
    plane = scheduled_fabric(
        nodes, rails, mode.ports, fabric_mode.ports, element_mode.ports, choice.topology
    )
    notes: list[Finding] = []
    if plane.tiers > 1:
        cell = tech.cell_bytes.value if tech.cell_bytes else 0.0
        header = tech.cell_header_bytes.value if tech.cell_header_bytes else 0.0
        efficiency = cell / (cell + header) if cell else 1.0
        speedup = fabric_mode.ports / mode.ports
        spare = speedup * efficiency
        notes.append(
            Finding(
                code="FP628",
                severity="info" if spare >= 1 else "warning",
                message=(
                    f"{technology}: each of the {plane.leaves} leaves per plane sprays cells over"
                    f" its {fabric_mode.ports} fabric links, {fabric_mode.ports // plane.spines}"
                    f" to each of the {plane.spines} {element.id} fabric elements; cells of"
                    f" {cell:g} B carry {header:g} B of header ({efficiency:.1%} payload), and the"
                    f" {fabric_mode.ports}:{mode.ports} fabric speed-up gives the host ports"
                    f" {spare:.2f}x their bandwidth across the fabric"
                    + ("" if spare >= 1 else ", so the fabric, not the hosts, is the bottleneck")
                ),
            )
        )
    return plane, element, notes


def _cabling_bom(
    valid: ValidScenario,
    runs: tuple[CableRun, ...],
    per_cage: int,
    switch: SwitchSpec,
    nic: NicSpec,
    mode: PortMode,
) -> list[BomLine]:
    """Cables by length; for composed optics, modules at both ends and fibre cords by length.

    Each end takes the module of its device's lane rate: the switch module of ``switch``'s lanes
    and, at a NIC, the host module of ``nic``'s (or the class's gearbox variant).

    A switch cage carrying ``per_cage`` links takes one module carrying ``per_cage`` links
    (twin-port OSFP at 2, a 1.6T OSFP at 4), so a group's switch ends need ``per_cage`` times
    fewer modules than links (rounded up per group); a NIC takes one module per link; every
    optical link has its class's cords (one, split at the switch end into the cage's links; two for
    an 800G 2 x DR4 port, one per MPO-12). Copper and
    AOC links from a cage of several links are ordered as 1:``per_cage`` splitter cables.
    """
    by_id = {cable.id: cable for cable in valid.cables}
    cables: dict[tuple[str, float], tuple[int, set[str]]] = {}
    module_links: dict[tuple[str, LinkGroupName], tuple[int, int, int]] = {}
    fibres: dict[tuple[str, float], tuple[int, set[str]]] = {}

    def add(
        book: dict[tuple[str, float], tuple[int, set[str]]],
        key: tuple[str, float],
        count: int,
        role: str,
    ) -> None:
        have, roles = book.get(key, (0, set()))
        book[key] = (have + count, roles | {role})

    for run in runs:
        cable = by_id.get(run.cable_id)
        if cable is None:
            continue
        role = _ROLE[run.group]
        if not cable.composed:
            add(cables, (cable.id, run.length_m), run.count, role)
            continue
        host_end = run.group in ("node_leaf", "management")
        speed = valid.spec.cluster.nic_speed_gbps if host_end else mode.speed_gbps
        module = switch_module(cable, per_cage, port_lanes(switch.lane_gbps, speed))
        if module is not None:
            key = (module.item, run.group)
            links, per, ends = module_links.get(key, (0, module.links, 0))
            module_links[key] = (links + run.count, per, 1 if host_end else 2)
        host_lanes = port_lanes(nic.lane_gbps, speed, nic.slower_lanes_gbps)
        host = host_module_for(cable, host_lanes, module) if host_end else None
        if host is not None:
            key = (host.item, run.group)
            links, _, _ = module_links.get(key, (0, 1, 1))
            module_links[key] = (links + run.count, 1, 1)
        if cable.fibre:
            add(fibres, (cable.fibre, run.length_m), run.count * cable.cords_per_link, role)

    def cable_role(item: str, n: int, roles: set[str], length: float) -> str:
        text = f"{', '.join(sorted(roles))}, {length:g} m"
        kind = by_id[item].cable_kind
        if per_cage >= 2 and roles & {_ROLE["node_leaf"], _ROLE["management"]}:
            # A cage of several links takes one splitter (LinkX MCP7Y00 / MCA7J70 copper; an
            # AOC splitter likewise): one cable, per_cage host links; counted and priced per link.
            what = "splitter AOCs" if kind == "aoc" else "splitter cables"
            text += f"; ordered as about {math.ceil(n / per_cage)} 1:{per_cage} {what}"
        return text

    lines = [
        BomLine(
            item=item,
            kind="cable",
            quantity=n,
            role=cable_role(item, n, roles, length),
            length_m=length,
        )
        for (item, length), (n, roles) in sorted(cables.items())
    ]
    modules: dict[str, tuple[int, list[str]]] = {}
    for (item, group), (links, per, ends) in module_links.items():
        count = ends * math.ceil(links / per)
        have, roles = modules.get(item, (0, []))
        modules[item] = (have + count, [*roles, _ROLE[group]])
    lines += [
        BomLine(
            item=item,
            kind="transceiver",
            quantity=n,
            role=f"transceivers for {', '.join(sorted(set(roles)))}",
        )
        for item, (n, roles) in sorted(modules.items())
    ]
    lines += [
        BomLine(
            item=item,
            kind="fibre",
            quantity=n,
            role=f"fibre cords for {', '.join(sorted(roles))}, {length:g} m",
            length_m=length,
        )
        for (item, length), (n, roles) in sorted(fibres.items())
    ]
    return lines


def _bom(
    valid: ValidScenario,
    technology: TechnologyName,
    switch: SwitchSpec,
    mode: PortMode,
    tiers: tuple[TierDesign, ...],
    runs: tuple[CableRun, ...],
    routers: int,
    appliances: int,
    element_id: str | None = None,
) -> tuple[BomLine, ...]:
    """Switches per tier (a scheduled fabric's spine tier is its fabric elements,
    ``element_id``), NICs, cabling, IB routers and subnet-manager appliances."""
    switch_id = switch.id
    per_cage = switch.links_per_cage(mode)

    def switch_line(tier: TierDesign) -> BomLine:
        if element_id is not None and tier.name == "spine":
            return BomLine(
                item=element_id,
                kind="switch",
                quantity=tier.switches,
                role="fabric elements (cell switches of the scheduled fabric)",
            )
        role = f"{tier.name} switches" if element_id is None else "scheduled-fabric leaves"
        return BomLine(item=switch_id, kind="switch", quantity=tier.switches, role=role)

    lines = [switch_line(tier) for tier in tiers]
    nic = valid.nics[technology]
    cluster = valid.spec.cluster
    cards_per_node = math.ceil(cluster.nics_per_node / nic.ports)
    lines.append(
        BomLine(
            item=nic.id,
            kind="nic",
            quantity=cluster.nodes * cards_per_node,
            role="host NICs"
            if nic.ports == 1
            else f"host NICs ({nic.ports} ports a card, {cards_per_node} cards a node)",
        )
    )
    lines.extend(_cabling_bom(valid, runs, per_cage, switch, nic, mode))
    if routers:
        lines.append(
            BomLine(
                item=IB_ROUTER_ITEM,
                kind="router",
                quantity=routers,
                role="IB routers between subnets",
            )
        )
    if appliances:
        lines.append(
            BomLine(
                item=UFM_APPLIANCE_ITEM,
                kind="appliance",
                quantity=appliances,
                role="subnet manager appliances",
            )
        )
    return tuple(lines)


def bom_capex_usd(valid: ValidScenario, design: FabricDesign) -> float:
    """Quantity x unit price over the bill of materials (an unpriced item counts 0), the same
    sum as :func:`fabricplan.analytic.cost.fabric_cost`'s capex, without its notes.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 32}})
    >>> bom_capex_usd(valid, design_fabric(valid, "roce_v2")) > 0
    True
    """
    return sum(
        line.quantity * valid.prices[line.item].price_usd
        for line in design.bom
        if line.item in valid.prices
    )


def design_fabric(
    valid: ValidScenario, technology: TechnologyName, choice: DesignChoice | None = None
) -> FabricDesign:
    """Design ``technology``'s fabric for the scenario.

    Parameters
    ----------
    valid
        The resolved scenario.
    technology
        One of ``valid.spec.fabric.technologies``.
    choice
        Switch, topology, tiers and planes to build; default :func:`default_choice` (what the
        spec pins, ``auto`` read as the RA defaults). :func:`fabricplan.evaluate.search_design`
        tries every choice of :func:`design_space` and keeps the best.

    Returns
    -------
    FabricDesign
        Counts summed over planes, link groups with their cables, the bill of materials, the
        bisection bandwidth, growth headroom and findings (scale limits, unused ports, cables).
        At ``fabric.oversubscription`` above 1 the leaves are built to that ratio to the port;
        if that costs more than the non-blocking design of the same switch, the non-blocking one
        is built and an FP321 finding says so.

    Raises
    ------
    DesignError
        FP301-FP305 when no fabric can be built; FP625 for RoCEv1 beyond one L2 domain; FP624 and
        FP626 for a scheduled fabric whose parts do not match or need a third stage (see
        docs/errors.md).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 1016},
    ...     "fabric": {"technologies": ["infiniband"], "switch": {"infiniband": "qm9700"}}})
    >>> design = design_fabric(valid, "infiniband")   # DGX H100 SuperPOD, 4 SU
    >>> design.switches, design.links["node_leaf"] + design.links["management"]
    ({'leaf': 32, 'spine': 16, 'core': 0}, 1020)
    """
    if technology not in valid.switches or technology not in valid.technologies:
        raise DesignError(
            "FP305",
            "fabric.technologies",
            "technology is not in this scenario",
            technology,
            f"add it to fabric.technologies or design one of {list(valid.switches)}",
        )
    choice = choice or default_choice(valid, technology)
    asked = valid.spec.fabric.oversubscription
    design = _design(valid, technology, choice, asked)
    if asked <= 1:
        return design
    try:
        blocking_free = _design(valid, technology, choice, 1.0)
    except DesignError:
        return design
    asked_usd, free_usd = bom_capex_usd(valid, design), bom_capex_usd(valid, blocking_free)
    if free_usd >= asked_usd:
        return design
    note = Finding(
        code="FP321",
        severity="info",
        message=(
            f"{asked:g}:1 oversubscription costs more than non-blocking with {choice.switch.id}"
            f" at this size (${asked_usd:,.0f} vs ${free_usd:,.0f} capex: the leaf split and"
            " spine divisibility leave more switches or links), so the design is built 1:1"
        ),
    )
    return blocking_free.model_copy(update={"findings": (note, *blocking_free.findings)})


def _design(
    valid: ValidScenario,
    technology: TechnologyName,
    choice: DesignChoice,
    oversubscription: float,
) -> FabricDesign:
    spec = valid.spec
    cluster, fabric = spec.cluster, spec.fabric
    switch = choice.switch
    tech = valid.technologies[technology]
    planes = choice.planes
    if cluster.nics_per_node % planes:
        choices = [p for p in range(1, cluster.nics_per_node + 1) if cluster.nics_per_node % p == 0]
        raise DesignError(
            "FP303",
            "fabric.planes",
            f"must divide cluster.nics_per_node={cluster.nics_per_node} so that every plane has"
            " the same rails",
            planes,
            f"use one of {choices}",
        )
    rails = cluster.nics_per_node // planes
    mode = port_mode_for_nic(switch, cluster.nic_speed_gbps)
    management = management_ports_per_plane(fabric.management_ports, tech)
    management_moved = False
    element: SwitchSpec | None = None
    scheduled_notes: list[Finding] = []
    if tech.fabric_element_asics:
        plane, element, scheduled_notes = _scheduled_plane(
            valid, technology, tech, choice, mode, rails
        )
        management = 0
        if oversubscription > 1:
            scheduled_notes.append(
                Finding(
                    code="FP627",
                    severity="info",
                    message=(
                        f"{technology}: a scheduled-fabric leaf has fixed fabric ports, so the"
                        f" asked {oversubscription:g}:1 is not built; the fabric is non-blocking"
                    ),
                )
            )
        oversubscription = 1.0
    else:
        try:
            plane = _plane(valid, choice, mode.ports, rails, management, oversubscription)
        except DesignError:
            if fabric.management_ports != "auto" or not management:
                raise
            # The subnet manager's ports alone tip the plane over its largest size (65,536
            # NICs on 64-port switches): run the SM elsewhere rather than fail.
            plane = _plane(valid, choice, mode.ports, rails, 0, oversubscription)
            management, management_moved = 0, True
    embedded_sm: Finding | None = None
    if fabric.management_ports == "auto" and management:
        bare = _plane(valid, choice, mode.ports, rails, 0, oversubscription)
        embedded_sm = _embedded_sm_finding(valid, technology, switch, bare)
        if embedded_sm is not None:
            plane, management = bare, 0
    if fabric.management_ports == "auto" and management:
        # The RA keeps a node slot free for the subnet manager; when the cluster fills every
        # slot, an architect runs the SM elsewhere rather than buy another scalable unit.
        bare = _plane(valid, choice, mode.ports, rails, 0, oversubscription)
        if bare.switches < plane.switches:
            plane, management, management_moved = bare, 0, True

    tiers = tuple(
        tier.model_copy(
            update={
                "switches": tier.switches * planes,
                "ports_used": tier.ports_used * planes,
                "ports_free": tier.ports_free * planes,
            }
        )
        for tier in plane.tier_designs()
    )
    groups, runs, findings = _link_groups(valid, technology, choice, plane, mode, management)
    more_nodes = max(0, (plane.max_host_ports - plane.host_ports) // rails)
    headroom_gpus = more_nodes * cluster.gpus_per_node

    notes = scheduled_notes + _design_findings(
        valid, tech, choice, mode, plane, management, tiers, headroom_gpus, oversubscription
    )
    if embedded_sm is not None:
        notes.append(embedded_sm)
    if management_moved:
        notes.append(
            Finding(
                code="FP319",
                severity="info",
                message=(
                    f"every leaf host port is taken, so the {MANAGEMENT_PORTS_PER_SUBNET} subnet"
                    " manager (UFM) links per plane are not reserved: the SM is assumed to run on"
                    " a managed switch or a compute node; set fabric.management_ports:"
                    f" {MANAGEMENT_PORTS_PER_SUBNET} to reserve them as the DGX SuperPOD RA does"
                    " (one node slot per scalable unit)"
                ),
            )
        )

    routers = 0
    limit = tech.max_endpoints_per_domain
    if tech.scope == "ib_subnet" and limit is not None:
        subnets = subnets_needed(addresses_per_plane(tech, plane), int(limit.value))
        per_plane = ib_routers_for_bandwidth(
            plane.host_ports, subnets, mode.speed_gbps, oversubscription
        )
        routers = planes * per_plane
        if per_plane:
            notes.append(
                Finding(
                    code="FP322",
                    severity="warning",
                    message=(
                        f"{per_plane} IB router(s) of {IB_ROUTER_PORTS} x {mode.speed_gbps:g}G"
                        f" per plane carry the traffic between its {subnets} subnets: under"
                        f" uniform traffic {subnets - 1}/{subnets} of the"
                        f" {plane.host_ports:,} host ports' load crosses a subnet boundary at"
                        f" {oversubscription:g}:1 (an estimate; the spine ports the routers take"
                        " are not counted); more planes or a larger radix avoid the routers"
                    ),
                )
            )
    appliances = 0
    if tech.scope == "ib_subnet" and management:
        appliances = math.ceil(management * planes / MANAGEMENT_PORTS_PER_APPLIANCE)

    return FabricDesign(
        technology=technology,
        topology=choice.topology,
        switch_id=switch.id,
        port_speed_gbps=mode.speed_gbps,
        radix=mode.ports,
        tiers=plane.tiers,
        planes=planes,
        spine_groups=plane.spine_groups,
        nodes=cluster.nodes,
        gpus=cluster.gpus,
        endpoints=cluster.endpoints,
        management_ports=management * planes,
        hosts_per_leaf=plane.hosts_per_leaf,
        leaves_per_pod=plane.leaves_per_pod,
        rail_aligned=plane.rail_aligned,
        tier_designs=tiers,
        link_groups=groups,
        bisection_tbps=_bisection_tbps(plane, planes, cluster.nic_speed_gbps, mode.speed_gbps),
        worst_case_switch_hops=plane.worst_case_switch_hops,
        max_endpoints=cluster.endpoints + more_nodes * cluster.nics_per_node,
        headroom_gpus=headroom_gpus,
        findings=(*notes, *findings),
        cable_runs=runs,
        bom=_bom(
            valid,
            technology,
            switch,
            mode,
            tiers,
            runs,
            routers,
            appliances,
            element.id if element is not None else None,
        ),
    )
