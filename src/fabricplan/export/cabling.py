"""Every cable of a designed fabric, with both ends named as the hardware names them.

:func:`cabling_plan` starts from :func:`fabricplan.topology.graph.fabric_graph` (the expansion the
simulators use, so the cut sheet and the simulated fabric are the same fabric), adds the
management links the graph does not model, and names every end:

- devices: ``node-0001`` (compute nodes), ``leaf-001``, ``spine-001``, ``core-001`` (numbered over
  planes in the graph's order), ``ufm-01`` (subnet-manager appliances; ``mgmt-01`` on fabrics
  without an in-band subnet manager);
- switch ports: the front-panel names of the switch model in the chosen OS
  (:func:`fabricplan.catalog.front_panel.port_names`) at the design's port mode. A leaf uses its
  host slots first (slot ``s`` on port ``s``), then its uplinks; a spine its downlinks
  (leaf slot ``l``, parallel link ``p`` on port ``l * parallel + p``), then its uplinks; a core
  its downlinks by pod;
- host ports: ``nic0`` ... in the node's NIC order (NIC ``j`` is plane ``j % P``, rail ``j // P``);
- a scheduled (DDC) fabric: a leaf's host ports, then its fabric ports on its fabric cages
  (:func:`fabricplan.catalog.front_panel.fabric_port_names`), cabled to the fabric elements
  (the spines), which take their own box's names (:attr:`CablingPlan.element_ports`).

The cable and length of each link come from the design's cable runs (``FabricDesign.cable_runs``:
per group, orderable length and cable, the lines the bill of materials counts): each link takes a
run of its own walked length between the racks the layout names
(:mod:`fabricplan.topology.layout`), so per part and length the cut sheet counts what the BOM
counts; with ``fabric.cable_reach`` set (one length a group) or no runs, links take their
group's runs in order.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> valid = parse_spec({"cluster": {"gpus": 1016},
...     "fabric": {"technologies": ["infiniband"], "switch": {"infiniband": "qm9700"}}})
>>> plan = cabling_plan(design_fabric(valid, "infiniband"), valid)
>>> len(plan.cables), plan.cables[0].a_device, plan.cables[0].z_device, plan.cables[0].z_port
(2044, 'node-0001', 'leaf-001', '1/1/1')
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from fabricplan.catalog.front_panel import fabric_port_names, front_panel, port_names
from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign, LinkGroupName
from fabricplan.model.front_panel import SwitchOs
from fabricplan.model.hardware import CableSpec
from fabricplan.model.scenario import ValidScenario
from fabricplan.topology.designer import UFM_APPLIANCE_ITEM
from fabricplan.topology.graph import FabricGraph, fabric_graph
from fabricplan.topology.layout import (
    FloatArray,
    HallPlacement,
    IntArray,
    hall_placement,
    management_leaf_positions,
    orderable_lengths_m,
    rack_name,
)

__all__ = ["CablingPlan", "PlannedCable", "PlannedDevice", "cabling_plan", "device_names"]

DeviceRole = Literal["node", "leaf", "spine", "core", "management"]

HOST_PORT_TEMPLATE = "nic{index}"
"""Host-side port name: the NIC's index in the node (NCCL's NIC order)."""

MANAGEMENT_HOST_MODEL = "management-host"
"""Model of a management port's device on fabrics without an in-band subnet manager."""

UNCABLED_PART = "none"
"""``part`` of links whose group has no catalog cable (the design says so in an FP316 finding)."""


@dataclass(frozen=True, slots=True)
class PlannedDevice:
    """One device of the plan."""

    name: str
    role: DeviceRole
    model: str
    """Catalog id (switch, NIC of a node, or the appliance item)."""
    plane: int
    """Plane of a switch (-1 for nodes, which reach every plane)."""
    pod: int
    """Pod (3 tiers) or spine group a switch or node belongs to."""
    scalable_unit: int
    """Block of nodes sharing leaves (SU of a rail-optimized fabric); -1 for spines and cores."""
    row: str = ""
    """Row of the hall it stands in (from the design's ``layout``)."""
    rack: str = ""


