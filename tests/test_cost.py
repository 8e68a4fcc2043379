"""Cost and TCO of a hand-built tiny leaf-spine: every figure derived here from prices and specs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.cost import (
    DEFAULT_SUPPORT_FRACTION_PER_YEAR,
    UNPRICED_WARNING,
    fabric_cost,
)
from fabricplan.analytic.operations_effort import (
    CONGESTION_CONTROL_EFFORT,
    EXPERIENCE_EFFORT_FACTOR,
    HARDWARE_LIFECYCLE_EFFORT,
    LINK_FLOW_CONTROL_EFFORT,
    SCOPE_EFFORT,
    effort_records,
    engineer_years_per_year,
)
from fabricplan.errors import ModelError
from fabricplan.model.fabric import BomLine, FabricDesign, LinkGroup, TierDesign
from fabricplan.model.hardware import fibre_cord_usd
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec

PRICES = {"qm9700": 20_000.0, "sn5600": 25_000.0, "cx7": 1_000.0, "dac-400g": 100.0}
PRICES["optic-400g-dr4"] = 1_000.0
SPEC: dict[str, Any] = {
    "cluster": {"gpus": 16, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {"technologies": ["infiniband", "roce_v2"]},
    "cost": {
        "prices": PRICES,
        "years": 4,
        "energy_usd_per_kwh": 0.1,
        "pue": 1.5,
        "engineer_usd_per_year": 150_000.0,
        "support_fraction_per_year": 0.08,
    },
}
SWITCH = {"infiniband": "qm9700", "roce_v2": "sn5600"}


def _valid(**cost: Any) -> ValidScenario:
    spec = {**SPEC, "cost": {**SPEC["cost"], **cost}}
    return parse_spec(spec)


def tiny_leaf_spine(
    technology: TechnologyName = "infiniband", leaves: int = 2, spines: int = 1
) -> FabricDesign:
    """2 nodes x 8 NICs = 16 host ports on ``leaves`` leaves, 16 uplinks to ``spines`` spines."""
    switch = SWITCH[technology]
    return FabricDesign(
        technology=technology,
        topology="fat_tree",
        switch_id=switch,
        port_speed_gbps=400,
        radix=64,
        tiers=2,
        planes=1,
        spine_groups=1,
        nodes=2,
        gpus=16,
        endpoints=16,
        hosts_per_leaf=16 // leaves,
        leaves_per_pod=leaves,
        rail_aligned=False,
        tier_designs=(
            TierDesign(
                name="leaf",
                switches=leaves,
                radix=64,
                down_ports=8,
                up_ports=8,
                ports_used=16,
                ports_free=48,
            ),
            TierDesign(
                name="spine",
                switches=spines,
                radix=64,
                down_ports=16,
                up_ports=0,
                ports_used=16,
                ports_free=48,
            ),
        ),
        link_groups=(
            LinkGroup(name="node_leaf", count=16, speed_gbps=400, reach_m=2, cable_id="dac-400g"),
            LinkGroup(
                name="leaf_spine", count=16, speed_gbps=400, reach_m=30, cable_id="optic-400g-dr4"
            ),
        ),
        bisection_tbps=16 * 400 / 2 / 1000,  # half the host ports at 400 Gb/s
        worst_case_switch_hops=3,
        max_endpoints=2048,
        headroom_gpus=2032,
        bom=(
            BomLine(item=switch, kind="switch", quantity=leaves + spines, role="switches"),
            BomLine(item="cx7", kind="nic", quantity=16, role="host NICs"),
            BomLine(item="dac-400g", kind="cable", quantity=16, role="node-leaf"),
            BomLine(item="optic-400g-dr4", kind="cable", quantity=16, role="leaf-spine"),
        ),
    )


def test_capex_is_quantity_times_price_per_line() -> None:
    cost = fabric_cost(_valid(), tiny_leaf_spine())
    assert [line.total_usd for line in cost.lines] == [3 * 20_000, 16 * 1_000, 16 * 100, 16 * 1_000]
    assert cost.capex_usd == 60_000 + 16_000 + 1_600 + 16_000
    assert {line.basis for line in cost.lines} == {"measured"}  # given in the spec


def test_power_is_switches_nics_and_links_from_the_specs() -> None:
    valid = _valid()
    cost = fabric_cost(valid, tiny_leaf_spine())
    switch_w = 3 * valid.switches["infiniband"].power_w.value
    nic_w = 16 * valid.nics["infiniband"].power_w.value
    cable_w = {c.id: c.power_w.value for c in valid.cables}
    link_w = 16 * cable_w["dac-400g"] + 16 * cable_w["optic-400g-dr4"]
    assert cost.power_lines == pytest.approx({"switch": switch_w, "nic": nic_w, "cable": link_w})
    assert cost.power_w == pytest.approx(switch_w + nic_w + link_w)


def test_energy_is_power_times_pue_hours_and_price() -> None:
    cost = fabric_cost(_valid(), tiny_leaf_spine())
    assert cost.energy_usd_per_year == pytest.approx(cost.power_w / 1000 * 1.5 * 8760 * 0.1)


def test_tco_is_capex_plus_years_of_opex_and_per_unit_figures_follow() -> None:
    valid = _valid()
    design = tiny_leaf_spine()
    cost = fabric_cost(valid, design)
    assert cost.support_usd_per_year == pytest.approx(0.08 * cost.capex_usd)
    assert cost.operations_usd_per_year == pytest.approx(
        engineer_years_per_year(valid, design) * 150_000
    )
    opex = cost.energy_usd_per_year + cost.support_usd_per_year + cost.operations_usd_per_year
    assert cost.opex_usd_per_year == pytest.approx(opex)
    assert cost.years == 4
    assert cost.tco_usd == pytest.approx(cost.capex_usd + 4 * opex)
    assert cost.per_gpu_usd == pytest.approx(cost.tco_usd / 16)
    assert cost.capex_per_bisection_tbps_usd == pytest.approx(cost.capex_usd / 3.2)


def test_support_comes_from_spec_then_price_book_then_default() -> None:
    design = tiny_leaf_spine()
    from_book = _valid(support_fraction_per_year=None, prices={**PRICES, "support-infiniband": 0.2})
    assert fabric_cost(from_book, design).support_usd_per_year == pytest.approx(0.2 * 93_600)
    bare = _valid(support_fraction_per_year=None)
    bare = bare.model_copy(
        update={"prices": {k: v for k, v in bare.prices.items() if not k.startswith("support-")}}
    )
    cost = fabric_cost(bare, design)
    assert cost.support_usd_per_year == pytest.approx(DEFAULT_SUPPORT_FRACTION_PER_YEAR * 93_600)
    assert any("default estimate" in a for a in cost.assumptions)


def test_a_support_item_above_one_is_refused() -> None:
    valid = _valid(support_fraction_per_year=None, prices={**PRICES, "support-infiniband": 15.0})
    with pytest.raises(ModelError) as err:
        fabric_cost(valid, tiny_leaf_spine())
    assert err.value.code == "FP560"
    assert "support-infiniband" in str(err.value)


def test_an_unpriced_item_counts_zero_and_is_said_loudly() -> None:
    design = tiny_leaf_spine()
    design = design.model_copy(
        update={
            "bom": (
                *design.bom,
                BomLine(item="ufm-x", kind="appliance", quantity=2, role="UFM appliances"),
            )
        }
    )
    cost = fabric_cost(_valid(), design)
    line = cost.lines[-1]
    assert (line.item, line.total_usd, line.basis) == ("ufm-x", 0.0, "unpriced")
    assert cost.capex_usd == 93_600
    warnings = [a for a in cost.assumptions if a.startswith(UNPRICED_WARNING)]
    assert len(warnings) == 1 and "cost.prices.ufm-x" in warnings[0]
    assert any("ufm-x" in a and "0 W" in a for a in cost.assumptions)


def test_every_assumption_names_the_key_that_overrides_it() -> None:
    text = "\n".join(fabric_cost(_valid(), tiny_leaf_spine()).assumptions)
    for key in (
        "cost.prices.qm9700",
        "cost.pue",
        "cost.energy_usd_per_kwh",
        "cost.years",
        "cost.support_fraction_per_year",
        "cost.engineer_usd_per_year",
        "cost.operations_engineer_years.infiniband",
    ):
        assert key in text


def test_zero_bisection_gives_zero_per_tbps_with_a_note() -> None:
    design = tiny_leaf_spine().model_copy(update={"bisection_tbps": 0.0})
    cost = fabric_cost(_valid(), design)
    assert cost.capex_per_bisection_tbps_usd == 0.0
    assert any("bisection is 0" in a for a in cost.assumptions)


def test_a_design_of_a_technology_outside_the_scenario_is_refused() -> None:
    valid = parse_spec({**SPEC, "fabric": {"technologies": ["roce_v2"]}})
    with pytest.raises(ModelError) as err:
        fabric_cost(valid, tiny_leaf_spine("infiniband"))
    assert err.value.code == "FP561"


# --- operations effort -------------------------------------------------------------------------


def _task_years(task: Any, switches: int) -> float:
    return float(task.base_engineer_years_per_year + task.engineer_years_per_switch_year * switches)


def test_effort_is_the_mechanisms_tasks_scaled_by_switch_count() -> None:
    valid = _valid()
    for technology, (flow, cc, scope) in {
        "infiniband": ("credit", "ib_cc", "ib_subnet"),
        "roce_v2": ("pfc", "dcqcn", "routed_ip"),
    }.items():
        design = tiny_leaf_spine(technology, leaves=40, spines=20)  # type: ignore[arg-type]
        expected = sum(
            _task_years(task, 60)
            for task in (
                HARDWARE_LIFECYCLE_EFFORT,
                LINK_FLOW_CONTROL_EFFORT[flow],
                CONGESTION_CONTROL_EFFORT[cc],
                SCOPE_EFFORT[scope],
            )
        )
        assert engineer_years_per_year(valid, design) == pytest.approx(expected)


def test_a_pfc_fabric_carries_a_per_hop_lossless_task_and_a_credit_fabric_does_not() -> None:
    valid = _valid()
    roce = effort_records(valid, tiny_leaf_spine("roce_v2"))
    ib = effort_records(valid, tiny_leaf_spine("infiniband"))
    assert any("PFC" in r.task and r.engineer_years_per_year > 0 for r in roce)
    credit = [r for r in ib if "credits" in r.task]
    assert len(credit) == 1 and credit[0].engineer_years_per_year == 0.0


def test_more_switches_cost_more_effort_at_the_per_switch_rate() -> None:
    valid = _valid()
    small = engineer_years_per_year(valid, tiny_leaf_spine("roce_v2", 2, 1))
    large = engineer_years_per_year(valid, tiny_leaf_spine("roce_v2", 102, 1))
    per_switch = sum(
        t.engineer_years_per_switch_year
        for t in (
            HARDWARE_LIFECYCLE_EFFORT,
            LINK_FLOW_CONTROL_EFFORT["pfc"],
            CONGESTION_CONTROL_EFFORT["dcqcn"],
            SCOPE_EFFORT["routed_ip"],
        )
    )
    assert large - small == pytest.approx(100 * per_switch)


def test_team_experience_of_the_switch_family_scales_effort() -> None:
    design = tiny_leaf_spine("roce_v2")
    by_level = {
        level: engineer_years_per_year(
            parse_spec({**SPEC, "team": {"ethernet_dcb": level, "infiniband": "none"}}), design
        )
        for level in ("none", "some", "expert")
    }
    assert by_level["none"] > by_level["some"] > by_level["expert"]
    ratio = EXPERIENCE_EFFORT_FACTOR["none"] / EXPERIENCE_EFFORT_FACTOR["some"]
    assert by_level["none"] / by_level["some"] == pytest.approx(ratio)


def test_the_spec_can_replace_the_effort_estimate() -> None:
    valid = _valid(operations_engineer_years={"infiniband": 3.0})
    cost = fabric_cost(valid, tiny_leaf_spine())
    assert cost.operations_usd_per_year == 3.0 * 150_000
    assert any("cost.operations_engineer_years.infiniband" in a for a in cost.assumptions)


@settings(max_examples=30, deadline=None)
@given(
    price=st.floats(0, 5),
    pue=st.floats(1, 3),
    years=st.integers(1, 20),
    switch_usd=st.floats(0, 1e6),
)
def test_tco_identity_holds_for_any_settings(
    price: float, pue: float, years: int, switch_usd: float
) -> None:
    valid = _valid(
        energy_usd_per_kwh=price, pue=pue, years=years, prices={**PRICES, "qm9700": switch_usd}
    )
    cost = fabric_cost(valid, tiny_leaf_spine())
    assert cost.capex_usd == pytest.approx(3 * switch_usd + 33_600)
    assert cost.tco_usd == pytest.approx(cost.capex_usd + years * cost.opex_usd_per_year)
    assert cost.energy_usd_per_year == pytest.approx(cost.power_w / 1000 * pue * 8760 * price)


def test_cost_of_a_designed_fabric_is_consistent() -> None:
    from fabricplan.topology.designer import design_fabric

    valid = parse_spec({"cluster": {"gpus": 1024}})
    for technology in valid.spec.fabric.technologies:
        design = design_fabric(valid, technology)
        cost = fabric_cost(valid, design)
        assert cost.capex_usd == pytest.approx(
            sum(
                b.quantity
                * (
                    fibre_cord_usd(valid.prices, b.item, b.length_m or 0.0)
                    if b.kind == "fibre"
                    else valid.prices[b.item].price_usd
                )
                for b in design.bom
                if b.item in valid.prices
            )
        )
        switches = sum(t.switches for t in design.tier_designs)
        assert cost.power_lines["switch"] >= switches * min(
            s.power_w.value for s in valid.switches.values()
        )
        assert cost.tco_usd > cost.capex_usd > 0
