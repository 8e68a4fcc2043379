"""The cabling plan agrees with the design it expands: counts, ports, NICs, BOM."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.export.cabling import cabling_plan
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabrics import GOLDEN, plan_of


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_plan_agrees_with_the_design(name: str) -> None:
    valid, plan = plan_of(name)
    design = plan.design
    per_group = Counter(c.link_group for c in plan.cables)
    assert dict(per_group) == {k: v for k, v in design.links.items() if v}
    # No port is used twice, on either end.
    ends = [(c.a_device, c.a_port) for c in plan.cables] + [
        (c.z_device, c.z_port) for c in plan.cables
    ]
    assert len(ends) == len(set(ends))
    # Every host NIC is cabled once.
    nics = Counter(c.a_device for c in plan.cables if c.link_group == "node_leaf")
    assert len(nics) == valid.spec.cluster.nodes
    assert set(nics.values()) == {valid.spec.cluster.nics_per_node}
    # Ports used per tier equal the design's.
    role = {d.name: d.role for d in plan.devices}
    used = Counter(role[device] for device, _ in ends)
    for tier in design.tier_designs:
        assert used[tier.name] == tier.ports_used, tier.name
    # Every switch port name is a front-panel name of its box (a scheduled fabric's leaves:
    # host then fabric cages; its spines are the fabric elements' ports).
    devices = {d.name: d for d in plan.devices}
    for device, port in ends:
        if role[device] in ("leaf", "spine", "core"):
            assert port in plan.ports_of(devices[device]), (device, port)
    leaf = design.tier("leaf")
    assert leaf is not None
    assert len(plan.switch_ports) == (leaf.radix if plan.scheduled else design.radix)
    assert plan.scheduled == bool(valid.technologies[design.technology].fabric_element_asics)
    # Devices per role equal the design's switches.
    roles = Counter(d.role for d in plan.devices)
    assert roles["node"] == design.nodes
    for tier, count in design.switches.items():
        assert roles[tier] == count  # type: ignore[index]


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_cables_per_part_equal_the_bom(name: str) -> None:
    valid, plan = plan_of(name)
    # Cables bought whole are BOM cable lines; composed optics are modules and fibre there.
    composed = {c.id for c in valid.cables if c.composed}
    parts = Counter(c.part for c in plan.cables if c.part not in composed)
    bom = Counter({line.item: line.quantity for line in plan.design.bom if line.kind == "cable"})
    merged: Counter[str] = Counter()
    for line in plan.design.bom:
        if line.kind == "cable":
            merged[line.item] += line.quantity
    assert parts == merged
    assert sum(bom.values()) <= sum(merged.values())


def _hall_index(row: str, rack: str) -> tuple[int, int]:
    """(row, column) of a rack name: rows A..Z, AA..; racks <row><column from 01>."""
    number = 0
    for letter in row:
        number = number * 26 + ord(letter) - ord("A") + 1
    return number - 1, int(rack.removeprefix(row)) - 1


def _walk_m(a: tuple[int, int], z: tuple[int, int]) -> float:
    """The tray walk between two racks with the default layout (scenario.LayoutSpec): 2.4 m a
    row, 0.6 m a rack, 3 m of drops and 1 m of slack; 2 m inside one rack."""
    if a == z:
        return 2.0
    return abs(a[0] - z[0]) * 2.4 + abs(a[1] - z[1]) * 0.6 + 3.0 + 1.0


def _orderable_m(walk_m: float) -> float:
    """Orderable steps: 0.5 m up to 5 m, 1 m up to 30 m, 5 m up to 100 m, then 10 m
    (topology.layout.LENGTH_STEPS_M)."""
    step = 0.5 if walk_m <= 5 else 1.0 if walk_m <= 30 else 5.0 if walk_m <= 100 else 10.0
    return float(-(-round(walk_m / step, 6) // 1) * step)


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_every_link_is_as_long_as_the_walk_between_its_named_racks(name: str) -> None:
    # Every group: node-leaf, management (central block to its own leaf), leaf-spine and
    # spine-core (to the rack the layout names for the central block, not the hall's middle).
    _, plan = plan_of(name)
    where = {d.name: _hall_index(d.row, d.rack) for d in plan.devices}
    groups = Counter()
    for cable in plan.cables:
        walk = _walk_m(where[cable.a_device], where[cable.z_device])
        assert cable.length_m == pytest.approx(_orderable_m(walk)), cable
        groups[cable.link_group] += 1
    assert groups["node_leaf"] > 0


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_the_central_block_stands_in_a_row_of_its_own(name: str) -> None:
    # Spines of two tiers, cores and management hosts stand in the central network block: a
    # row that holds no node and no leaf (a node rack has no room for a spine tier).
    _, plan = plan_of(name)
    central = {"core", "management"} | ({"spine"} if plan.design.tiers == 2 else set())
    if plan.design.tiers == 1:  # one switch: its management hosts share its network rack
        return
    rows = {d.row for d in plan.devices if d.role in central}
    assert len(rows) == 1
    assert not [d.name for d in plan.devices if d.role in ("node", "leaf") and d.row in rows]


def test_management_links_each_take_their_own_leafs_run() -> None:
    # The 4-SU SuperPOD: 4 UFM links per plane land on rails 0-3 of the last SU's free slot, in
    # that SU's network rack, far from the first SU's: the runs differ from the first leaf's.
    _, plan = plan_of("h100-superpod-4su")
    where = {d.name: _hall_index(d.row, d.rack) for d in plan.devices}
    management = [c for c in plan.cables if c.link_group == "management"]
    assert len(management) == 4
    first_leaf = where["leaf-001"]
    central = where[management[0].a_device]
    for cable in management:
        assert where[cable.z_device] != first_leaf
        assert cable.length_m == _orderable_m(_walk_m(central, where[cable.z_device]))
    bom = Counter()
    for run in plan.design.cable_runs:
        if run.group == "management":
            bom[(run.cable_id, run.length_m)] += run.count
    assert Counter((c.part, c.length_m) for c in management) == bom


def test_a_rail_leaf_stands_in_its_units_network_rack() -> None:
    # SuperPOD 4 SUs: 32 nodes a unit, 4 a rack, the unit's network rack in the middle of its
    # 8 node racks; every node of a unit reaches its 8 rail leaves in that one rack.
    _, plan = plan_of("h100-superpod-4su")
    rack_of = {d.name: d.rack for d in plan.devices}
    unit_racks = Counter(
        (c.a_device, rack_of[c.z_device]) for c in plan.cables if c.link_group == "node_leaf"
    )
    assert len(unit_racks) == plan.design.nodes  # one leaf rack per node
    leaf_racks = {rack_of[d.name] for d in plan.devices if d.role == "leaf"}
    node_racks = {rack_of[d.name] for d in plan.devices if d.role == "node"}
    assert len(leaf_racks) == 4 and not leaf_racks & node_racks
    assert len(node_racks) == -(-plan.design.nodes // 4)


def test_rail_optimized_leaf_serves_one_rail_of_one_su() -> None:
    _, plan = plan_of("h100-superpod-4su")
    leaf_rails: dict[str, set[int]] = {}
    leaf_nodes: dict[str, set[str]] = {}
    for c in plan.cables:
        if c.link_group == "node_leaf":
            leaf_rails.setdefault(c.z_device, set()).add(c.rail)
            leaf_nodes.setdefault(c.z_device, set()).add(c.a_device)
    assert all(len(r) == 1 for r in leaf_rails.values())
    # 32 node slots per SU, 31 nodes: the UFM takes the last slot of SU 4.
    assert sorted(len(n) for n in leaf_nodes.values()) == [31] * 8 + [32] * 24
    ufm = [c for c in plan.cables if c.link_group == "management"]
    assert len(ufm) == 4 and len({c.z_device for c in ufm}) == 4


def test_qm9700_twin_port_names() -> None:
    _, plan = plan_of("h100-superpod-4su")
    first = plan.cables[0]
    assert (first.a_port, first.z_port) == ("nic0", "1/1/1")
    uplink = next(c for c in plan.cables if c.link_group == "leaf_spine")
    assert uplink.a_port == "1/17/1"  # 32 host ports on cages 1-16, uplinks from cage 17


def test_400g_on_an_800g_box_uses_breakout_names() -> None:
    _, plan = plan_of("roce-th5-400g")
    assert plan.switch_os == "sonic"
    assert plan.switch_ports[:3] == ("Ethernet0", "Ethernet4", "Ethernet8")
    assert len(plan.switch_ports) == 128


def test_three_tiers_and_planes_place_every_switch() -> None:
    _, plan = plan_of("b200-16su-3tier")
    assert plan.pods > 1
    cores = {c.z_device for c in plan.cables if c.link_group == "spine_core"}
    assert len(cores) == plan.design.switches["core"]
    _, eight = plan_of("deepseek-8-plane")
    planes = Counter(d.plane for d in eight.devices if d.role == "leaf")
    assert len(planes) == 8 and len(set(planes.values())) == 1


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_ports_per_switch(name: str) -> None:
    _, plan = plan_of(name)
    design = plan.design
    uplinks: Counter[str] = Counter()
    downlinks: Counter[str] = Counter()
    for c in plan.cables:
        downlinks[c.z_device] += 1
        if c.link_group in ("leaf_spine", "spine_core"):
            uplinks[c.a_device] += 1
    for device in plan.devices:
        tier = design.tier(device.role) if device.role in ("leaf", "spine", "core") else None
        if tier is None:
            continue
        assert uplinks[device.name] + downlinks[device.name] <= tier.radix
        assert uplinks[device.name] == (tier.up_ports if design.tiers > 1 else 0), device.name
        assert downlinks[device.name] <= tier.down_ports or device.role == "leaf"
        if device.role == "leaf":  # host slots: at most the leaf's host ports
            assert downlinks[device.name] <= design.hosts_per_leaf


def test_every_catalog_switch_has_a_front_panel_for_every_port_mode() -> None:
    from fabricplan.catalog.front_panel import front_panel, port_names
    from fabricplan.catalog.loader import load_catalog
    from fabricplan.model.hardware import SwitchSpec

    for switch in load_catalog().of_kind(SwitchSpec):
        panel = front_panel(switch.id)
        assert panel is not None, switch.id
        for mode in switch.port_modes:
            for os in panel.oses:
                names = port_names(panel, mode.ports, os)
                assert len(names) == len(set(names)) == mode.ports, (switch.id, mode, os)


def test_a_scheduled_fabric_cables_fabric_cages_to_the_fabric_elements() -> None:
    # 4,096 GPUs at 400G on the 7700R4C-38PE: 36 host ports on cages 1-18 (2 x 400G), 40
    # fabric ports on cages 19-38; each leaf reaches every 7720R4-128PE element with 40/F links.
    valid, plan = plan_of("ddc-400g-fat-tree")
    element = valid.fabric_elements["ddc"]
    spines = plan.devices_of("spine")
    assert {d.model for d in spines} == {element.id}
    assert {d.model for d in plan.devices_of("leaf")} == {"arista-7700r4c-38pe"}
    assert plan.switch_ports[:2] == ("Ethernet1/1", "Ethernet1/5")
    assert plan.switch_ports[36:38] == ("Ethernet19/1", "Ethernet19/5")
    assert plan.switch_ports[-1] == "Ethernet38/5"
    assert len(plan.element_ports) == 256 and plan.element_ports[-1] == "Ethernet128/5"
    per_pair = Counter(
        (c.a_device, c.z_device) for c in plan.cables if c.link_group == "leaf_spine"
    )
    leaves = len(plan.devices_of("leaf"))
    assert len(per_pair) == leaves * len(spines)  # every leaf reaches every element
    assert set(per_pair.values()) == {40 // len(spines)}
    assert all(
        c.a_port in plan.switch_ports[36:] for c in plan.cables if c.link_group == "leaf_spine"
    )


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    gpus=st.sampled_from([64, 256, 504, 1016, 2048, 4096]),
    technology=st.sampled_from(["infiniband", "roce_v2", "ddc"]),
    planes=st.sampled_from([1, 2, 8]),
    topology=st.sampled_from(["rail_optimized", "fat_tree"]),
    tiers=st.sampled_from(["auto", 3]),
)
def test_cut_sheet_and_bom_agree_run_by_run_over_designs(
    gpus: int, technology: str, planes: int, topology: str, tiers: object
) -> None:
    # Over designs beyond the golden ones (planes, spine groups, three tiers, management ports,
    # scheduled fabrics): every link is as long as the walk between its named racks, and per
    # (part, length) the cut sheet counts what the design's cable runs (the BOM) count.
    from fabricplan.errors import FabricPlanError

    fabric: dict[str, Any] = {"technologies": [technology], "planes": planes, "topology": topology}
    if tiers == 3:
        fabric["tiers"] = 3
    try:
        valid = parse_spec({"cluster": {"gpus": gpus}, "fabric": fabric})
        design = design_fabric(valid, technology)  # type: ignore[arg-type]
    except FabricPlanError:
        return  # not a buildable design (e.g. a DDC of three stages): nothing to cable
    plan = cabling_plan(design, valid)
    where = {d.name: _hall_index(d.row, d.rack) for d in plan.devices}
    for cable in plan.cables:
        walk = _walk_m(where[cable.a_device], where[cable.z_device])
        assert cable.length_m == pytest.approx(_orderable_m(walk)), cable
    runs: Counter[tuple[str, str, float]] = Counter()
    for run in design.cable_runs:
        runs[(run.group, run.cable_id, run.length_m)] += run.count
    assert Counter((c.link_group, c.part, c.length_m) for c in plan.cables) == runs