@dataclass(frozen=True, slots=True)
class PlannedCable:
    """One cable: A is the lower end (host or lower tier), Z the upper."""

    a_device: str
    a_port: str
    z_device: str
    z_port: str
    link_group: LinkGroupName
    speed_gbps: float
    part: str
    reach_class: str
    length_m: float
    plane: int
    rail: int
    """Rail of a node-leaf link (-1 for other links)."""


@dataclass(frozen=True, slots=True)
class CablingPlan:
    """Every device and cable of a designed fabric (see the module docstring)."""

    design: FabricDesign
    switch_os: SwitchOs | None
    devices: tuple[PlannedDevice, ...]
    cables: tuple[PlannedCable, ...]
    switch_ports: tuple[str, ...]
    """Front-panel port names of every switch, in port order (a scheduled fabric's leaves:
    host ports, then fabric ports)."""
    node_names: tuple[str, ...]
    node_block: tuple[int, ...]
    """Block (scalable unit) of every node."""
    node_pod: tuple[int, ...]
    block_leaves: tuple[tuple[str, ...], ...]
    """Leaves of each block, over every plane."""
    pods: int
    """Pods per plane (1 below 3 tiers)."""
    element_ports: tuple[str, ...] = ()
    """A scheduled fabric's fabric elements (its spines): their port names, in port order;
    empty on other fabrics (every switch is ``switch_ports``)."""

    @property
    def scheduled(self) -> bool:
        """True for a scheduled (DDC) fabric: its leaf-spine links carry cells, not packets."""
        return bool(self.element_ports)

    def ports_of(self, device: PlannedDevice) -> tuple[str, ...]:
        """Port names of a switch of the plan, in port order."""
        return (
            self.element_ports if self.scheduled and device.role == "spine" else self.switch_ports
        )

    def devices_of(self, role: DeviceRole) -> list[PlannedDevice]:
        return [device for device in self.devices if device.role == role]


def _width(count: int, least: int) -> int:
    return max(least, len(str(count)))


def device_names(prefix: str, count: int, least: int = 3) -> list[str]:
    """``prefix-001`` ... numbered from 1, zero-padded to the widest number.

    Parameters
    ----------
    prefix
        The device kind (``leaf``, ``spine``, ``node``, ...).
    count
        How many devices.
    least
        Fewest digits (more when ``count`` needs them).

    Returns
    -------
    list of str
        One name per device, in order.

    Examples
    --------
    >>> device_names("leaf", 2), device_names("node", 3, least=4)[-1]
    (['leaf-001', 'leaf-002'], 'node-0003')
    """
    width = _width(count, least)
    return [f"{prefix}-{i + 1:0{width}d}" for i in range(count)]


@functools.lru_cache(maxsize=64)
def _reach_class(cable: CableSpec | None) -> str:
    if cable is None:
        return "unavailable"
    return f"{cable.cable_kind}-{cable.max_reach_m:g}m"


@dataclass(frozen=True, slots=True)
class _Entry:
    """Links of one group that share a cable class and a length (a design's cable run)."""

    count: int
    speed_gbps: float
    reach_m: float
    part: str
    cable: CableSpec | None


class _GroupCables:
    """Hands out the cable of each link of a group, taking the design's runs in order.

    A design with ``cable_runs`` (the physical layout's lengths) gives each link its run's cable
    and orderable length; an older design only its link group's cable and reach.
    """

    def __init__(self, design: FabricDesign, cables: Sequence[CableSpec]) -> None:
        by_id = {cable.id: cable for cable in cables}
        speed = {group.name: group.speed_gbps for group in design.link_groups}
        self._entries: dict[str, list[_Entry]] = {}
        if design.cable_runs:
            for run in design.cable_runs:
                self._entries.setdefault(run.group, []).append(
                    _Entry(
                        run.count,
                        speed.get(run.group, design.port_speed_gbps),
                        run.length_m,
                        run.cable_id,
                        by_id.get(run.cable_id),
                    )
                )
        else:
            for group in design.link_groups:
                cable = by_id.get(group.cable_id)
                part = cable.id if cable is not None else UNCABLED_PART
                self._entries.setdefault(group.name, []).append(
                    _Entry(group.count, group.speed_gbps, group.reach_m, part, cable)
                )
        self._used: dict[str, int] = {}

    def entries(self, name: LinkGroupName) -> list[_Entry]:
        """The design's runs of group ``name``."""
        return list(self._entries.get(name, []))

    def take(self, name: LinkGroupName, count: int) -> list[tuple[_Entry, CableSpec | None]]:
        """The (run, cable) of the next ``count`` links of group ``name``."""
        out: list[tuple[_Entry, CableSpec | None]] = []
        used = self._used.get(name, 0)
        for entry in self._entries.get(name, []):
            if used >= entry.count:
                used -= entry.count
                continue
            n = min(entry.count - used, count - len(out))
            out.extend([(entry, entry.cable)] * n)
            used = 0
            if len(out) == count:
                break
        self._used[name] = self._used.get(name, 0) + len(out)
        if len(out) != count:
            raise ModelError(
                "FP1240",
                f"link group {name}",
                "the design has fewer links than its expansion",
                (sum(e.count for e in self._entries.get(name, [])), count),
                "report the spec (the designer and the graph disagree)",
            )
        return out


