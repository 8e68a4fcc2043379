"""SerDes lanes at both ends of every link: a class is used at an end only where its electrical
lanes run at the device's lane rate, or through its gearbox module at a NIC (issue #10)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fabricplan.analytic.cost import fabric_cost
from fabricplan.catalog.loader import Catalog, check_lanes, load_catalog
from fabricplan.errors import CatalogError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import CableSpec, Figure, NicSpec, SwitchSpec
from fabricplan.model.scenario import ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.cable import cable_for
from fabricplan.topology.designer import NO_CABLE_ID, design_fabric

CATALOG = load_catalog()
DR2 = CATALOG.get_typed("optic-400g-dr2", CableSpec)


def th6_design(nic: str | None = None, gpus: int = 64) -> tuple[ValidScenario, FabricDesign]:
    """One th6-128x800g at 256 x 400G (2 x 200G lanes a port), host links of 60 m (optical)."""
    cluster: dict[str, Any] = {"gpus": gpus}
    if nic is not None:
        cluster["nic"] = nic
    valid = parse_spec(
        {
            "cluster": cluster,
            "fabric": {
                "technologies": ["roce_v2"],
                "switch": {"roce_v2": "th6-128x800g"},
                "planes": 1,
                "cable_reach": {"node_leaf_m": 60, "leaf_spine_m": 60, "spine_core_m": 60},
            },
        }
    )
    return valid, design_fabric(valid, "roce_v2")


def quantity(design: FabricDesign, item: str) -> int:
    return sum(line.quantity for line in design.bom if line.item == item)


def test_the_dr2_class_states_each_ends_lanes_from_its_optics() -> None:
    # 400GBASE-DR2 is 2 x 200G optical lanes: the 1.6T switch module and the plain NIC module
    # have 200G electrical lanes; the gearbox variant 4 x 100G (400G / 4 lanes).
    assert DR2.quad_module is not None and DR2.quad_module.lane_gbps == 1600 / 8
    assert DR2.host_module is not None and DR2.host_module.lane_gbps == 400 / 2
    assert DR2.host_gearbox_module is not None
    assert DR2.host_gearbox_module.lane_gbps == 400 / 4


def test_a_connectx7_on_a_th6_fabric_at_400g_gets_the_gearbox_module_priced() -> None:
    valid, design = th6_design()
    nic = valid.nics["roce_v2"]
    assert nic.id == "cx7" and nic.lane_gbps is not None and nic.lane_gbps.value == 100
    links = design.links["node_leaf"]
    assert links == 64
    assert quantity(design, "osfp-400g-dr2-gearbox-nic") == links
    assert quantity(design, "osfp-400g-dr2-nic") == 0
    cost = fabric_cost(valid, design)
    line = next(c for c in cost.lines if c.item == "osfp-400g-dr2-gearbox-nic")
    price = valid.prices["osfp-400g-dr2-gearbox-nic"].price_usd
    assert line.quantity == links and line.total_usd == links * price > 0
    assert line.basis == "estimate"


def test_a_connectx8_with_200g_lanes_gets_the_plain_dr2_module() -> None:
    valid, design = th6_design("cx8-eth")
    nic = valid.nics["roce_v2"]
    assert nic.lane_gbps is not None and nic.lane_gbps.value == 200
    assert quantity(design, "osfp-400g-dr2-nic") == design.links["node_leaf"] == 64
    assert quantity(design, "osfp-400g-dr2-gearbox-nic") == 0


def test_the_chooser_takes_no_passive_cable_between_unlike_lanes() -> None:
    cables, prices = tuple(CATALOG.of_kind(CableSpec)), CATALOG.prices
    # 2 m from a four-link th6 cage: a DAC when both ends run 100G lanes (lanes not stated
    # at the switch), none of copper when the switch runs 200G and the NIC 100G.
    assert cable_for(cables, prices, 400, 2, True, 4, None, frozenset({100})).cable_kind == "dac"  # type: ignore[union-attr]
    mixed = cable_for(cables, prices, 400, 2, True, 4, frozenset({200}), frozenset({100}))
    assert mixed is not None and mixed.id == "optic-400g-dr2"
    # 200G switch lanes to a NIC of 50G lanes: DR2 has no module of those lanes.
    assert cable_for(cables, prices, 400, 60, True, 4, frozenset({200}), frozenset({50})) is None


def test_a_design_no_class_serves_says_so_in_one_finding() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 64, "nic": "cx6", "nic_speed_gbps": 200},
            "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "th6-128x800g"}},
        }
    )
    design = design_fabric(valid, "roce_v2")
    found = [f for f in design.findings if f.code == "FP1234"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "\n" not in found[0].message
    assert "th6-128x800g lanes 200G, cx6 lanes 50G" in found[0].message


def test_a_nic_whose_lanes_no_class_serves_is_one_error_line() -> None:
    cx7 = CATALOG.get_typed("cx7", NicSpec)
    odd = cx7.model_copy(update={"id": "cx7-odd", "lane_gbps": Figure(value=75, basis="estimate")})
    with pytest.raises(CatalogError) as err:
        check_lanes(Catalog([*CATALOG, odd], CATALOG.prices))
    text = str(err.value)
    assert text.startswith("nics.yaml cx7-odd.lane_gbps:") and text.endswith("[FP1235]")
    assert "\n" not in text


def test_a_gearbox_of_the_plain_modules_lanes_is_one_error_line() -> None:
    assert DR2.host_module is not None
    same = DR2.host_module.model_copy(update={"item": "same-lanes"})
    bad = DR2.model_copy(update={"id": "optic-bad", "host_gearbox_module": same})
    with pytest.raises(CatalogError) as err:
        check_lanes(Catalog([*CATALOG, bad], CATALOG.prices))
    assert str(err.value).endswith("[FP1236]") and "optic-bad.host_gearbox_module" in str(err.value)


def test_every_switch_nic_module_and_whole_cable_states_its_lanes() -> None:
    for device in (*CATALOG.of_kind(SwitchSpec), *CATALOG.of_kind(NicSpec)):
        lane = device.lane_gbps
        assert lane is not None, device.id
        assert lane.source or lane.note, f"{device.id}: say where the lane rate comes from"
        assert lane.basis != "estimate" or len(lane.note) > 20, device.id
    for cable in CATALOG.of_kind(CableSpec):
        if cable.composed:
            for module in (*cable.switch_modules, *cable.host_modules):
                assert module.lane_gbps is not None, (cable.id, module.item)
        else:
            assert cable.lane_gbps, cable.id


def _lanes(valid: ValidScenario, design: FabricDesign) -> tuple[set[float], set[float]]:
    """The electrical lane rates the design's switch ports and NIC ports can run."""
    switch = CATALOG.get_typed(design.switch_id, SwitchSpec)
    nic = valid.nics[design.technology]
    assert switch.lane_gbps is not None and nic.lane_gbps is not None
    nic_lanes = {min(nic.lane_gbps.value, valid.spec.cluster.nic_speed_gbps)}
    return {min(switch.lane_gbps.value, design.port_speed_gbps)}, nic_lanes | set(
        nic.slower_lanes_gbps
    )


