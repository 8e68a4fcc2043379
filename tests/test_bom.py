"""The bill of materials from the physical layout: lengths, reach classes, transceivers at both
ends, twin-port modules, fibre cords, and what they cost — counted from first principles."""

from __future__ import annotations

import math
from typing import Any

from fabricplan.analytic.cost import fabric_cost
from fabricplan.model.fabric import FabricDesign
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.layout import orderable_length_m


def design(gpus: int, tech: str, switch: str, **extra: Any) -> tuple[Any, FabricDesign]:
    fabric = {"technologies": [tech], "switch": {tech: switch}, "planes": 1}
    fabric.update(extra.pop("fabric", {}))
    valid = parse_spec({"cluster": {"gpus": gpus}, "fabric": fabric, **extra})
    return valid, design_fabric(valid, tech)


def quantity(d: FabricDesign, item: str) -> int:
    return sum(line.quantity for line in d.bom if line.item == item)


def optical_links(valid: Any, d: FabricDesign, group: str) -> int:
    by_id = {c.id: c for c in valid.cables}
    return sum(r.count for r in d.cable_runs if r.group == group and by_id[r.cable_id].composed)


def test_rail_optimized_leaves_sit_in_a_network_rack_so_no_node_link_stays_in_its_rack() -> None:
    valid, d = design(2048, "infiniband", "qm9700", fabric={"topology": "rail_optimized"})
    node_runs = [r for r in d.cable_runs if r.group == "node_leaf"]
    assert sum(r.count for r in node_runs) == 2048
    layout = valid.spec.layout
    # The nearest node rack is one rack away from its unit's network rack.
    nearest = orderable_length_m(layout.rack_width_m + layout.tray_drop_m + layout.slack_m)
    assert min(r.length_m for r in node_runs) == nearest > layout.in_rack_m
    # Copper reaches 3 m (passive) or 5 m (active) at 400G: longer runs are optical.
    by_id = {c.id: c for c in valid.cables}
    for run in node_runs:
        assert by_id[run.cable_id].max_reach_m >= run.length_m
        if run.length_m > 5:
            assert by_id[run.cable_id].cable_kind in ("aoc", "optic")


def test_a_top_of_rack_fat_tree_leaf_reaches_its_nodes_with_passive_copper() -> None:
    # 4 nodes x 8 NICs = 32 host ports = one 64-port leaf at 1:1, in the nodes' own rack.
    valid, d = design(1024, "infiniband", "qm9700", fabric={"topology": "fat_tree"})
    node_runs = [r for r in d.cable_runs if r.group == "node_leaf"]
    assert {r.length_m for r in node_runs} == {valid.spec.layout.in_rack_m}
    assert {r.cable_id for r in node_runs} == {"dac-400g"}
    assert quantity(d, "dac-400g") >= 1024


def test_transceivers_sit_at_both_ends_and_a_twin_port_module_carries_two_links() -> None:
    # A fixed 80 m between tiers: single-mode DR4 on every leaf-spine link.
    valid, d = design(
        2048,
        "infiniband",
        "qm9700",
        fabric={
            "topology": "rail_optimized",
            "cable_reach": {"node_leaf_m": 60, "leaf_spine_m": 80, "spine_core_m": 80},
        },
    )
    leaf_spine = optical_links(valid, d, "leaf_spine")
    node_leaf = optical_links(valid, d, "node_leaf")
    assert leaf_spine == d.links["leaf_spine"] == 2048
    assert node_leaf == 2048
    # QM9700: 64 ports on 32 twin-port OSFP cages. Switch ends: node-leaf links at the leaf,
    # leaf-spine links at both ends, two links per module; NIC ends: one module per link.
    twin = 2
    assert quantity(d, "mms4x00-ns") == math.ceil(node_leaf / twin) + 2 * math.ceil(
        leaf_spine / twin
    )
    assert quantity(d, "mms4x00-ns400") == node_leaf
    # Transceiver ends = 2 x optical links, counted as module ports.
    assert quantity(d, "mms4x00-ns") * twin + quantity(d, "mms4x00-ns400") == 2 * (
        node_leaf + leaf_spine
    )
    # One fibre cord per optical link, at its orderable length.
    cords = [line for line in d.bom if line.kind == "fibre"]
    assert sum(line.quantity for line in cords) == node_leaf + leaf_spine
    assert {line.length_m for line in cords} == {60.0, 80.0}


def test_a_cage_that_carries_one_link_takes_one_module_per_link_end() -> None:
    # SN4700: 32 x 400G on 32 QSFP-DD cages, so leaf-spine optics are single modules.
    valid, d = design(
        512,
        "roce_v2",
        "sn4700",
        fabric={"cable_reach": {"node_leaf_m": 2, "leaf_spine_m": 80, "spine_core_m": 80}},
    )
    links = optical_links(valid, d, "leaf_spine")
    assert links == d.links["leaf_spine"] > 0
    # 80 m between QSFP-DD cages: 400GBASE-SR8 (IEEE 802.3cm, 100 m on OM4) at both ends
    assert quantity(d, "qsfpdd-400g-sr8") == 2 * links
    assert quantity(d, "mms4x00-ns") == 0


def test_dr4_between_switches_reaches_500_m_so_150_m_needs_no_2_km_optics() -> None:
    _, d = design(
        2048,
        "infiniband",
        "qm9700",
        fabric={"cable_reach": {"node_leaf_m": 2, "leaf_spine_m": 150, "spine_core_m": 150}},
    )
    runs = {r.cable_id for r in d.cable_runs if r.group == "leaf_spine"}
    assert runs == {"optic-400g-dr4-500m"}
    assert quantity(d, "mms4x50-nm") == 0  # no FR4 (2 km) part