def _orderable(lengths_m: FloatArray) -> list[float]:
    """Orderable lengths of runs, as floats (the keys of the design's runs)."""
    return [float(m) for m in orderable_lengths_m(lengths_m)]


@dataclass(slots=True)
class _Stock:
    """One run of the design and how many of its links are still to hand out."""

    entry: _Entry
    left: int


class _RunsByLength:
    """Hands out the cable of links whose orderable length is known (from the layout's
    positions): each link takes a design run of its own length, so the cut sheet counts what the
    BOM counts, length by length."""

    def __init__(self, cables: _GroupCables, name: LinkGroupName) -> None:
        self._name = name
        self._stock: dict[float, list[_Stock]] = {}
        for entry in cables.entries(name):
            self._stock.setdefault(entry.reach_m, []).append(_Stock(entry, entry.count))

    def take(self, length_m: float) -> tuple[_Entry, CableSpec | None]:
        for stock in self._stock.get(length_m, []):
            if stock.left > 0:
                stock.left -= 1
                return stock.entry, stock.entry.cable
        raise ModelError(
            "FP1240",
            f"link group {self._name}",
            "a link's length from the layout has no run of that length in the design",
            length_m,
            "report the spec (the designer and the export disagree on the layout)",
        )


def _by_length(
    cables: _GroupCables, name: LinkGroupName, lengths_m: FloatArray
) -> list[tuple[_Entry, CableSpec | None]]:
    """The (run, cable) of every link of group ``name``, each by its own walked length."""
    runs = _RunsByLength(cables, name)
    return [runs.take(m) for m in _orderable(lengths_m)]


