"""Operations effort and configuration risk follow each technology's mechanisms.

A scheduled fabric has no PFC/ECN to tune and no lossless risk; Spectrum-X adds the adaptive
routing, SuperNIC and telemetry-CC settings on top of RoCE's lossless ones; UEC needs its
profiles (trimming) and lint's trimming rule; RoCEv1 needs its L2 domain and PCP-based PFC.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.analytic.config_risk import (
    DETECTION_HOURS,
    FIX_ENGINEER_HOURS,
    MISCONFIG_INCIDENTS_PER_YEAR,
    config_risk,
    risk_classes,
)
from fabricplan.analytic.operations_effort import (
    CONGESTION_CONTROL_EFFORT,
    ETHERNET_ADAPTIVE_ROUTING_EFFORT,
    EXPERIENCE_EFFORT_FACTOR,
    LINK_FLOW_CONTROL_EFFORT,
    PCP_PFC_EFFORT,
    SHARP_AGGREGATION_EFFORT,
    TRIMMING_EFFORT,
    effort_records,
    engineer_years_per_year,
    operations_tasks,
)
from fabricplan.lint.operations import assess_operations
from fabrics import cluster_scenario, designed_leaf_spine

TECHS: dict[str, Any] = {
    "fabric": {"technologies": ["roce_v2", "roce_v1", "spectrum_x", "ddc", "uec", "infiniband"]}
}


def _tasks(tech: str) -> tuple[str, ...]:
    valid = cluster_scenario(1024, **TECHS)
    return assess_operations(valid, designed_leaf_spine(valid, tech)).tasks  # type: ignore[arg-type]


def test_a_scheduled_fabric_asks_for_no_pfc_or_ecn_tuning() -> None:
    tasks = _tasks("ddc")
    assert not any(t.startswith(("L01", "L04", "L05", "L06", "L11")) for t in tasks)
    assert any(t.startswith("scheduled fabric") for t in tasks)
    valid = cluster_scenario(1024, **TECHS)
    efforts = operations_tasks(valid, designed_leaf_spine(valid, "ddc"))
    assert LINK_FLOW_CONTROL_EFFORT["scheduled"] in efforts
    assert CONGESTION_CONTROL_EFFORT["voq_scheduled"].base_engineer_years_per_year == 0.0
    assert risk_classes(valid.technologies["ddc"]) == ()
    assert config_risk(valid.technologies["ddc"], "none", 5, 1000, 0.2, 100.0).gpu_hours == 0.0


def test_spectrum_x_adds_its_settings_on_switch_and_supernic_to_roce() -> None:
    roce = set(_tasks("roce_v2"))
    spectrum = _tasks("spectrum_x")
    assert {t.split(":")[0] for t in spectrum} >= {"L01", "L20", "L21", "L22"}
    assert not {t.split(":")[0] for t in roce} & {"L20", "L21", "L22"}
    valid = cluster_scenario(1024, **TECHS)
    efforts = operations_tasks(valid, designed_leaf_spine(valid, "spectrum_x"))
    assert ETHERNET_ADAPTIVE_ROUTING_EFFORT in efforts
    assert CONGESTION_CONTROL_EFFORT["spectrum_x_cc"] in efforts


def test_spectrum_x_risk_has_two_classes_and_roce_one() -> None:
    valid = cluster_scenario(1024, **TECHS)
    spectrum = valid.technologies["spectrum_x"]
    assert risk_classes(spectrum) == ("lossless", "adaptive_routing")
    roce = config_risk(valid.technologies["roce_v2"], "some", 5, 1000, 0.05, 100.0)
    both = config_risk(spectrum, "some", 5, 1000, 0.05, 100.0, adaptive_off_step_slowdown=0.10)
    rate = MISCONFIG_INCIDENTS_PER_YEAR["some"] * 5
    assert roce.incidents == rate and both.incidents == 2 * rate
    assert both.gpu_hours == pytest.approx(rate * DETECTION_HOURS * 1000 * (0.05 + 0.10))
    assert both.staff_usd == pytest.approx(2 * rate * FIX_ENGINEER_HOURS * 100.0)
    unpriced = config_risk(spectrum, "some", 5, 1000, 0.05, 100.0)
    assert unpriced.gpu_hours == roce.gpu_hours and "no AR-off slowdown given" in unpriced.basis


def test_uec_needs_its_profiles_and_prices_their_staff_time_only() -> None:
    tasks = _tasks("uec")
    assert any(t.startswith("L23") for t in tasks)
    assert any(t.startswith("UEC profiles") for t in tasks)
    valid = cluster_scenario(1024, **TECHS)
    uec = valid.technologies["uec"]
    assert TRIMMING_EFFORT in operations_tasks(valid, designed_leaf_spine(valid, "uec"))
    risk = config_risk(uec, "some", 5, 1000, 0.5, 100.0)
    assert risk_classes(uec) == ("transport_profile",)
    assert risk.gpu_hours == 0.0 and risk.staff_usd > 0 and "not priced" in risk.basis


def test_roce_v1_needs_its_l2_domain_and_pcp_based_pfc() -> None:
    tasks = _tasks("roce_v1")
    assert any("spanning tree or MLAG" in t for t in tasks)
    assert any(t.startswith("PFC by the VLAN tag's PCP") for t in tasks)
    valid = cluster_scenario(1024, **TECHS)
    assert PCP_PFC_EFFORT in operations_tasks(valid, designed_leaf_spine(valid, "roce_v1"))


def test_spectrum_x_prices_the_adaptive_routing_fallback_to_ecmp() -> None:
    from fabricplan.evaluate import evaluate_one
    from fabricplan.spec import parse_spec

    spec = {
        "cluster": {"gpus": 1024},
        "fabric": {
            "technologies": ["spectrum_x", "roce_v2"],
            "switch": {"spectrum_x": "sn5600", "roce_v2": "sn5600"},
            "topology": "fat_tree",
        },
    }
    valid = parse_spec(spec)
    spectrum = evaluate_one(valid, "spectrum_x")
    roce = evaluate_one(valid, "roce_v2")
    basis = spectrum.cost.config_risk_basis
    assert "adaptive routing" in basis and "no AR-off slowdown given" not in basis
    # Two classes, each at the team's rate: twice RoCEv2's staff time to find and fix them.
    assert spectrum.cost.config_risk_staff_usd == pytest.approx(2 * roce.cost.config_risk_staff_usd)


@pytest.mark.parametrize(("sharp", "kept"), [("auto", False), ("off", False), ("on", True)])
def test_only_a_fabric_that_runs_sharp_keeps_its_aggregation_manager(
    sharp: str, kept: bool
) -> None:
    # auto is what NCCL does without the SHARP plugin and aggregation manager (CollNet off):
    # no one runs them, so the report does not list them among what the team must keep.
    valid = cluster_scenario(1024, fabric={"technologies": ["infiniband"], "sharp": sharp})
    ops = assess_operations(valid, designed_leaf_spine(valid, "infiniband"))
    assert any("SHARP aggregation manager" in t for t in ops.tasks) is kept


@pytest.mark.parametrize(("sharp", "charged"), [("auto", False), ("off", False), ("on", True)])
def test_the_sharp_aggregation_manager_is_charged_staff_time_only_when_sharp_runs(
    sharp: str, charged: bool
) -> None:
    # Issue 10: the task listed above also costs hours: its fixed share plus its per-switch
    # share of this design's switches, at the team's experience factor ("some": 1.0).
    valid = cluster_scenario(1024, fabric={"technologies": ["infiniband"], "sharp": sharp})
    design = designed_leaf_spine(valid, "infiniband")
    off = cluster_scenario(1024, fabric={"technologies": ["infiniband"], "sharp": "off"})
    assert (SHARP_AGGREGATION_EFFORT in operations_tasks(valid, design)) is charged
    switches = sum(tier.switches for tier in design.tier_designs)
    expected = EXPERIENCE_EFFORT_FACTOR["some"] * (
        SHARP_AGGREGATION_EFFORT.base_engineer_years_per_year
        + SHARP_AGGREGATION_EFFORT.engineer_years_per_switch_year * switches
    )
    added = engineer_years_per_year(valid, design) - engineer_years_per_year(off, design)
    assert added == pytest.approx(expected if charged else 0.0)
    sharp_hours = [r.hours_per_year for r in effort_records(valid, design) if "SHARP" in r.task]
    assert sharp_hours == ([pytest.approx(expected * 1800.0)] if charged else [])


def test_sharp_on_charges_nothing_where_the_switches_cannot_reduce() -> None:
    valid = cluster_scenario(1024, fabric={"technologies": ["roce_v2"], "sharp": "on"})
    assert SHARP_AGGREGATION_EFFORT not in operations_tasks(
        valid, designed_leaf_spine(valid, "roce_v2")
    )


@pytest.mark.parametrize(("switch", "reorders"), [("sn5600", True), ("ufispace-s9321-64e", False)])
def test_nic_reorder_work_only_behind_per_packet_adaptive_routing(
    switch: str, reorders: bool
) -> None:
    """Adaptive RoCEv2 on Spectrum-4 sprays packets (per-packet adaptive routing): every NIC
    must place out of order (L20, L21). Tomahawk DLB moves flowlets, which arrive in order: the
    same setting asks no reordering work of the team."""
    from fabricplan.spec import parse_spec
    from fabricplan.topology.designer import design_fabric

    valid = parse_spec(
        {
            "cluster": {"gpus": 1024},
            "fabric": {
                "technologies": ["roce_v2"],
                "switch": {"roce_v2": switch},
                "routing": {"roce_v2": "adaptive"},
            },
        }
    )
    tasks = {
        t.split(":")[0] for t in assess_operations(valid, design_fabric(valid, "roce_v2")).tasks
    }
    assert ({"L20", "L21"} <= tasks) is reorders
    assert not ({"L20", "L21"} & tasks) or reorders


@pytest.mark.parametrize(("switch", "charged"), [("sn5600", True), ("ufispace-s9321-64e", False)])
def test_adaptive_routing_staff_time_follows_the_routing_the_fabric_runs(
    switch: str, charged: bool
) -> None:
    """``fabric.routing: {roce_v2: adaptive}`` puts per-packet adaptive routing's staff time on
    a Spectrum-4 fabric; on Tomahawk 5 (flowlet DLB) and with the ECMP default it adds none."""
    from fabricplan.spec import parse_spec
    from fabricplan.topology.designer import design_fabric

    def efforts(routing: dict[str, str]) -> tuple[object, ...]:
        valid = parse_spec(
            {
                "cluster": {"gpus": 1024},
                "fabric": {
                    "technologies": ["roce_v2"],
                    "switch": {"roce_v2": switch},
                    "routing": routing,
                },
            }
        )
        return operations_tasks(valid, design_fabric(valid, "roce_v2"))

    assert (ETHERNET_ADAPTIVE_ROUTING_EFFORT in efforts({"roce_v2": "adaptive"})) is charged
    assert ETHERNET_ADAPTIVE_ROUTING_EFFORT not in efforts({})
