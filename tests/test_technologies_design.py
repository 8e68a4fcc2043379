"""The 2026 technologies made real in spec -> design -> price: switch and NIC eligibility, RoCEv1
confined to one L2 domain, the two-stage scheduled (DDC) fabric, Ultra Ethernet's trimming
switches, and their bills of materials. Expected counts come from port arithmetic."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.cost import fabric_cost
from fabricplan.catalog.loader import load_catalog
from fabricplan.errors import DesignError, FabricPlanError, SpecError
from fabricplan.evaluate import evaluate_feasible, search_design
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.scale_limit import (
    MLAG_PEER_LINK_PORTS,
    l2_domain_host_ports,
)
from fabricplan.topology.scheduled_fabric import scheduled_fabric

CATALOG = load_catalog()

OPERATIONS_ENGINEER_YEARS = 1.0
"""Given staff per year, so that pricing here tests the bill of materials and not the
operations-effort tables (whose tasks for the new mechanisms belong to the analytic level)."""


def scenario(
    gpus: int,
    tech: TechnologyName,
    *,
    speed: float = 400,
    gpu: str = "b200",
    switch: str | None = None,
    nic: str = "auto",
    **fabric: Any,
) -> ValidScenario:
    spec: dict[str, Any] = {
        "cluster": {"gpus": gpus, "gpu": gpu, "nic_speed_gbps": speed, "nic": nic},
        "fabric": {"technologies": [tech], **fabric},
        "cost": {"operations_engineer_years": {tech: OPERATIONS_ENGINEER_YEARS}},
    }
    if switch is not None:
        spec["fabric"]["switch"] = {tech: switch}
    return parse_spec(spec)


def bom(design: FabricDesign) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in design.bom:
        out[line.item] = out.get(line.item, 0) + line.quantity
    return out


def codes(design: FabricDesign) -> dict[str, str]:
    return {f.code: f.severity for f in design.findings}


def switch(switch_id: str) -> SwitchSpec:
    return CATALOG.get_typed(switch_id, SwitchSpec, "test")


# ---------------------------------------------------------------- eligibility


def test_spectrum_x_takes_only_spectrum_4_switches_and_supernics() -> None:
    valid = scenario(1024, "spectrum_x")
    assert {s.asic for s in valid.switch_candidates["spectrum_x"]} == {"Spectrum-4"}
    assert valid.nics["spectrum_x"].id in {"bf3", "cx8-eth"}


def test_a_pinned_ineligible_switch_is_one_line_with_a_fix() -> None:
    with pytest.raises(SpecError) as err:
        scenario(1024, "spectrum_x", switch="ufispace-s9321-64e")
    assert err.value.code == "FP620"
    text = str(err.value)
    assert "Tomahawk 5" in text and "sn5600" in text and "\n" not in text


def test_a_fabric_element_or_ddc_leaf_is_never_an_ordinary_leaf() -> None:
    valid = scenario(1024, "roce_v2")
    ids = {s.id for s in valid.switch_candidates["roce_v2"]}
    assert "arista-7720r4-128pe" not in ids and "arista-7700r4c-38pe" not in ids
    for pinned in ("arista-7720r4-128pe", "arista-7700r4c-38pe"):
        with pytest.raises(SpecError) as err:
            scenario(1024, "roce_v2", switch=pinned)
        assert err.value.code == "FP620"
    with pytest.raises(SpecError) as err:
        scenario(1024, "ddc", switch="sn5600")
    assert err.value.code == "FP620" and "fabric ports" in str(err.value)


def test_a_pinned_ineligible_nic_is_refused_and_auto_finds_none_at_800g() -> None:
    with pytest.raises(SpecError) as err:
        scenario(1024, "spectrum_x", nic="cx7")
    assert err.value.code == "FP621" and "bf3" in str(err.value)
    # Both Spectrum-X SuperNICs run Ethernet at 400G (ConnectX-8 as 2 x 400GbE).
    with pytest.raises(SpecError) as err:
        scenario(1024, "spectrum_x", speed=800)
    assert err.value.code == "FP623" and "400" in str(err.value)


def test_uec_auto_prefers_switches_that_trim_and_a_pinned_one_that_does_not_is_flagged() -> None:
    valid = scenario(1024, "uec")
    tried = valid.switch_candidates["uec"]
    assert tried and all(s.packet_trimming for s in tried)
    assert valid.nics["uec"].id == "pollara-400"
    plain = scenario(64, "uec", switch="ufispace-s9321-64e")
    assert codes(design_fabric(plain, "uec"))["FP630"] == "warning"
    assert "FP630" not in codes(design_fabric(scenario(64, "uec"), "uec"))


# ---------------------------------------------------------------- RoCEv1: one L2 domain


def test_one_l2_domain_holds_one_switch_or_one_mlag_pair_of_spines() -> None:
    # 128-port leaves at 1:1: 64 host ports and 64 uplinks, 32 to each spine of the pair; each
    # spine has 128 - 2 peer-link ports, so 2 x 126 / 64 = 3 leaves, 192 host ports.
    assert MLAG_PEER_LINK_PORTS == 2
    assert l2_domain_host_ports(128) == 3 * 64
    # 3:1 leaves (96 down, 32 up): 2 x 126 // 32 = 7 leaves, 672 host ports.
    assert l2_domain_host_ports(128, 3.0) == 7 * 96
    # A 256-port switch alone beats 64-port MLAG leaves (3 x 32 = 96).
    assert l2_domain_host_ports(64) == 96


def test_roce_v1_across_two_l2_domains_is_refused_with_a_clear_error() -> None:
    # 193 host ports: one more than the 192 an MLAG pair of 128-port spines holds.
    fits = scenario(192, "roce_v1", gpu="h100", switch="sn5600", topology="fat_tree")
    design = design_fabric(fits, "roce_v1")
    assert (design.switches["leaf"], design.switches["spine"]) == (3, 2)
    assert codes(design)["FP313"] == "warning"
    too_many = scenario(200, "roce_v1", gpu="h100", switch="sn5600", topology="fat_tree")
    with pytest.raises(DesignError) as err:
        design_fabric(too_many, "roce_v1")
    assert err.value.code == "FP625"
    text = str(err.value)
    assert "192" in text and "2 L2 domains" in text and "roce_v2" in text and "\n" not in text


def test_roce_v1_beyond_a_domain_is_infeasible_in_the_search_with_its_reason() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 4096, "gpu": "b200"},
            "fabric": {"technologies": ["roce_v2", "roce_v1"]},
        }
    )
    with pytest.raises(DesignError) as err:
        search_design(valid, "roce_v1", backend="fake")
    assert err.value.code == "FP625"
    assert "\n" not in str(err.value) and str(err.value).count("not routable") == 1
    # the whole reason and its fix fit the message: nothing of it is cut to "... N characters"
    assert "characters" not in str(err.value) and "L2 domains" in str(err.value), str(err.value)
    evals, infeasible = evaluate_feasible(valid, backend="fake")
    assert [e.technology for e in evals] == ["roce_v2"]
    assert infeasible[0].technology == "roce_v1" and infeasible[0].code == "FP625"
    assert "not routable" in infeasible[0].message


def test_roce_v1_planes_are_separate_domains_that_each_fit() -> None:
    # 8 planes of 1 rail: 256 host ports each on a 256-port (400G) switch: one switch a plane.
    valid = scenario(2048, "roce_v1", switch="th6-128x800g", planes=8)
    design = design_fabric(valid, "roce_v1")
    assert design.planes == 8 and design.tiers == 1 and design.switches["leaf"] == 8


# ---------------------------------------------------------------- DDC: two-stage scheduled fabric


def test_ddc_counts_follow_from_the_leaf_and_fabric_element_ports() -> None:
    # 4,096 B200 GPUs at 400G, rail-optimized: a 7700R4C leaf at 400G has 36 host ports and 40
    # fabric ports, so a scalable unit is 36 nodes; 512 nodes -> 15 units x 8 rails = 120 leaves.
    # Fabric elements of 256 x 400G: F divides 40 and F >= 120 x 40 / 256 = 18.75 -> F = 20,
    # each with 2 links from every leaf (240 of its 256 ports).
    valid = scenario(4096, "ddc", topology="rail_optimized", planes=1)
    design = design_fabric(valid, "ddc")
    units = math.ceil(512 / 36)
    assert design.switches == {"leaf": units * 8, "spine": 20, "core": 0}
    spine = design.tier("spine")
    assert spine is not None and spine.radix == 256 and spine.down_ports == 240
    leaf = design.tier("leaf")
    assert leaf is not None and (leaf.down_ports, leaf.up_ports, leaf.radix) == (36, 40, 76)
    assert design.links["leaf_spine"] == 120 * 40
    assert bom(design)["arista-7700r4c-38pe"] == 120
    assert bom(design)["arista-7720r4-128pe"] == 20
    assert codes(design)["FP628"] == "info"  # 40:36 speed-up covers the 16 B per 256 B cell


def test_ddc_two_stages_hold_element_ports_times_leaf_host_ports() -> None:
    # 800G: 18 host, 20 fabric ports, 128-port elements: at most 128 leaves, 2,304 host ports.
    assert scheduled_fabric(128, 18, 18, 20, 128, "fat_tree").spines == 20
    with pytest.raises(DesignError) as err:
        scheduled_fabric(129, 18, 18, 20, 128, "fat_tree")
    assert err.value.code == "FP626"
    # 2,048 ports at 800G: 114 leaves; F >= 114 x 20 / 128 = 17.8 -> 20 elements, 1 link each.
    plane = scheduled_fabric(256, 8, 18, 20, 128, "fat_tree")
    assert (plane.leaves, plane.spines, plane.spine_down_ports) == (114, 20, 114)


def test_ddc_search_splits_into_planes_when_one_stage_is_too_small() -> None:
    # 4,096 NICs at 800G need 228 leaves per plane: two planes of 114 leaves each fit.
    valid = scenario(4096, "ddc", speed=800)
    _, design, _ = search_design(valid, "ddc", backend="fake")
    assert design.planes >= 2 and design.switches["spine"] > 0
    assert any("FP626" in a.lost_because for a in design.alternatives)


def test_ddc_fabric_elements_are_priced_and_powered() -> None:
    valid = scenario(1024, "ddc", topology="fat_tree", planes=1)
    design = design_fabric(valid, "ddc")
    cost = fabric_cost(valid, design)
    element = valid.fabric_elements["ddc"]
    lines = {line.item: line for line in cost.lines}
    assert lines[element.id].unit_price_usd == valid.prices[element.id].price_usd
    assert any(f"power {element.id}: {element.power_w.value:g} W" in a for a in cost.assumptions)


def test_ddc_pinned_three_tiers_is_refused() -> None:
    with pytest.raises(DesignError) as err:
        design_fabric(scenario(1024, "ddc", tiers=3, topology="fat_tree", planes=1), "ddc")
    assert err.value.code == "FP626"


# -------------------------------------------------------- port modes and the 800G generation


def test_port_modes_serve_a_lower_nic_speed() -> None:
    # Tomahawk 6 at 400G: its 256 x 400G mode, four links per 1.6T cage.
    th6 = switch("th6-128x800g")
    mode = th6.port_mode_for(400)
    assert mode is not None and mode.ports == 256 and th6.links_per_cage(mode) == 4
    valid = scenario(8192, "roce_v2", switch="th6-128x800g", topology="fat_tree", planes=1)
    design = design_fabric(valid, "roce_v2")
    # 8,192 NICs on 256-port leaves at 1:1: 64 leaves of 128 down, 128 up -> 32 spines.
    assert design.radix == 256 and design.switches == {"leaf": 64, "spine": 32, "core": 0}
    # The Jericho3-AI leaf at 400G: 36 host ports; its fabric ports follow at 400G.
    leaf = switch("arista-7700r4c-38pe")
    assert leaf.port_mode_for(400) is not None and leaf.fabric_port_mode_for(400) is not None


def test_q3200_is_one_of_two_36_port_xdr_switches() -> None:
    q3200 = switch("q3200")
    assert q3200.port_modes[0].ports == 36 and q3200.port_modes[0].speed_gbps == 800
    # 36-port leaves at 1:1: 18 down, 18 up; 576 NICs -> 32 leaves, 18 spines (divisor of 18
    # with 32 x 18 / 36 = 16 -> 18), as the B300-XDR rule of the fat-tree builder.
    valid = scenario(576, "infiniband", gpu="b300", speed=800, switch="q3200", topology="fat_tree")
    design = design_fabric(valid, "infiniband", None)
    assert design.switches["leaf"] == 32 and design.switches["spine"] == 18


def test_uec_header_is_the_sum_of_the_ue_1_0_headers() -> None:
    uec = CATALOG.get_typed("uec", TechnologySpec, "test")
    preamble, ethernet, ipv4, udp, fcs, gap = 8, 14, 20, 8, 4, 12
    pds_rud_request = 2 + 2 + 4 + 2 + 2  # prologue+flags, clear PSN offset, PSN, SPDCID, DPDCID
    ses_standard = 12 + 8 + 4 + 8 + 8 + 4  # common, offset, initiator, key, data, length
    expected = preamble + ethernet + ipv4 + udp + pds_rud_request + ses_standard + fcs + gap
    assert uec.header_bytes.value == expected == 122
    assert uec.header_bytes.basis == "standard"


# ---------------------------------------------------------------- compare end to end

SIX: list[TechnologyName] = ["infiniband", "roce_v2", "spectrum_x", "ddc", "uec", "roce_v1"]


def test_compare_designs_prices_and_ranks_all_six_technologies() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 4096, "gpu": "b200", "nic_speed_gbps": 400},
            "fabric": {"technologies": SIX},
            "cost": {"operations_engineer_years": dict.fromkeys(SIX, OPERATIONS_ENGINEER_YEARS)},
        }
    )
    try:
        evals, infeasible = evaluate_feasible(valid, backend="analytic")
    except FabricPlanError as exc:
        if exc.code == "FP538":
            pytest.skip(f"the analytic level does not model this mechanism yet: {exc}")
        raise
    done = {e.technology for e in evals} | {i.technology for i in infeasible}
    assert done == set(SIX)
    # RoCEv1: even 8 planes leave 512 NICs a plane, above the 384 one L2 domain of 256-port
    # switches holds at 1:1 (one switch, or 2 x 254 // 128 = 3 MLAG leaves of 128).
    assert [i.technology for i in infeasible] == ["roce_v1"]
    for evaluation in evals:
        assert evaluation.cost.capex_usd > 0
        assert evaluation.performance.step is not None


def test_a_two_port_nic_is_bought_per_card() -> None:
    # ConnectX-8 in Ethernet mode is 2 x 400GbE on one card: 8 rails a node take 4 cards.
    valid = scenario(1024, "spectrum_x", nic="cx8-eth", topology="fat_tree", planes=1)
    design = design_fabric(valid, "spectrum_x")
    assert bom(design)["cx8-eth"] == 128 * 4
    assert design.endpoints == 1024


def test_a_scheduled_fabric_exports_its_bom_and_refuses_pfc_config() -> None:
    # export of DDC: the BOM and cut sheet work (tests/test_export_*.py check them); the PFC/ECN
    # baseline is one clear refusal (a credit-scheduled fabric has no PFC to configure).
    from fabricplan.errors import InputFileError
    from fabricplan.export.formats import ExportOptions, export_files

    valid = scenario(256, "ddc")
    assert "bom.csv" in export_files(valid, "ddc", "bom", ExportOptions())
    with pytest.raises(InputFileError) as err:
        export_files(valid, "ddc", "roce-config", ExportOptions())
    assert err.value.code == "FP1203" and "credit" in str(err.value)


# ---------------------------------------------------------------- properties


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    nodes=st.integers(1, 600),
    rails=st.sampled_from([1, 2, 4, 8]),
    host=st.sampled_from([18, 36]),
    fabric=st.sampled_from([20, 40]),
    element=st.sampled_from([128, 256]),
    topology=st.sampled_from(["fat_tree", "rail_optimized"]),
)
def test_a_scheduled_fabric_sprays_every_leaf_over_every_element_within_its_ports(
    nodes: int, rails: int, host: int, fabric: int, element: int, topology: Any
) -> None:
    try:
        plane = scheduled_fabric(nodes, rails, host, fabric, element, topology)
    except DesignError as exc:
        assert exc.code == "FP626"
        assert math.ceil(nodes * rails / host) > element or topology == "rail_optimized"
        return
    assert plane.leaves * host >= nodes * rails  # every NIC has a host port
    if plane.tiers == 1:
        assert plane.leaves == 1 and plane.spines == 0
        return
    assert fabric % plane.spines == 0  # u/F links from every leaf to every element
    assert plane.spine_down_ports == plane.leaves * fabric // plane.spines <= element
    assert plane.spine_down_links == plane.leaves * fabric
    # The fewest elements that reach: one fewer divisor of u would overfill an element.
    fewer = [f for f in range(1, plane.spines) if fabric % f == 0]
    assert all(plane.leaves * fabric // f > element for f in fewer)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(radix=st.integers(8, 512), ratio=st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_one_l2_domain_holds_at_least_one_switch_and_never_more_than_an_mlag_pair(
    radix: int, ratio: float
) -> None:
    hosts = l2_domain_host_ports(radix, ratio)
    assert hosts >= radix  # one switch is always one domain
    assert hosts <= max(radix, 2 * (radix - MLAG_PEER_LINK_PORTS) * ratio)  # two spines' worth


def test_every_required_asic_and_nic_of_a_technology_is_in_the_catalog() -> None:
    switches = CATALOG.of_kind(SwitchSpec)
    nic_ids = {item.id for item in CATALOG if item.kind == "nic"}
    for tech in CATALOG.of_kind(TechnologySpec):
        for asic in tech.switch_asics:
            assert any(s.asic == asic and s.role == "switch" for s in switches), (tech.id, asic)
        for asic in tech.fabric_element_asics:
            assert any(s.asic == asic and s.role == "fabric_element" for s in switches), asic
        assert set(tech.nics) <= nic_ids, tech.id
        if tech.packet_trimming:
            assert any(s.packet_trimming for s in switches), f"{tech.id}: no switch trims"
