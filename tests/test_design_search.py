"""The per-technology design search: what it tries, what it keeps, what pins it, and the leaf
rules it relies on (one switch when everything fits, N:1 to the port, never dearer than 1:1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import DesignError
from fabricplan.evaluate import evaluate_one, search_design
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import bom_capex_usd, design_fabric, design_space


def scenario(gpus: int, tech: str = "roce_v2", **fabric: Any) -> Any:
    return parse_spec({"cluster": {"gpus": gpus}, "fabric": {"technologies": [tech], **fabric}})


def test_a_32_gpu_rail_optimized_cluster_is_one_switch() -> None:
    # 4 nodes x 8 NICs = 32 ports fit one 64-port switch: every NIC one hop from every NIC.
    # (Before: 8 rail leaves and a spine, 92 % of the ports unused.)
    valid = scenario(32, "infiniband", switch={"infiniband": "qm9700"}, topology="rail_optimized")
    design = design_fabric(valid, "infiniband")
    assert design.switches == {"leaf": 1, "spine": 0, "core": 0}
    assert (design.tiers, design.worst_case_switch_hops) == (1, 1)
    assert design.links.get("leaf_spine", 0) == 0


def test_pinned_choices_leave_one_point_in_the_space() -> None:
    valid = scenario(2048, switch={"roce_v2": "sn5600"}, topology="fat_tree", tiers=2, planes=2)
    space = design_space(valid, "roce_v2")
    assert [(c.switch.id, c.topology, c.tiers, c.planes) for c in space] == [
        ("sn5600", "fat_tree", 2, 2)
    ]
    _, design, _ = search_design(valid, "roce_v2", backend="fake")
    assert (design.switch_id, design.topology, design.tiers, design.planes) == (
        "sn5600",
        "fat_tree",
        2,
        2,
    )
    assert design.alternatives == ()


def test_the_space_spans_every_switch_at_the_nic_speed_both_topologies_and_plane_counts() -> None:
    valid = scenario(2048)
    space = design_space(valid, "roce_v2")
    switches = {c.switch.id for c in space}
    assert switches == {
        "th6-128x800g",
        "sn5600",
        "th-ultra-64x800g",
        "ufispace-s9321-64e",
        "th4-64x400g",
        "sn4700",
    }  # every eligible Ethernet switch with 400G ports; no DDC leaf, no fabric element
    assert {c.topology for c in space} == {"rail_optimized", "fat_tree"}
    assert {c.planes for c in space} == {1, 2, 4, 8}
    assert {c.tiers for c in space} == {None, 3}


def test_the_search_keeps_the_least_money_and_says_why_each_other_lost() -> None:
    valid = scenario(2048)
    chosen, design, cost = search_design(valid, "roce_v2", backend="fake")
    assert chosen.switches["roce_v2"].id == design.switch_id
    priced = [a for a in design.alternatives if a.money_usd is not None]
    assert priced, "the cheapest few are priced in full"
    evaluation = evaluate_one(valid, "roce_v2", backend="fake")
    own = evaluation.cost.tco_usd + (evaluation.cost.gpu_idle_usd or 0.0)
    for alt in priced:
        if alt.gpu_idle_usd is not None:
            assert alt.money_usd is not None and alt.money_usd >= own - 1.0
        assert alt.tco_usd is not None
        assert alt.lost_because
    capex_only = [a for a in design.alternatives if a.money_usd is None and a.capex_usd]
    assert all(a.capex_usd is not None and a.capex_usd >= cost.capex_usd for a in capex_only)
    assert any(f.code == "FP320" for f in design.findings)


def test_a_technology_is_infeasible_only_when_nothing_in_the_space_fits() -> None:
    # An 8-port generic switch tops out at 8^3/4 = 128 ports per plane at 3 tiers; 8 planes of
    # one rail each reach 1,024 NIC ports, so 2,048 NICs cannot be built in any way.
    valid = scenario(2048, switch={"roce_v2": {"ports": 8, "port_speed_gbps": 400}})
    with pytest.raises(DesignError) as err:
        search_design(valid, "roce_v2", backend="fake")
    assert "no design in the search space fits" in err.value.what
    # ...while 512 NIC ports fit once the search splits them over 4 or 8 planes.
    small = scenario(512, switch={"roce_v2": {"ports": 8, "port_speed_gbps": 400}})
    _, design, _ = search_design(small, "roce_v2", backend="fake")
    assert design.planes >= 4


def test_two_to_one_at_2048_gpus_builds_fewer_spines_than_one_to_one() -> None:
    # 128 x 400G leaves: 64 host ports and 32 uplinks a leaf (2:1 exactly); 1,024 uplinks over
    # 128-port spines = 8 spines, against 16 at 1:1. (Before: 85:43 leaves and 43 spines.)
    pinned = {"switch": {"roce_v2": "ufispace-s9321-64e"}, "topology": "rail_optimized"}
    one = design_fabric(scenario(2048, **pinned), "roce_v2")
    two = design_fabric(scenario(2048, oversubscription=2, **pinned), "roce_v2")
    assert one.switches == {"leaf": 32, "spine": 16, "core": 0}
    assert two.switches == {"leaf": 32, "spine": 8, "core": 0}
    leaf = two.tier("leaf")
    assert leaf is not None and leaf.down_ports == 2 * leaf.up_ports


def test_two_to_one_at_1024_gpus_is_two_to_one_to_the_port() -> None:
    # Host ports : cabled uplinks over the whole fabric (was 1,024 : 688, about 1.5:1).
    pinned = {"switch": {"roce_v2": "ufispace-s9321-64e"}, "topology": "rail_optimized"}
    two = design_fabric(scenario(1024, oversubscription=2, **pinned), "roce_v2")
    assert two.links["node_leaf"] == 2 * two.links["leaf_spine"]


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(1, 1200),
    ratio=st.sampled_from([1.5, 2.0, 3.0, 4.0]),
    switch=st.sampled_from(["sn5600", "sn4700", "qm9700"]),
    topology=st.sampled_from(["rail_optimized", "fat_tree"]),
)
def test_oversubscription_never_raises_capex(
    nodes: int, ratio: float, switch: str, topology: str
) -> None:
    tech = "infiniband" if switch.startswith("qm") else "roce_v2"
    pinned = {"switch": {tech: switch}, "topology": topology, "planes": 1}
    try:
        free = design_fabric(scenario(8 * nodes, tech, **pinned), tech)
    except DesignError:
        return
    valid = scenario(8 * nodes, tech, oversubscription=ratio, **pinned)
    over = design_fabric(valid, tech)
    assert bom_capex_usd(valid, over) <= bom_capex_usd(valid, free) + 1e-6
    for tier in over.tier_designs:
        if tier.name == "leaf" and tier.up_ports:
            assert tier.down_ports <= ratio * tier.up_ports + 1e-9


def test_the_search_finds_deepseeks_eight_plane_two_tier_fabric_at_16k() -> None:
    # 16,384 NICs on 64-port switches: one plane needs three tiers (1,280 switches); eight planes
    # of 2,048 NICs are two tiers each, 8 x 96 = 768 switches (DeepSeek ISCA'25 MPFT).
    valid = scenario(
        16_384,
        "infiniband",
        switch={"infiniband": "qm9700"},
        topology="fat_tree",
        management_ports=0,
    )
    _, design, _ = search_design(valid, "infiniband", backend="fake")
    assert (design.planes, design.tiers, sum(design.switches.values())) == (8, 2, 768)
    one_plane = [a for a in design.alternatives if a.planes == 1 and a.tiers == 3]
    assert one_plane and one_plane[0].switches_total == 1_280
    assert one_plane[0].more_usd is not None and one_plane[0].more_usd > 0


@settings(max_examples=12, deadline=None)
@given(nodes=st.integers(1, 3000), tech=st.sampled_from(["infiniband", "roce_v2"]))
def test_no_priced_alternative_costs_less_than_the_kept_design(nodes: int, tech: str) -> None:
    valid = scenario(8 * nodes, tech)
    try:
        _, design, cost = search_design(valid, tech, backend="fake")
    except DesignError:
        return
    for alt in design.alternatives:
        if alt.more_usd is not None:
            assert alt.more_usd >= -1.0, alt
        if alt.tco_usd is not None and alt.gpu_idle_usd is None:
            assert alt.tco_usd >= cost.tco_usd - 1.0, alt


def test_the_subnet_managers_ports_do_not_make_65536_nics_infeasible() -> None:
    # 65,536 NICs are exactly 64^3/4: the 4 UFM ports of management_ports: auto used to tip one
    # plane over the three-tier limit (FP302); the SM then runs elsewhere (FP319).
    valid = scenario(
        65_536, "infiniband", switch={"infiniband": "qm9700"}, topology="fat_tree", planes=1
    )
    design = design_fabric(valid, "infiniband")
    assert (design.tiers, sum(design.switches.values()), design.management_ports) == (3, 5120, 0)
    assert any(f.code == "FP319" for f in design.findings)


def test_planes_that_are_each_one_switch_are_searched() -> None:
    # 2,048 NICs, 256 x 400G switches: one plane is two tiers (16 leaves + 8 spines); eight planes
    # of 256 NICs are one switch each, 8 switches and no spine tier (a rail-only fabric). The
    # search used to skip planes whenever one plane fit two tiers with one spine set.
    valid = scenario(2048, "roce_v2", switch={"roce_v2": "th6-128x800g"}, topology="rail_optimized")
    _, design, _ = search_design(valid, "roce_v2", backend="fake")
    assert (design.planes, design.tiers, sum(design.switches.values())) == (8, 1, 8)


@settings(max_examples=10, deadline=None)
@given(
    nodes=st.integers(1, 300),
    tech=st.sampled_from(["infiniband", "roce_v2"]),
    planes=st.sampled_from([2, 4, 8]),
)
def test_no_pinned_plane_count_beats_the_search(nodes: int, tech: str, planes: int) -> None:
    # The search over the planes the spec leaves open keeps a design no dearer than any plane
    # count the user could pin (same switch and topology choices otherwise).
    try:
        _, searched, cost = search_design(scenario(8 * nodes, tech), tech, backend="fake")
        _, _, pinned = search_design(scenario(8 * nodes, tech, planes=planes), tech, backend="fake")
    except DesignError:
        return
    assert cost.tco_usd <= pinned.tco_usd + 1.0, (searched.planes, searched.tiers)


def test_one_switch_planes_say_they_are_rail_only_and_not_oversubscribed() -> None:
    # Eight one-switch planes: an architect must hear that nothing in the fabric joins the rails
    # (PXN over NVLink does), and that an asked 2:1 has no uplinks to be built on.
    valid = scenario(
        2048, "roce_v2", switch={"roce_v2": "th6-128x800g"}, oversubscription=2, planes=8
    )
    codes = {f.code for f in design_fabric(valid, "roce_v2").findings}
    assert {"FP860", "FP861"} <= codes
    one = scenario(32, "roce_v2", switch={"roce_v2": "th6-128x800g"}, oversubscription=2)
    codes = {f.code for f in design_fabric(one, "roce_v2").findings}
    assert "FP861" in codes and "FP860" not in codes
    two_tiers = scenario(2048, "roce_v2", switch={"roce_v2": "th6-128x800g"}, planes=1)
    assert not {"FP860", "FP861"} & {f.code for f in design_fabric(two_tiers, "roce_v2").findings}