def _optics_of_every_link_match(valid: ValidScenario, design: FabricDesign) -> None:
    """Every composed optical link of the BOM: the modules ordered for its link group from its
    class link with each other over the fibre (same optical lanes x rate, fibre, cords)."""
    by_id = {c.id: c for c in valid.cables}
    for group in {r.group for r in design.cable_runs}:
        role = group.replace("_", "-") + " links"
        ordered = {
            line.item for line in design.bom if line.kind == "transceiver" and role in line.role
        }
        for cable_id in {r.cable_id for r in design.cable_runs if r.group == group}:
            cable = by_id.get(cable_id)
            if cable is None or not cable.composed:
                continue
            used = [m for m in (*cable.switch_modules, *cable.host_modules) if m.item in ordered]
            assert used, (group, cable_id)
            for module in used:
                assert module.optics is not None and used[0].optics is not None
                assert module.optics.links_with(used[0].optics), (
                    cable_id,
                    used[0].item,
                    module.item,
                )


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    gpus=st.sampled_from((64, 256, 1024, 4096)),
    technology=st.sampled_from(("infiniband", "roce_v2", "spectrum_x", "uec")),
    switch=st.sampled_from((None, "th6-128x800g", "ufispace-s9321-64e", "sn5600", "sn4700")),
    nic=st.sampled_from((None, "thor-ultra")),
    reach_m=st.sampled_from((None, 60.0)),
)
# The pairings the optics check caught (issue #10 point 7): an 800G 100G-lane switch (DR8, 8 x
# 100G) to an 800G NIC of 100G lanes, and a QSFP-DD 50G-lane switch (SR8, 8 x 50G) to a
# ConnectX-7 (SR4, 4 x 100G), both at 30-60 m where optics are the cheapest that reach.
@example(gpus=256, technology="roce_v2", switch="sn5600", nic="thor-ultra", reach_m=60.0)
@example(gpus=256, technology="roce_v2", switch="sn4700", nic=None, reach_m=40.0)
def test_every_link_of_a_designed_bom_has_matching_lanes_at_both_ends(
    gpus: int, technology: str, switch: str | None, nic: str | None, reach_m: float | None
) -> None:
    fabric: dict[str, Any] = {"technologies": [technology], "planes": 1}
    cluster: dict[str, Any] = {"gpus": gpus}
    ethernet = technology in ("roce_v2", "uec")
    if switch is not None and ethernet:
        fabric["switch"] = {technology: switch}
    if nic is not None and ethernet:
        cluster.update(nic=nic, nic_speed_gbps=CATALOG.get_typed(nic, NicSpec).speed_gbps)
    if reach_m is not None:
        fabric["cable_reach"] = {"node_leaf_m": reach_m, "leaf_spine_m": reach_m}
    valid = parse_spec({"cluster": cluster, "fabric": fabric})
    design = design_fabric(valid, technology)  # type: ignore[arg-type]
    _optics_of_every_link_match(valid, design)
    switch_lanes, nic_lanes = _lanes(valid, design)
    assert not [f for f in design.findings if f.code == "FP1234"]
    by_id = {c.id: c for c in valid.cables}
    switch_items = {m.item: m for c in valid.cables for m in c.switch_modules}
    host_items = {m.item: m for c in valid.cables for m in c.host_modules}
    for line in design.bom:
        if line.kind == "cable":
            cable = by_id[line.item]
            host = "node-leaf" in line.role or "management" in line.role
            common = set(cable.lane_gbps) & switch_lanes & (nic_lanes if host else switch_lanes)
            assert common, (line.item, switch_lanes, nic_lanes)
        elif line.kind == "transceiver" and line.item in host_items:
            assert host_items[line.item].lane_gbps in nic_lanes, line.item
        elif line.kind == "transceiver":
            assert switch_items[line.item].lane_gbps in switch_lanes, line.item


