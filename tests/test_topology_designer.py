"""design_fabric: planes, oversubscription, findings (scale limits, cables, ports) and the BOM."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fabricplan.errors import DesignError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import CableSpec, Figure, PriceEntry
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import NO_CABLE_ID, design_fabric
from fabricplan.topology.fat_tree import fat_tree
from fabricplan.topology.scale_limit import (
    ECMP_MAX_NEXT_HOPS,
    domain_findings,
    ecmp_findings,
)

UNICAST_LIDS = 49_151  # 0x0001-0xBFFF (IBTA; opensm ib_types.h)


def scenario(
    gpus: int,
    tech: TechnologyName = "infiniband",
    *,
    gpus_per_node: int = 8,
    nics: int = 8,
    speed: float = 400,
    switch: Any = None,
    nic: Any = "auto",
    **fabric: Any,
) -> ValidScenario:
    spec: dict[str, Any] = {
        "cluster": {
            "gpus": gpus,
            "gpus_per_node": gpus_per_node,
            "nics_per_node": nics,
            "nic_speed_gbps": speed,
            "nic": nic,
        },
        "fabric": {"technologies": [tech], **fabric},
    }
    if switch is not None:
        spec["fabric"]["switch"] = {tech: switch}
    return parse_spec(spec)


def codes(design: FabricDesign) -> dict[str, str]:
    return {f.code: f.severity for f in design.findings}


def generic(ports: int, speed: float = 400) -> dict[str, float]:
    return {"ports": ports, "port_speed_gbps": speed}


def test_generic_k16_fat_tree_has_1024_hosts_and_320_switches() -> None:
    valid = scenario(
        1024,
        "roce_v2",
        gpus_per_node=1,
        nics=1,
        speed=100,
        nic={"speed_gbps": 100},
        switch=generic(16, 100),
        topology="fat_tree",
        tiers=3,
    )
    design = design_fabric(valid, "roce_v2")
    k = 16
    assert design.endpoints == k**3 // 4
    assert sum(design.switches.values()) == 5 * k * k // 4
    assert design.switches == {"leaf": k * k // 2, "spine": k * k // 2, "core": k * k // 4}
    assert (design.tiers, design.worst_case_switch_hops, design.headroom_gpus) == (3, 5, 0)
    # Non-blocking: half the hosts send to the other half at line rate.
    assert design.bisection_tbps == pytest.approx(1024 * 100 / 2 / 1000)
    # Every link of the three groups exists once: k^3/4 per tier boundary.
    assert design.links == {"node_leaf": 1024, "leaf_spine": 1024, "spine_core": 1024}


def test_oversubscription_two_to_one_halves_leaf_uplinks_and_bisection() -> None:
    one = design_fabric(
        scenario(192, "roce_v2", switch=generic(48), topology="fat_tree"), "roce_v2"
    )
    two = design_fabric(
        scenario(192, "roce_v2", switch=generic(48), topology="fat_tree", oversubscription=2),
        "roce_v2",
    )
    # 1:1 -> 8 leaves x 24 up; 2:1 -> 6 leaves x 32 hosts with 16 up each.
    assert one.links["leaf_spine"] == 192 and two.links["leaf_spine"] == 96
    assert one.bisection_tbps == pytest.approx(192 * 0.4 / 2)
    assert two.bisection_tbps == pytest.approx(one.bisection_tbps / 2)
    leaf = two.tier("leaf")
    assert leaf is not None and leaf.oversubscription == 2.0


def test_planes_split_endpoints_and_sum_the_counts() -> None:
    # 4096 NIC ports on 64-port switches: one plane needs 3 tiers, two planes of 2048 need 2.
    one = design_fabric(scenario(4096, switch="qm9700", topology="fat_tree"), "infiniband")
    two = design_fabric(
        scenario(4096, switch="qm9700", topology="fat_tree", planes=2, management_ports=0),
        "infiniband",
    )
    half = fat_tree(2048, 64)
    assert one.tiers == 3 and two.tiers == 2
    assert two.switches == {"leaf": 2 * half.leaves, "spine": 2 * half.spines, "core": 0}
    assert two.links["node_leaf"] == 4096
    assert two.bisection_tbps == pytest.approx(4096 * 0.4 / 2)
    # Each plane is its own subnet with its own subnet manager ports; with every leaf port taken,
    # auto does not buy more switches for them (FP319) — an explicit number reserves them.
    assert one.management_ports == 0 and "FP319" in codes(one)
    reserved = design_fabric(
        scenario(4096, switch="qm9700", topology="fat_tree", management_ports=4), "infiniband"
    )
    assert reserved.management_ports == 4
    auto = design_fabric(
        scenario(4096, switch="qm9700", topology="fat_tree", planes=2, management_ports=4),
        "infiniband",
    )
    assert auto.management_ports == 8


def test_planes_must_divide_the_nic_ports() -> None:
    with pytest.raises(DesignError) as err:
        design_fabric(scenario(1024, planes=3), "infiniband")
    assert err.value.code == "FP303"
    assert "[1, 2, 4, 8]" in str(err.value)


def test_forced_tiers_that_cannot_fit_raise_with_the_fix() -> None:
    valid = scenario(20_000, switch="qm9700", topology="fat_tree", tiers=2, management_ports=0)
    with pytest.raises(DesignError) as err:
        design_fabric(valid, "infiniband")
    assert err.value.code == "FP301"
    assert str(err.value).startswith("fabric.tiers: needs 3 tiers for 20000 host ports")
    assert "set tiers: 3 or auto" in str(err.value)


def test_more_than_three_tiers_is_a_design_error() -> None:
    # 64^3/4 = 65,536 host ports is the 3-tier limit of 64-port switches.
    valid = scenario(65_536 + 8, switch="qm9700", topology="fat_tree", management_ports=0)
    with pytest.raises(DesignError) as err:
        design_fabric(valid, "infiniband")
    assert err.value.code == "FP302"


def test_unknown_technology_is_a_design_error() -> None:
    with pytest.raises(DesignError) as err:
        design_fabric(scenario(256), "roce_v2")
    assert err.value.code == "FP305"


def test_lid_finding_follows_host_ports_plus_switches() -> None:
    tech = scenario(8).technologies["infiniband"]
    for endpoints in (30_000, 45_000, 49_151, 60_000):
        plane = fat_tree(endpoints, 64)
        lids = endpoints + plane.switches  # one LID per host port, one per switch (port 0)
        assert bool(domain_findings(tech, plane, 1)) == (lids > UNICAST_LIDS), endpoints
    assert not domain_findings(tech, fat_tree(32_768, 64), 1)


def test_lid_finding_and_routers_appear_beyond_one_subnet_and_not_below() -> None:
    big = design_fabric(
        scenario(65_536, switch="qm9700", topology="fat_tree", management_ports=0), "infiniband"
    )
    assert codes(big)["FP312"] == "warning"
    routers = [line for line in big.bom if line.item == "ib-router"]
    # 65,536 host ports + 5,120 switches = 70,656 LIDs -> 2 subnets. Under uniform traffic half
    # of the 65,536 x 400G load crosses between them: 13.1 Pb/s over 64 x 400G routers = 512
    # routers, not the 1 that merely joins the two subnets.
    assert routers and routers[0].quantity == math.ceil(65_536 * 400 / 2 / (64 * 400)) == 512
    assert codes(big)["FP322"] == "warning"
    small = design_fabric(scenario(32_768, switch="qm9700", topology="fat_tree"), "infiniband")
    assert "FP312" not in codes(small)
    assert not [line for line in small.bom if line.kind == "router"]
    # Two planes are two subnets of 32,768 host ports each: no router needed.
    planes = design_fabric(
        scenario(65_536, switch="qm9700", topology="fat_tree", planes=2), "infiniband"
    )
    assert "FP312" not in codes(planes)


def test_ethernet_has_no_lid_limit() -> None:
    design = design_fabric(
        scenario(65_536, "roce_v2", switch="sn5600", topology="fat_tree"), "roce_v2"
    )
    assert "FP312" not in codes(design)


def test_roce_v1_beyond_one_l2_domain_is_refused_and_an_mlag_pair_is_a_warning() -> None:
    # 1,024 NICs on 128-port (400G) switches: one L2 domain holds 192 (3 MLAG leaves), so the
    # plane would span several L2 domains, which RoCEv1 cannot cross.
    with pytest.raises(DesignError) as err:
        design_fabric(scenario(1024, "roce_v1", switch="sn5600"), "roce_v1")
    assert err.value.code == "FP625"
    # 96 host ports on 64-port switches: 3 leaves x 32 uplinks into one MLAG pair (2 x 62 ports
    # after the peer links): a warning, not an error.
    pair = design_fabric(
        scenario(96, "roce_v1", switch=generic(64), topology="fat_tree"), "roce_v1"
    )
    assert pair.switches["spine"] == 2 and codes(pair)["FP313"] == "warning"
    one = design_fabric(scenario(64, "roce_v1", switch="sn5600", topology="fat_tree"), "roce_v1")
    assert one.tiers == 1 and codes(one)["FP313"] == "info"


def test_ecmp_width_beyond_the_assumed_limit_is_flagged_for_routed_ethernet() -> None:
    valid = scenario(8, "roce_v2")
    wide = fat_tree(1024, 2 * ECMP_MAX_NEXT_HOPS + 2)  # leaf uplinks = ECMP_MAX + 1
    narrow = fat_tree(1024, 2 * ECMP_MAX_NEXT_HOPS)
    assert wide.leaf_up_ports == ECMP_MAX_NEXT_HOPS + 1
    assert ecmp_findings(valid.technologies["roce_v2"], wide)[0].code == "FP314"
    assert not ecmp_findings(valid.technologies["roce_v2"], narrow)
    ib = scenario(8).technologies["infiniband"]
    assert not ecmp_findings(ib, wide)


def test_port_mode_at_nic_speed_else_slowest_faster_mode() -> None:
    exact = design_fabric(scenario(1024, "roce_v2", switch="sn5600"), "roce_v2")
    assert (exact.radix, exact.port_speed_gbps) == (128, 400)
    assert "FP310" not in codes(exact)
    slow = design_fabric(
        scenario(1024, "roce_v2", switch="sn5600", speed=100, nic={"speed_gbps": 100}), "roce_v2"
    )
    assert (slow.radix, slow.port_speed_gbps) == (256, 200)
    assert codes(slow)["FP310"] == "info"
    assert slow.links and dict((g.name, g.speed_gbps) for g in slow.link_groups) == {
        "node_leaf": 100,
        "leaf_spine": 200,
    }


def _cable(cable_id: str, speed: float, reach: float) -> CableSpec:
    zero = Figure(value=0.0, basis="estimate")
    return CableSpec(
        id=cable_id,
        name=cable_id,
        source="test",
        date="2024",
        cable_kind="optic",
        speed_gbps=speed,
        max_reach_m=reach,
        power_w=zero,
        ns_per_m=Figure(value=5.0, basis="standard"),
    )


def _price(item: str, usd: float) -> PriceEntry:
    return PriceEntry(item=item, price_usd=usd, basis="estimate")


def test_cable_is_the_cheapest_at_link_speed_that_reaches() -> None:
    base = scenario(256, switch="qm9700", topology="fat_tree", management_ports=0)
    cables = (
        _cable("short", 400, 3),
        _cable("dear", 400, 100),
        _cable("cheap", 400, 100),
        _cable("unpriced", 400, 100),
        _cable("fast", 800, 100),
    )
    prices = {
        "short": _price("short", 50),
        "dear": _price("dear", 900),
        "cheap": _price("cheap", 500),
        "fast": _price("fast", 10),
    }
    valid = base.model_copy(update={"cables": cables, "prices": prices})
    design = design_fabric(valid, "infiniband")
    chosen = {g.name: g.cable_id for g in design.link_groups}
    assert chosen == {"node_leaf": "short", "leaf_spine": "cheap"}
    assert {line.item for line in design.bom if line.kind == "cable"} == {"short", "cheap"}


def test_missing_cable_is_an_error_finding_not_a_crash() -> None:
    base = scenario(256, switch="qm9700", topology="fat_tree", management_ports=0)
    valid = base.model_copy(update={"cables": (_cable("short", 400, 3),)})
    design = design_fabric(valid, "infiniband")
    assert codes(design)["FP316"] == "error"
    leaf_spine = next(g for g in design.link_groups if g.name == "leaf_spine")
    assert leaf_spine.cable_id == NO_CABLE_ID and leaf_spine.count == 256
    assert NO_CABLE_ID not in {line.item for line in design.bom}
    faster = base.model_copy(
        update={"cables": (_cable("short", 400, 3), _cable("long800", 800, 100))}
    )
    assert codes(design_fabric(faster, "infiniband"))["FP318"] == "info"


def test_bom_counts_switches_nics_cables_and_management() -> None:
    design = design_fabric(scenario(1016, switch="qm9700"), "infiniband")
    bom = {(line.kind, line.role): line.quantity for line in design.bom}
    assert bom[("switch", "leaf switches")] == 32
    assert bom[("switch", "spine switches")] == 16
    assert bom[("nic", "host NICs")] == 127 * 8
    assert bom[("appliance", "subnet manager appliances")] == 4
    cables = sum(q for (kind, _), q in bom.items() if kind == "cable")
    assert cables == 1016 + 4 + 1024
    ethernet = design_fabric(scenario(1016, "roce_v2", switch="sn5600"), "roce_v2")
    assert ethernet.management_ports == 0
    assert not [line for line in ethernet.bom if line.kind == "appliance"]


def test_management_ports_that_fill_a_full_unit_add_switches_and_say_so() -> None:
    # 32 nodes fill one SU: reserving the 4 UFM ports takes a second SU of 8 rail leaves.
    full = design_fabric(scenario(256, switch="qm9700", management_ports=4), "infiniband")
    assert codes(full)["FP317"] == "warning"
    assert full.switches["leaf"] == 16
    # auto does not grow the fabric for them: the SM runs elsewhere, and the design says so.
    auto = design_fabric(scenario(256, switch="qm9700"), "infiniband")
    assert codes(auto)["FP319"] == "info"
    assert auto.switches["leaf"] == 8 and auto.management_ports == 0
    spare = design_fabric(scenario(248, switch="qm9700"), "infiniband")  # 31 nodes + UFM
    assert "FP317" not in codes(spare) and spare.switches["leaf"] == 8


def test_headroom_counts_nodes_until_the_two_tier_limit() -> None:
    design = design_fabric(scenario(1016, switch="qm9700"), "infiniband")
    # One spine set of 64-port spines reaches 64 leaves = 8 SUs of 32 slots = 256 slots;
    # 127 nodes + 1 UFM slot are taken, so 128 more 8-GPU nodes fit.
    assert design.headroom_gpus == 128 * 8
    assert design.max_endpoints == (127 + 128) * 8


def test_per_rail_spine_groups_record_the_nvlink_assumption() -> None:
    design = design_fabric(scenario(4096, switch="qm9700", management_ports=0), "infiniband")
    assert (design.tiers, design.spine_groups) == (2, 8)
    assert codes(design)["FP311"] == "info"
    # Cross-rail traffic moves to the destination's rail over NVLink first, so a cut through
    # the nodes still crosses each rail's non-blocking fabric: endpoints x speed / 2.
    assert design.bisection_tbps == pytest.approx(4096 * 0.4 / 2)


def test_small_fat_tree_is_one_switch_and_unused_ports_are_reported() -> None:
    design = design_fabric(
        scenario(16, switch="qm9700", topology="fat_tree", management_ports=0), "infiniband"
    )
    assert (design.tiers, design.worst_case_switch_hops, design.switches["leaf"]) == (1, 1, 1)
    assert codes(design)["FP315"] == "warning"  # 48 of 64 ports unused
    assert design.headroom_gpus == 48


def _appliances(design: FabricDesign) -> int:
    return sum(line.quantity for line in design.bom if line.kind == "appliance")


def test_a_one_switch_subnet_runs_the_embedded_sm_and_buys_no_ufm() -> None:
    # 4 nodes x 8 rails = 32 HCAs + 1 QM9700 = 33 nodes, far within the 2,048 of the MLNX-OS
    # embedded SM; one switch has one path, so adaptive routing has nothing to lose.
    one = design_fabric(scenario(32, switch="qm9700"), "infiniband")
    assert one.switches["leaf"] == 1 and one.management_ports == 0
    assert _appliances(one) == 0
    assert codes(one)["FP862"] == "info"
    message = next(f.message for f in one.findings if f.code == "FP862")
    assert "33 nodes" in message and "single point of failure" in message
    # Asking for the RA's UFM ports buys the appliances as before.
    asked = design_fabric(scenario(32, switch="qm9700", management_ports=4), "infiniband")
    assert _appliances(asked) == 4 and "FP862" not in codes(asked)


def test_the_embedded_sm_needs_static_routing_across_tiers_and_no_sharp() -> None:
    # 1,016 GPUs on 2 tiers: the MLNX-OS embedded SM has no adaptive routing, the IB default.
    adaptive = design_fabric(scenario(1016, switch="qm9700"), "infiniband")
    assert adaptive.tiers == 2 and _appliances(adaptive) == 4
    static = scenario(1016, switch="qm9700", routing={"infiniband": "static"})
    pair = design_fabric(static, "infiniband")
    assert _appliances(pair) == 0
    # 127 nodes x 8 = 1,016 HCAs + 32 leaves + 16 spines = 1,064 <= 2,048: master and standby.
    message = next(f.message for f in pair.findings if f.code == "FP862")
    assert "1,064 nodes" in message and "master and standby" in message
    sharp = scenario(32, switch="qm9700", sharp="on")
    assert _appliances(design_fabric(sharp, "infiniband")) == 4


def test_past_the_embedded_sm_limit_ufm_is_bought() -> None:
    # 2,040 GPUs static: 2,040 HCAs + 64 leaves + 32 spines > 2,048 nodes.
    big = scenario(2040, switch="qm9700", routing={"infiniband": "static"})
    design = design_fabric(big, "infiniband")
    assert "FP862" not in codes(design) and _appliances(design) == 4