def _management_hosts(
    design: FabricDesign, graph: FabricGraph, per_plane: int
) -> list[tuple[int, int, int]]:
    """(plane, leaf, slot) of every management port (the graph does not place them)."""
    placed: list[tuple[int, int, int]] = []
    rails = graph.nics_per_node // graph.planes
    hpl = design.hosts_per_leaf
    groups = design.spine_groups
    for plane in range(graph.planes):
        for k in range(per_plane):
            if design.topology == "rail_optimized" and design.tiers > 1:
                rails_in_group = rails // groups
                slot_node, rail = graph.nodes + k // rails, k % rails
                local = (slot_node // hpl) * rails_in_group + rail % rails_in_group
                domain = plane * groups + rail // rails_in_group
                slot = slot_node % hpl
            else:
                local, slot = divmod(graph.nodes * rails + k, hpl)
                domain = plane
            placed.append((plane, domain * graph.leaves_per_domain + local, slot))
    return placed


@dataclass(frozen=True)
class _Positions:
    """Hall positions of every device of the plan, and whether link lengths follow them."""

    placement: HallPlacement
    leaf: IntArray
    """Position of every leaf (over planes, in the graph's order)."""
    pod_middle_leaf: IntArray
    """Per leaf: the middle leaf of its pod, where a three-tier pod's spines stand."""
    lengths_follow: bool
    """False when ``fabric.cable_reach`` fixes every run of a group (positions only label)."""


def _positions(design: FabricDesign, valid: ValidScenario, graph: FabricGraph) -> _Positions:
    placement = hall_placement(
        valid.spec.layout,
        design.topology,
        graph.leaves // graph.planes,
        design.hosts_per_leaf,
        graph.planes,
        graph.nodes,
        graph.nics_per_node,
        valid.spec.cluster.gpus_per_node,
        valid.node.nvlink_domain_gpus,
    )
    host = np.arange(graph.hosts)
    node, port = host // graph.nics_per_node, host % graph.nics_per_node
    leaf = np.zeros(graph.leaves, dtype=np.int64)
    leaf[np.asarray(graph.host_leaf)] = placement.nic_leaf_rack[node, port // graph.planes]
    per_domain = graph.leaves_per_domain
    index = np.arange(graph.leaves)
    local = index % per_domain
    lpp = max(design.leaves_per_pod, 1)
    middle = (index - local) + np.minimum((local // lpp) * lpp + lpp // 2, per_domain - 1)
    return _Positions(
        placement,
        leaf,
        middle,
        "cable_reach" not in valid.spec.fabric.model_fields_set and bool(design.cable_runs),
    )


def _spine_racks(graph: FabricGraph, where: _Positions) -> IntArray:
    """Position of every spine: the central block (two tiers) or its pod's middle leaf rack."""
    if graph.tiers < 3:
        return np.full(graph.spines, where.placement.center_rack, dtype=np.int64)
    leaf_pod = np.asarray(graph.leaf_pod, dtype=np.int64)
    pod_rack = np.zeros(int(leaf_pod.max()) + 1, dtype=np.int64)
    pod_rack[leaf_pod] = where.leaf[where.pod_middle_leaf]
    return pod_rack[np.asarray(graph.spine_pod, dtype=np.int64)]


def _placed(devices: list[PlannedDevice], racks: Sequence[int], per_row: int) -> None:
    for i, (device, position) in enumerate(zip(devices, racks, strict=True)):
        row, rack = rack_name(int(position), per_row)
        devices[i] = replace(device, row=row, rack=rack)


def cabling_plan(
    design: FabricDesign, valid: ValidScenario, switch_os: SwitchOs | None = None
) -> CablingPlan:
    """Every device and cable of ``design`` (see the module docstring).

    Parameters
    ----------
    design
        The designed fabric.
    valid
        The scenario it was designed for (nodes, NICs, cables).
    switch_os
        Whose port names to use; ``None`` for the switch model's first OS in the catalog.

    Returns
    -------
    CablingPlan
        Every device (with its rack position) and every cable (both ends' port names, its
        class and walked length).

    Raises
    ------
    ModelError
        FP530 / FP1240 when the design does not expand consistently (a bug: report the spec).
    CatalogError
        FP1230 when the port mode does not fit the switch's cages or the OS has no names for it.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> plan = cabling_plan(design_fabric(valid, "roce_v2"), valid)
    >>> len(plan.node_names), len(plan.cables) >= 64   # 8 nodes, a cable per NIC at least
    (8, True)
    """
    graph = fabric_graph(design, valid)
    where = _positions(design, valid, graph)
    hall = where.placement.hall
    panel = front_panel(design.switch_id)
    if switch_os is None and panel is not None:
        switch_os = panel.oses[0]
    ports = port_names(panel, design.radix, switch_os)
    leaf_tier, spine_tier = design.tier("leaf"), design.tier("spine")
    leaf_ports, spine_ports, spine_model = ports, ports, design.switch_id
    element = (
        valid.fabric_elements.get(design.technology)
        if valid.technologies[design.technology].fabric_element_asics
        else None
    )
    if element is not None and leaf_tier is not None and spine_tier is not None:
        # A scheduled fabric: leaves cable their fabric cages to the fabric elements' ports.
        fabric = (
            fabric_port_names(panel, leaf_tier.up_ports, switch_os)
            if panel is not None
            else port_names(None, design.radix + leaf_tier.up_ports)[design.radix :]
        )
        leaf_ports = ports + fabric
        spine_ports = port_names(front_panel(element.id), spine_tier.radix, switch_os)
        spine_model = element.id
    cable_of = _GroupCables(design, valid.cables)
    nics = graph.nics_per_node
    planes = graph.planes
    hpl = design.hosts_per_leaf
    nodes = device_names("node", graph.nodes, least=4)
    leaves = device_names("leaf", graph.leaves)
    spines = device_names("spine", graph.spines)
    cores = device_names("core", graph.cores)
    leaf_down = leaf_tier.down_ports if leaf_tier is not None else hpl
    spine_down = spine_tier.down_ports if spine_tier is not None else 0
    domains_per_plane = design.spine_groups
    leaf_plane = np.asarray(graph.leaf_domain) // domains_per_plane
    leaf_pod_in_plane = np.asarray(graph.leaf_pod) % max(graph.pods * domains_per_plane, 1)

    # Blocks: nodes that share their leaves (a scalable unit when rail-optimized).
    first_leaf = np.asarray(graph.host_leaf)[::nics]
    local_first = first_leaf % graph.leaves_per_domain
    if design.topology == "rail_optimized" and design.tiers > 1:
        node_block = (np.arange(graph.nodes) // hpl).tolist()
    else:
        node_block = local_first.tolist()
    node_pod = (np.asarray(graph.leaf_pod)[first_leaf] % graph.pods).tolist()
    blocks = max(node_block) + 1 if node_block else 0
    block_leaves: list[set[int]] = [set() for _ in range(blocks)]

    cables: list[PlannedCable] = []
    host_leaf = np.asarray(graph.host_leaf)
    host_slot = np.asarray(graph.host_index) % hpl
    if where.lengths_follow:
        nic_rack = where.leaf[host_leaf]
        node_rack = np.repeat(where.placement.node_rack, nics)
        node_groups = _by_length(cable_of, "node_leaf", hall.between(node_rack, nic_rack))
    else:
        node_groups = cable_of.take("node_leaf", graph.hosts)
    for host in range(graph.hosts):
        node, port = divmod(host, nics)
        leaf = int(host_leaf[host])
        block_leaves[node_block[node]].add(leaf)
        group, cable = node_groups[host]
        cables.append(
            PlannedCable(
                nodes[node],
                HOST_PORT_TEMPLATE.format(index=port),
                leaves[leaf],
                ports[int(host_slot[host])],
                "node_leaf",
                group.speed_gbps,
                group.part,
                _reach_class(cable),
                group.reach_m,
                port % planes,
                port // planes,
            )
        )
    management = design.management_ports // planes if design.management_ports else 0
    in_band_sm = valid.technologies[design.technology].scope == "ib_subnet"
    appliance = "ufm" if in_band_sm else "mgmt"
    appliance_model = UFM_APPLIANCE_ITEM if in_band_sm else MANAGEMENT_HOST_MODEL
    managers = device_names(appliance, management * planes, least=2)
    placed = _management_hosts(design, graph, management)
    at = np.tile(
        management_leaf_positions(
            where.placement.leaf_rack,
            design.topology,
            graph.tiers,
            graph.nodes,
            nics // planes,
            hpl,
            management,
        ),
        planes,
    )
    hosted = np.zeros(graph.leaves, dtype=bool)
    hosted[host_leaf] = True
    for (_, leaf, _), position in zip(placed, at.tolist(), strict=True):
        if not hosted[leaf]:  # a leaf that only the management ports reach
            where.leaf[leaf] = position
    if where.lengths_follow and placed:
        # Each management link runs from the central block to its own leaf (as the BOM counts).
        manager_groups = _by_length(cable_of, "management", where.placement.to_center(at))
    else:
        manager_groups = cable_of.take("management", len(placed))
    for index, (group, cable) in enumerate(manager_groups):
        plane, leaf, slot = placed[index]
        cables.append(
            PlannedCable(
                managers[index],
                HOST_PORT_TEMPLATE.format(index=0),
                leaves[leaf],
                ports[slot],
                "management",
                group.speed_gbps,
                group.part,
                _reach_class(cable),
                group.reach_m,
                plane,
                -1,
            )
        )
    if graph.tiers > 1:
        aggs, parallel = graph.spines_per_pod, graph.leaf_spine_parallel
        up1 = graph.leaf_up_spine.shape[1]
        if where.lengths_follow:
            if graph.tiers == 2:
                leaf_run = where.placement.to_center(where.leaf)
            else:
                leaf_run = hall.between(where.leaf, where.leaf[where.pod_middle_leaf])
            ls = _by_length(cable_of, "leaf_spine", np.repeat(leaf_run, up1))
        else:
            ls = cable_of.take("leaf_spine", graph.leaves * up1)
        spine_of = np.asarray(graph.leaf_up_spine)
        for leaf in range(graph.leaves):
            slot = int(graph.leaf_slot[leaf])
            for u in range(up1):
                group, cable = ls[leaf * up1 + u]
                cables.append(
                    PlannedCable(
                        leaves[leaf],
                        leaf_ports[leaf_down + u],
                        spines[int(spine_of[leaf, u])],
                        spine_ports[slot * parallel + u // aggs],
                        "leaf_spine",
                        group.speed_gbps,
                        group.part,
                        _reach_class(cable),
                        group.reach_m,
                        int(leaf_plane[leaf]),
                        -1,
                    )
                )
    spine_plane = (np.asarray(graph.spine_pod) // max(graph.pods * domains_per_plane, 1)).tolist()
    if graph.tiers == 3:
        up2 = graph.spine_up_core.shape[1]
        cores_g, parallel2 = graph.cores_per_group, graph.spine_core_parallel
        if where.lengths_follow:
            spine_run = where.placement.to_center(_spine_racks(graph, where))
            sc = _by_length(cable_of, "spine_core", np.repeat(spine_run, up2))
        else:
            sc = cable_of.take("spine_core", graph.spines * up2)
        core_of = np.asarray(graph.spine_up_core)
        for spine in range(graph.spines):
            pod = int(graph.spine_pod[spine]) % graph.pods
            for v in range(up2):
                group, cable = sc[spine * up2 + v]
                cables.append(
                    PlannedCable(
                        spines[spine],
                        ports[spine_down + v],
                        cores[int(core_of[spine, v])],
                        ports[pod * parallel2 + v // cores_g],
                        "spine_core",
                        group.speed_gbps,
                        group.part,
                        _reach_class(cable),
                        group.reach_m,
                        int(spine_plane[spine]),
                        -1,
                    )
                )

    leaf_block = {leaf: block for block, members in enumerate(block_leaves) for leaf in members}
    node_model = valid.nics[design.technology].id
    per_row, center = where.placement.per_row, where.placement.center_rack
    node_devices = [
        PlannedDevice(name, "node", node_model, -1, node_pod[i], node_block[i])
        for i, name in enumerate(nodes)
    ]
    _placed(node_devices, where.placement.node_rack.tolist(), per_row)
    leaf_devices = [
        PlannedDevice(
            name,
            "leaf",
            design.switch_id,
            int(leaf_plane[i]),
            int(leaf_pod_in_plane[i]),
            leaf_block.get(i, -1),
        )
        for i, name in enumerate(leaves)
    ]
    _placed(leaf_devices, where.leaf.tolist(), per_row)
    spine_devices = [
        PlannedDevice(
            name,
            "spine",
            spine_model,
            spine_plane[i],
            int(graph.spine_pod[i]) % max(graph.pods * domains_per_plane, 1),
            -1,
        )
        for i, name in enumerate(spines)
    ]
    _placed(spine_devices, _spine_racks(graph, where).tolist(), per_row)
    core_plane = (np.asarray(graph.core_domain) // domains_per_plane).tolist()
    central = [
        PlannedDevice(name, "core", design.switch_id, core_plane[i], -1, -1)
        for i, name in enumerate(cores)
    ]
    central += [
        PlannedDevice(name, "management", appliance_model, placed[i][0], -1, -1)
        for i, name in enumerate(managers)
    ]
    _placed(central, [center] * len(central), per_row)
    devices = node_devices + leaf_devices + spine_devices + central
    return CablingPlan(
        design=design,
        switch_os=switch_os,
        devices=tuple(devices),
        cables=tuple(cables),
        switch_ports=leaf_ports,
        element_ports=spine_ports if element is not None else (),
        node_names=tuple(nodes),
        node_block=tuple(node_block),
        node_pod=tuple(node_pod),
        block_leaves=tuple(tuple(leaves[i] for i in sorted(m)) for m in block_leaves),
        pods=graph.pods,
    )