def test_a_host_link_beyond_the_nic_modules_100_m_is_a_finding_not_a_2_km_optic() -> None:
    _, d = design(
        256,
        "infiniband",
        "qm9700",
        fabric={"cable_reach": {"node_leaf_m": 150, "leaf_spine_m": 30, "spine_core_m": 30}},
    )
    assert any(f.code == "FP316" and "node-leaf" in f.message for f in d.findings)


def test_a_fibre_cord_costs_its_base_plus_its_length() -> None:
    valid, d = design(
        2048,
        "infiniband",
        "qm9700",
        fabric={"cable_reach": {"node_leaf_m": 60, "leaf_spine_m": 80, "spine_core_m": 80}},
    )
    cost = fabric_cost(valid, d)
    base = valid.prices["fibre-smf-mpo12"].price_usd
    per_m = valid.prices["fibre-smf-mpo12-per-m"].price_usd
    cord_prices = {
        (bom.item, bom.length_m): line.unit_price_usd
        for bom, line in zip(d.bom, cost.lines, strict=True)
        if bom.kind == "fibre"
    }
    assert cord_prices[("fibre-smf-mpo12", 80.0)] == base + 80 * per_m
    # Modules draw power; fibre does not.
    assert cost.power_lines.get("transceiver", 0) > 0
    assert cost.power_lines.get("fibre", 0) == 0


def test_more_nodes_per_rack_shorten_the_runs() -> None:
    _, dense = design(2048, "roce_v2", "sn5600", layout={"nodes_per_rack": 8})
    _, sparse = design(2048, "roce_v2", "sn5600", layout={"nodes_per_rack": 1})

    def metres(d: FabricDesign) -> float:
        return sum(r.count * r.length_m for r in d.cable_runs if r.group == "node_leaf")

    assert metres(dense) < metres(sparse)


def test_the_layout_conserves_every_link() -> None:
    for gpus in (8, 256, 2048, 16_384):
        _, d = design(gpus, "roce_v2", "sn5600")
        for group, count in d.links.items():
            assert sum(r.count for r in d.cable_runs if r.group == group) == count, (gpus, group)


def test_a_64_cage_box_at_256_x_400g_takes_one_module_per_cage_for_four_links() -> None:
    # Tomahawk-6 class: 256 x 400G on 64 x 1.6T OSFP cages, so 4 links share a cage. 32 nodes x
    # 8 NICs = 256 host links on one switch, all 60 m (optical). A cage holds one module, so the
    # switch end takes 256 / 4 = 64 modules (not 128 twin-ports, not 256 single ports); every
    # NIC end takes one module and every link one (breakout) fibre cord. The switch runs 400G as
    # 2 x 200G lanes, the default ConnectX-7 as 4 x 100G: its module is the DR2 gearbox.
    valid, d = design(
        256,
        "roce_v2",
        "th6-128x800g",
        fabric={"cable_reach": {"node_leaf_m": 60, "leaf_spine_m": 60, "spine_core_m": 60}},
    )
    assert (d.radix, d.port_speed_gbps, d.switches["leaf"], d.tiers) == (256, 400, 1, 1)
    switch = valid.switches["roce_v2"]
    assert switch.cages == 64
    links = d.links["node_leaf"]
    assert links == optical_links(valid, d, "node_leaf") == 256
    assert quantity(d, "osfp-1.6t-2xdr4") == 64
    assert valid.nics["roce_v2"].id == "cx7"
    assert quantity(d, "osfp-400g-dr2-gearbox-nic") == 256
    assert quantity(d, "osfp-400g-dr2-nic") == 0
    assert quantity(d, "fibre-smf-mpo12") == 256
    # No two-link or one-link module is put into a four-link cage.
    assert quantity(d, "mms4x00-ns") == 0 and quantity(d, "qsfpdd-400g-dr4") == 0
    # Transceiver capex by hand: 64 x the 1.6T module + 256 x the NIC gearbox module.
    price = {item: valid.prices[item].price_usd for item in valid.prices}
    modules = sum(line.quantity * price[line.item] for line in d.bom if line.kind == "transceiver")
    assert modules == 64 * price["osfp-1.6t-2xdr4"] + 256 * price["osfp-400g-dr2-gearbox-nic"]


def test_short_host_links_from_a_cage_of_two_links_are_ordered_as_splitters() -> None:
    _, d = design(256, "roce_v2", "sn5600")
    host_lines = [line for line in d.bom if line.kind == "cable" and "node-leaf" in line.role]
    assert host_lines
    for line in host_lines:
        assert f"about {math.ceil(line.quantity / 2)} 1:2 splitter" in line.role


def test_no_copper_joins_200g_switch_lanes_to_a_100g_nic() -> None:
    # A passive cable converts no lanes: th6 at 400G (2 x 200G) to a ConnectX-7 (4 x 100G) is
    # optical at every length, the NIC end a gearbox module.
    valid, d = design(256, "roce_v2", "th6-128x800g")
    by_id = {c.id: c for c in valid.cables}
    host_runs = [r for r in d.cable_runs if r.group == "node_leaf"]
    assert host_runs and {r.cable_id for r in host_runs} == {"optic-400g-dr2"}
    assert not any(by_id[r.cable_id].cable_kind in ("dac", "acc") for r in d.cable_runs)
    assert quantity(d, "osfp-400g-dr2-gearbox-nic") == d.links["node_leaf"]