def test_a_connectx8_at_400gbe_runs_100g_lanes_on_a_spectrum4() -> None:
    # The Spectrum-X reference: ConnectX-8 SuperNICs (200G SerDes) on SN5600 (100G only) run
    # 400GbE as 4 x 100G, so short host links are copper of 100G lanes (ACC at 5 m), not unpriced.
    valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["spectrum_x"]}})
    design = design_fabric(valid, "spectrum_x")
    assert (design.switch_id, valid.nics["spectrum_x"].id) == ("sn5600", "cx8-eth")
    assert not [f for f in design.findings if f.code == "FP1234"]
    host = {r.cable_id for r in design.cable_runs if r.group == "node_leaf"}
    assert host and NO_CABLE_ID not in host
    assert "acc-400g" in host, host


@pytest.mark.parametrize(("technology", "switch"), [("infiniband", "qm8700"), ("roce_v2", None)])
def test_the_search_keeps_a_design_whose_every_link_is_lane_matched(
    technology: str, switch: str | None
) -> None:
    # HDR ConnectX-6 (4 x 50G) at 200G: a Quantum-2 at NDR200 (2 x 100G) or a Tomahawk-5 at
    # 200G has no cable of both ends' lanes, so those links are unpriced (FP1234) and such a
    # design must not win on its too-low capex: the search keeps one of 50G switch lanes.
    from fabricplan.evaluate import search_design

    valid = parse_spec(
        {
            "cluster": {"gpus": 256, "gpu": "a100", "nic": "cx6", "nic_speed_gbps": 200},
            "fabric": {"technologies": [technology]},
        }
    )
    _, design, _ = search_design(valid, technology)  # type: ignore[arg-type]
    assert not [f for f in design.findings if f.code in ("FP316", "FP1234")]
    lane = CATALOG.get_typed(design.switch_id, SwitchSpec).lane_gbps
    assert lane is not None and lane.value == 50
    if switch is not None:
        assert design.switch_id == switch
