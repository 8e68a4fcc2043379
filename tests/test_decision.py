"""The decision on one economic scale, on hand-made evaluations: expected totals are derived here
from the money terms (capex + years x (energy + support + staff) + GPU time + growth + risk -
worth), and the presets are checked against their definitions (docs/models.md, "The decision")."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fabricplan.analytic.uncertainty import step_band
from fabricplan.errors import FabricPlanError, ModelError
from fabricplan.evaluate import evaluate_feasible, evaluate_one, same_fabric
from fabricplan.model.fabric import BomLine, DesignAlternative, FabricDesign, Finding
from fabricplan.model.results import (
    CostBreakdown,
    CostLine,
    Evaluation,
    GrowthResult,
    GrowthRiskRecord,
    OpsAssessment,
    OptionMoney,
    PerformanceResult,
    StepTimeResult,
)
from fabricplan.model.scenario import PriorityPreset, TechnologyName, ValidScenario
from fabricplan.recommend.decision import (
    decide,
    rank,
    recommend,
    scenario_with_gpus,
    scenario_with_team,
)
from fabricplan.recommend.money import (
    COLLECTIVE_TIME_RELATIVE_BAND,
    money_table,
    network_money_usd,
    option_money,
    repriced,
    step_time_band,
)
from fabricplan.spec import parse_spec
from fabricplan.units import HOURS_PER_YEAR

YEARS = 5
GPUS = 1024
PRICE = 2.0
PRESETS: tuple[PriorityPreset, ...] = (
    "balanced",
    "max_performance",
    "cost_sensitive",
    "ethernet_team",
    "cloud_hybrid",
)


def _valid(priorities: str = "balanced", **extra: Any) -> ValidScenario:
    return parse_spec(
        {
            "cluster": {"gpus": GPUS},
            "fabric": {"technologies": ["infiniband", "roce_v2", "roce_v1"]},
            "priorities": priorities,
            "cost": {"years": YEARS, "prices": {"gpu-hour-h100": PRICE}},
            **extra,
        }
    )


def _evaluation(
    technology: TechnologyName,
    *,
    step_s: float = 1.0,
    compute_s: float = 0.9,
    in_domain_s: float = 0.0,
    capex: float = 10e6,
    energy: float = 0.2e6,
    staff: float = 0.1e6,
    risk_hours: float = 0.0,
    risk_staff: float = 0.0,
    growth: GrowthResult | None = None,
    findings: tuple[Finding, ...] = (),
    vendors: int = 2,
    switches: int = 10,
    switch: str = "sw",
    band: tuple[float, float] | None = None,
) -> Evaluation:
    design = FabricDesign(
        technology=technology,
        topology="fat_tree",
        switch_id=switch,
        port_speed_gbps=400,
        radix=64,
        tiers=2,
        planes=1,
        spine_groups=1,
        nodes=GPUS // 8,
        gpus=GPUS,
        endpoints=GPUS,
        hosts_per_leaf=32,
        leaves_per_pod=32,
        rail_aligned=False,
        tier_designs=(),
        link_groups=(),
        bisection_tbps=GPUS * 0.2,
        worst_case_switch_hops=3,
        max_endpoints=GPUS,
        headroom_gpus=0,
        findings=findings,
        bom=(BomLine(item=switch, kind="switch", quantity=switches, role="switches"),),
    )
    support = 0.1 * capex
    cost = CostBreakdown(
        capex_usd=capex,
        lines=(
            CostLine(
                item=switch,
                kind="switch",
                quantity=switches,
                unit_price_usd=capex / switches,
                total_usd=capex,
                basis="estimate",
            ),
        ),
        power_w=1.0,
        energy_usd_per_year=energy,
        support_usd_per_year=support,
        operations_usd_per_year=staff,
        opex_usd_per_year=energy + support + staff,
        years=YEARS,
        tco_usd=capex + YEARS * (energy + support + staff),
        per_gpu_usd=0.0,
        capex_per_bisection_tbps_usd=0.0,
        config_risk_gpu_hours=risk_hours,
        config_risk_staff_usd=risk_staff,
    )
    exposed = step_s - compute_s
    step = StepTimeResult(
        compute_s=compute_s,
        comm_total_s=exposed,
        comm_exposed_s=exposed,
        step_s=step_s,
        comm_by_dimension_s={"dp": exposed},
        exposed_fraction=exposed / step_s,
        gpu_hours_lost_per_year=exposed / step_s * GPUS * HOURS_PER_YEAR,
        comm_exposed_in_domain_s=in_domain_s,
    )
    if band is not None:  # the analytic path: validation ratios on all of the communication
        step = step_band(step, *band)
    performance = PerformanceResult(
        backend="fake", technology=technology, base_latency_us=1.0, step=step
    )
    ops = OpsAssessment(tasks=(), engineer_years_per_year=0.5, vendors=vendors)
    return Evaluation(
        technology=technology,
        design=design,
        cost=cost,
        performance=performance,
        ops=ops,
        growth=growth,
    )


def _winner(evals: list[Evaluation], valid: ValidScenario) -> str:
    return rank(evals, money_table(evals, valid), valid)[0].technology


def _idle_usd(step_s: float, compute_s: float, in_domain_s: float = 0.0) -> float:
    fabric = step_s - compute_s - in_domain_s
    return fabric / step_s * GPUS * HOURS_PER_YEAR * YEARS * PRICE


def test_the_total_is_the_sum_of_the_money_terms() -> None:
    valid = _valid()
    e = _evaluation("roce_v2", step_s=1.1, capex=8e6, risk_hours=1000.0, risk_staff=5000.0)
    m = option_money(e, valid)
    expected = 8e6 + YEARS * (0.2e6 + 0.8e6 + 0.1e6) + _idle_usd(1.1, 0.9) + 1000 * PRICE + 5000
    assert m.total_usd == pytest.approx(expected)
    assert m.gpu_time_usd == pytest.approx(_idle_usd(1.1, 0.9))
    assert m.config_risk_usd == pytest.approx(1000 * PRICE + 5000)


def test_nvlink_only_time_is_shown_but_not_counted() -> None:
    valid = _valid()
    plain = option_money(_evaluation("roce_v2", step_s=1.2), valid)
    nvlink = option_money(_evaluation("roce_v2", step_s=1.2, in_domain_s=0.2), valid)
    # 0.3 s exposed, 0.2 s of it on NVLink: only 0.1 s counts.
    assert nvlink.gpu_time_usd == pytest.approx(_idle_usd(1.2, 0.9, 0.2))
    assert nvlink.gpu_time_usd < plain.gpu_time_usd
    assert nvlink.gpu_time_in_domain_usd == pytest.approx(
        0.2 / 1.2 * GPUS * HOURS_PER_YEAR * YEARS * PRICE
    )


def test_balanced_picks_the_least_total_money() -> None:
    valid = _valid()
    # roce_v1 has the cheapest network but idles the GPUs more; roce_v2 is cheapest in total.
    evals = [
        _evaluation("infiniband", step_s=1.00, capex=12e6),
        _evaluation("roce_v2", step_s=1.01, capex=10e6),
        _evaluation("roce_v1", step_s=1.10, capex=9e6),
    ]
    totals = {m.technology: m.total_usd for m in money_table(evals, valid)}
    assert min(totals, key=lambda t: totals[t]) == "roce_v2"
    assert _winner(evals, valid) == "roce_v2"


def test_max_performance_picks_the_shortest_step_outside_the_band() -> None:
    valid = _valid("max_performance")
    evals = [_evaluation("infiniband", step_s=1.0, capex=50e6), _evaluation("roce_v2", step_s=1.2)]
    assert _winner(evals, valid) == "infiniband"


def test_max_performance_within_the_band_takes_the_cheaper() -> None:
    valid = _valid("max_performance")
    # 0.1 s and 0.101 s of fabric time: bands of +-15 % overlap.
    evals = [
        _evaluation("infiniband", step_s=1.0, capex=50e6),
        _evaluation("roce_v2", step_s=1.001),
    ]
    low, high = step_time_band(evals[0].performance)
    assert high - low == pytest.approx(2 * COLLECTIVE_TIME_RELATIVE_BAND * 0.1)
    assert _winner(evals, valid) == "roce_v2"


def test_max_performance_combines_the_two_bands_as_independent_errors() -> None:
    # Fabric time 0.1 s and 0.125 s, +-15 % each: the step bands overlap (1.006 s <= 1.015 s),
    # but the band of the 25 ms difference is 0.15 x sqrt(0.125^2 + 0.1^2) = 24.0 ms.
    valid = _valid("max_performance")
    evals = [
        _evaluation("infiniband", step_s=1.0, capex=50e6),
        _evaluation("roce_v2", step_s=1.025),
    ]
    ranked = rank(evals, money_table(evals, valid), valid)
    assert ranked[0].technology == "infiniband"
    gap = ranked[1].versus_fastest
    assert gap is not None and gap.versus == "infiniband" and not gap.inside
    assert gap.difference_s == pytest.approx(0.025)
    assert gap.band_s == pytest.approx(COLLECTIVE_TIME_RELATIVE_BAND * (0.125**2 + 0.1**2) ** 0.5)
    assert ranked[0].versus_fastest is None


def test_max_performance_leaves_nvlink_only_time_out_of_the_tie() -> None:
    # 0.3 s of TP on NVLink in both steps, 0.1 s and 0.13 s of fabric time, ratios 0.9-1.1:
    # the step bands (all 0.4 s / 0.43 s of communication) overlap; the band of the difference
    # of the fabric times alone is sqrt((0.13 - 0.13/1.1)^2 + (0.1/0.9 - 0.1)^2) = 16.1 ms.
    valid = _valid("max_performance")
    evals = [
        _evaluation(
            "infiniband", step_s=1.2, compute_s=0.8, in_domain_s=0.3, capex=50e6, band=(0.9, 1.1)
        ),
        _evaluation("roce_v2", step_s=1.23, compute_s=0.8, in_domain_s=0.3, band=(0.9, 1.1)),
    ]
    moneys = money_table(evals, valid)
    assert moneys[1].step_low_s <= moneys[0].step_high_s  # what the old test called a tie
    ranked = rank(evals, moneys, valid)
    assert ranked[0].technology == "infiniband"
    gap = ranked[1].versus_fastest
    assert gap is not None and not gap.inside
    expected = ((0.13 - 0.13 / 1.1) ** 2 + (0.1 / 0.9 - 0.1) ** 2) ** 0.5
    assert gap.band_s == pytest.approx(expected)


def test_cost_sensitive_takes_the_least_money_that_meets_the_floor() -> None:
    valid = _valid("cost_sensitive")
    evals = [
        _evaluation("infiniband", step_s=1.0, capex=12e6),
        _evaluation("roce_v2", step_s=1.05, capex=10e6),  # within 10 %
        _evaluation("roce_v1", step_s=1.2, capex=5e6),  # cheapest, below the floor
    ]
    ranked = rank(evals, money_table(evals, valid), valid)
    assert [r.technology for r in ranked] == ["roce_v2", "infiniband", "roce_v1"]
    assert ranked[-1].unmet and "performance_floor" in ranked[-1].unmet[0]
    assert ranked[0].objective == network_money_usd(ranked[0].money)


def test_cloud_hybrid_needs_a_technology_the_clouds_offer() -> None:
    valid = _valid("cloud_hybrid")
    evals = [_evaluation("roce_v1", capex=1e6), _evaluation("infiniband", capex=20e6)]
    ranked = rank(evals, money_table(evals, valid), valid)
    assert ranked[0].technology == "infiniband"
    assert "public-cloud availability 'none'" in ranked[1].unmet[0]


def test_ethernet_team_takes_the_team_as_new_to_infiniband_unless_said() -> None:
    assert _valid("ethernet_team").spec.team.infiniband == "none"
    said = _valid("ethernet_team", team={"infiniband": "expert"})
    assert said.spec.team.infiniband == "expert"


def test_user_constraints_and_worth() -> None:
    valid = _valid(decision={"require": {"min_vendors": 3}, "worth_usd": {"roce_v1": 1e5}})
    evals = [
        _evaluation("infiniband", vendors=1, capex=1e6),
        _evaluation("roce_v1", vendors=4, capex=1.5e6),
    ]
    moneys = money_table(evals, valid)
    assert moneys[1].total_usd == pytest.approx(option_money(evals[1], _valid()).total_usd - 1e5)
    ranked = rank(evals, moneys, valid)
    assert ranked[0].technology == "roce_v1"
    assert ranked[0].money.worth_usd == 1e5
    assert "min_vendors" in ranked[1].unmet[0]
    rec = decide(evals, valid)
    assert any("constraints cost" in r for r in rec.reasons)


def test_growth_is_money_and_unreachable_growth_is_a_constraint() -> None:
    valid = _valid()
    grow = GrowthResult(target_gpus=4096, reachable=True, added_capex_usd=5e6)
    cannot = GrowthResult(target_gpus=4096, reachable=False, added_capex_usd=None)
    evals = [
        _evaluation("infiniband", capex=9e6, growth=grow),
        _evaluation(
            "roce_v2",
            capex=10e6,
            growth=GrowthResult(target_gpus=4096, reachable=True, added_capex_usd=1e6),
        ),
    ]
    assert _winner(evals, valid) == "roce_v2"  # 9 + 5 > 10 + 1 (with support on capex only)
    evals[1] = evals[1].model_copy(update={"growth": cannot})
    ranked = rank(evals, money_table(evals, valid), valid)
    assert ranked[0].technology == "infiniband"
    assert "cannot grow" in ranked[1].unmet[0]


def test_an_error_finding_is_a_constraint() -> None:
    valid = _valid()
    bad = (Finding(code="LID", severity="error", message="LID space exhausted"),)
    evals = [_evaluation("infiniband", capex=1e6, findings=bad), _evaluation("roce_v2")]
    assert _winner(evals, valid) == "roce_v2"


def test_explicit_weights_are_refused_with_the_way_out() -> None:
    with pytest.raises(FabricPlanError) as caught:
        parse_spec({"cluster": {"gpus": 16}, "priorities": {"performance": 1}})
    assert caught.value.code == "FP101"
    assert "decision.worth_usd" in str(caught.value)


def test_bad_inputs_get_codes() -> None:
    valid = _valid()
    with pytest.raises(ModelError) as none:
        decide([], valid)
    assert none.value.code == "FP570"
    e = _evaluation("roce_v2")
    with pytest.raises(ModelError) as twice:
        decide([e, e], valid)
    assert twice.value.code == "FP572"
    nostep = e.model_copy(update={"performance": e.performance.model_copy(update={"step": None})})
    with pytest.raises(ModelError) as missing:
        decide([nostep, _evaluation("infiniband")], valid)
    assert missing.value.code == "FP571"


def test_one_candidate_ranks_alone_with_no_flips() -> None:
    rec = decide([_evaluation("roce_v2")], _valid())
    assert rec.technology == "roce_v2" and rec.flips == ()


def test_the_gpu_hour_flip_is_where_the_totals_cross() -> None:
    valid = _valid()
    # roce_v2: $3M cheaper network, 0.02 s more fabric time per 1.0 s step (~$1.6M at $2).
    evals = [
        _evaluation("infiniband", step_s=1.0, capex=13e6 / 1.5),
        _evaluation("roce_v2", step_s=1.02, capex=10e6 / 1.5),
    ]
    rec = decide(evals, valid)
    assert rec.technology == "roce_v2"
    flip = next(f for f in rec.flips if f.kind == "gpu_hour")
    assert flip.value is not None and "infiniband ranks first" in flip.description
    moneys = money_table(evals, valid)
    # The totals are equal at the flip, and the winner changes just above it.
    at = [repriced(m, gpu_hour_usd=flip.value) for m in moneys]
    assert at[0].total_usd == pytest.approx(at[1].total_usd, rel=1e-9)
    above = [repriced(m, gpu_hour_usd=flip.value * 1.001) for m in moneys]
    below = [repriced(m, gpu_hour_usd=flip.value * 0.999) for m in moneys]
    assert rank(evals, above, valid)[0].technology == "infiniband"
    assert rank(evals, below, valid)[0].technology == "roce_v2"


def test_the_switch_price_flip_is_where_the_winner_changes() -> None:
    valid = _valid()
    evals = [
        _evaluation("infiniband", capex=12e6, switch="ib-sw"),
        _evaluation("roce_v2", capex=10e6, switch="eth-sw"),
    ]
    rec = decide(evals, valid)
    cut = next(f for f in rec.flips if f.kind == "price" and "costs less" in f.description)
    assert cut.value is not None
    # infiniband's 10 switches at unit u: 10 u (1 + 5 years x 0.1 support) + 5 x 0.3 M against
    # roce_v2's 10 M + 5 x 1.3 M = 16.5 M (same step, same GPU time): equal at u = 1.0 M.
    assert cut.value == pytest.approx(1.0e6, rel=1e-6)


def _with_alternative(evaluation: Evaluation, switch: str, more_usd: float) -> Evaluation:
    """``evaluation`` whose design search also priced, in full, a design of ``switch`` (10 of
    them) costing ``more_usd`` more than the chosen one."""
    alt = DesignAlternative(
        switch=switch,
        topology="fat_tree",
        tiers=2,
        planes=1,
        switches_total=10,
        capex_usd=evaluation.cost.capex_usd,
        tco_usd=evaluation.cost.tco_usd + more_usd,
        money_usd=evaluation.cost.tco_usd + more_usd,
        more_usd=more_usd,
        lost_because="test",
    )
    design = evaluation.design.model_copy(update={"alternatives": (alt,)})
    return evaluation.model_copy(update={"design": design})


@pytest.mark.parametrize(("more_usd", "flips_at"), [(1e6, None), (5e6, 1.2e6)])
def test_a_dearer_winning_switch_flips_only_past_the_next_searched_design(
    more_usd: float, flips_at: float | None
) -> None:
    # roce_v2 wins by 19.5 M - 16.5 M = 3 M; its 10 switches rising by d each cost 10 d x 1.5
    # (5 years of 10 % support): 3 M at d = 200 k. But the search keeps another design without
    # that switch once the switch's rise exceeds that design's extra money: at 1 M extra the
    # winner can never cost more than 17.5 M, so no price flips it; at 5 M the flip stands.
    valid = _valid()
    roce = _with_alternative(
        _evaluation("roce_v2", capex=10e6, switch="eth-sw"), "other-switch", more_usd
    )
    evals = [_evaluation("infiniband", capex=12e6, switch="ib-sw"), roce]
    rec = decide(evals, valid)
    flip = [f for f in rec.flips if f.kind == "price"][1]  # roce_v2's switch (second candidate)
    if flips_at is None:
        assert flip.value is None and "above today's" in flip.description, flip.description
        assert "builds other-switch fat_tree 2T x 1P instead" in flip.description
        assert "above $1,066,667 each" in flip.description  # 1 M / 1.5 / 10 + 1 M
    else:
        assert flip.value == pytest.approx(flips_at, rel=1e-6), flip.description
        assert "costs more than" in flip.description


def test_a_searched_design_kept_at_a_dearer_switch_carries_its_own_growth_money() -> None:
    # As above at 1 M extra, with growth to 2,048 GPUs: every kept design adds 1 M of capex to
    # grow, the searched "other-switch" design 4 M (its own growth). The search keeps it once
    # roce_v2's 10 switches rise by d with 10 d > 1 M / 1.5 (its extra money as capex), at
    # d = 66,667; roce_v2's total is then 16.5 M + 1 M + 4 M = 21.5 M against infiniband's
    # 19.5 M + 1 M = 20.5 M: the winner changes there (with the kept design's 1 M of growth
    # it would be 18.5 M, and no price would flip it).
    valid = _valid(growth={"target_gpus": 2 * GPUS})
    grow = GrowthResult(target_gpus=2 * GPUS, reachable=True, added_capex_usd=1e6)
    roce = _with_alternative(
        _evaluation("roce_v2", capex=10e6, switch="eth-sw", growth=grow), "other-switch", 1e6
    )
    evals = [_evaluation("infiniband", capex=12e6, switch="ib-sw", growth=grow), roce]
    own = GrowthRiskRecord(growth_usd=4e6, config_risk_gpu_hours=0.0, config_risk_staff_usd=0.0)
    rec = decide(evals, valid, searched={"roce_v2": (own,)})
    flip = [f for f in rec.flips if f.kind == "price"][1]  # roce_v2's switch
    assert flip.value == pytest.approx(1e6 + 1e6 / 1.5 / 10, rel=1e-6), flip.description
    assert flip.description.startswith("infiniband ranks first"), flip.description
    assert "builds other-switch fat_tree 2T x 1P instead" in flip.description


def test_a_searched_design_kept_at_a_dearer_gpu_hour_carries_its_own_risk_money() -> None:
    # roce_v2 wins today (as in the GPU-hour test above) and its search also priced a design
    # idling as little as infiniband's for 1 M more: the search keeps it once the GPU-hour is
    # worth more than PRICE + 1 M / (the hours it saves). That design's own configuration risk
    # is 1.5 M GPU-hours (the kept one's 0), so roce_v2's total jumps above infiniband's there;
    # with the kept design's risk roce_v2 would stay first at every price.
    valid = _valid()
    ib = _evaluation("infiniband", step_s=1.0, capex=13e6 / 1.5)
    kept = _evaluation("roce_v2", step_s=1.02, capex=10e6 / 1.5)
    kept_idle, alt_idle = _idle_usd(1.02, 0.9), _idle_usd(1.0, 0.9)
    more = 1e6
    alt_tco = kept.cost.tco_usd + kept_idle + more - alt_idle
    alt = DesignAlternative(
        switch="other-switch",
        topology="fat_tree",
        tiers=2,
        planes=1,
        switches_total=10,
        capex_usd=kept.cost.capex_usd,
        tco_usd=alt_tco,
        gpu_idle_usd=alt_idle,
        money_usd=alt_tco + alt_idle,
        more_usd=more,
        lost_because="test",
    )
    roce = kept.model_copy(
        update={"design": kept.design.model_copy(update={"alternatives": (alt,)})}
    )
    own = GrowthRiskRecord(growth_usd=0.0, config_risk_gpu_hours=1.5e6, config_risk_staff_usd=0.0)
    rec = decide([ib, roce], valid, searched={"roce_v2": (own,)})
    flip = next(f for f in rec.flips if f.kind == "gpu_hour")
    saved_hours = (kept_idle - alt_idle) / PRICE
    assert flip.value == pytest.approx(PRICE + more / saved_hours, rel=1e-6), flip.description
    assert "infiniband ranks first" in flip.description, flip.description
    assert "roce_v2 builds other-switch fat_tree 2T x 1P instead" in flip.description


def test_a_switch_two_candidates_buy_moves_both_totals() -> None:
    # roce_v2 and roce_v1 both buy 10 "eth-sw" (roce_v2 wins by 1 M of capex x 1.5); infiniband
    # is 3 M dearer than roce_v2. A dearer eth-sw raises both Ethernet totals alike, so roce_v1
    # never overtakes roce_v2; infiniband does once 10 d x 1.5 = 3 M: d = 200 k.
    valid = _valid()
    evals = [
        _evaluation("infiniband", capex=12e6, switch="ib-sw"),
        _evaluation("roce_v2", capex=10e6, switch="eth-sw"),
        _evaluation("roce_v1", capex=11e6, switch="eth-sw"),
    ]
    rec = decide(evals, valid)
    shared = [f for f in rec.flips if f.kind == "price" and "eth-sw" in f.description]
    up = next(f for f in shared if "more than" in f.description or "above" in f.description)
    assert up.description.startswith("infiniband ranks first"), up.description
    assert up.value == pytest.approx(1.2e6, rel=1e-6)
    assert "10 bought by roce_v2, 10 bought by roce_v1" in up.description
    down = next(f for f in shared if f is not up)
    assert down.value is None, down.description  # cheaper for both: roce_v1 stays behind


def test_scenario_with_gpus_keeps_what_the_user_wrote() -> None:
    valid = parse_spec({"cluster": {"gpus": 1024}, "workload": {"model": "llama3-405b"}})
    other = scenario_with_gpus(valid, 2048)
    assert other.spec.cluster.gpus == 2048
    assert (
        other.spec.workload.layers is None and "layers" not in other.spec.workload.model_fields_set
    )


def test_recommend_on_designed_fabrics_finds_every_flip_kind() -> None:
    valid = parse_spec({"cluster": {"gpus": 256}})
    from fabricplan.evaluate import evaluate

    rec = recommend(valid, evaluate(valid, backend="fake"), backend="fake")
    assert {f.kind for f in rec.flips} >= {"gpu_hour", "price", "growth", "team", "sharp"}
    assert rec.not_money and "not money" in rec.not_money[0]


# --- properties over many generated clusters -------------------------------------------------

money_st = st.floats(min_value=1e5, max_value=1e8)
step_st = st.floats(min_value=0.95, max_value=2.0)
ratio_low_st = st.floats(min_value=0.6, max_value=0.98)
ratio_high_st = st.floats(min_value=1.02, max_value=1.3)


@settings(max_examples=150, deadline=None)
@given(
    preset=st.sampled_from(PRESETS),
    capex=money_st,
    extra=st.floats(min_value=1.0, max_value=1e7),
    step_s=step_st,
    slower=st.floats(min_value=0.0, max_value=0.5),
    staff=st.floats(min_value=0.0, max_value=1e6),
    more_staff=st.floats(min_value=0.0, max_value=1e6),
    risk=st.floats(min_value=0.0, max_value=1e5),
    first=st.sampled_from(("infiniband", "roce_v2")),
    band=st.one_of(st.none(), st.tuples(ratio_low_st, ratio_high_st)),
    shared=st.floats(min_value=0.0, max_value=2.0),
)
def test_an_option_no_slower_no_dearer_no_harder_wins_under_every_preset(
    preset: PriorityPreset,
    capex: float,
    extra: float,
    step_s: float,
    slower: float,
    staff: float,
    more_staff: float,
    risk: float,
    first: TechnologyName,
    band: tuple[float, float] | None,
    shared: float,
) -> None:
    valid = _valid(preset)
    other: TechnologyName = "roce_v2" if first == "infiniband" else "infiniband"
    best = _evaluation(
        first,
        step_s=step_s + shared,
        in_domain_s=shared,
        capex=capex,
        staff=staff,
        risk_hours=risk,
        band=band,
    )
    worse = _evaluation(
        other,
        step_s=step_s + slower + shared,
        in_domain_s=shared,
        capex=capex + extra,
        staff=staff + more_staff,
        risk_hours=risk + more_staff,
        band=band,
    )
    for order in ([best, worse], [worse, best]):
        assert _winner(order, valid) == first


@settings(max_examples=150, deadline=None)
@given(
    preset=st.sampled_from(("balanced", "max_performance", "ethernet_team", "cloud_hybrid")),
    capex_a=money_st,
    capex_b=money_st,
    step_a=step_st,
    step_b=step_st,
    price_low=st.floats(min_value=0.0, max_value=10.0),
    rise=st.floats(min_value=0.0, max_value=50.0),
)
def test_raising_the_gpu_hour_value_never_moves_the_answer_to_the_slower_option(
    preset: PriorityPreset,
    capex_a: float,
    capex_b: float,
    step_a: float,
    step_b: float,
    price_low: float,
    rise: float,
) -> None:
    valid = _valid(preset)
    evals = [
        _evaluation("infiniband", step_s=step_a, capex=capex_a),
        _evaluation("roce_v2", step_s=step_b, capex=capex_b),
    ]
    moneys = money_table(evals, valid)

    def winner(price: float) -> str:
        return rank(evals, [repriced(m, gpu_hour_usd=price) for m in moneys], valid)[0].technology

    before, after = winner(price_low), winner(price_low + rise)
    if before != after:
        steps = {"infiniband": step_a, "roce_v2": step_b}
        assert steps[after] <= steps[before]


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(step_st, min_size=2, max_size=3),
    capexes=st.lists(money_st, min_size=3, max_size=3),
)
@example(steps=[1.0, 1.03], capexes=[5e7, 1e6, 1e6])  # step bands overlap; outside
def test_max_performance_picks_the_shortest_step_unless_inside_the_uncertainty(
    steps: list[float], capexes: list[float]
) -> None:
    valid = _valid("max_performance")
    techs: list[TechnologyName] = ["infiniband", "roce_v2", "roce_v1"]
    evals = [
        _evaluation(t, step_s=s, capex=c) for t, s, c in zip(techs, steps, capexes, strict=False)
    ]
    ranked = rank(evals, money_table(evals, valid), valid)
    win = ranked[0].money
    fastest = min((r.money for r in ranked), key=lambda m: (round(m.step_s, 12), m.technology))

    # the fake backend's band: +-15 % of each fabric time (step - 0.9 s of compute); the two
    # half-widths of the difference add in quadrature
    def band(m: OptionMoney) -> float:
        return COLLECTIVE_TIME_RELATIVE_BAND * math.hypot(m.step_s - 0.9, fastest.step_s - 0.9)

    assert win.step_s == fastest.step_s or win.step_s - fastest.step_s <= band(win) + 1e-12
    # and every slower option says whether its difference is inside that band
    for option in ranked:
        gap = option.versus_fastest
        if option.money is fastest:
            assert gap is None
            continue
        assert gap is not None
        assert gap.inside == (option.money.step_s - fastest.step_s <= band(option.money) + 1e-12)


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(step_st, min_size=2, max_size=3),
    capexes=st.lists(money_st, min_size=3, max_size=3),
    lows=st.lists(ratio_low_st, min_size=3, max_size=3),
    highs=st.lists(ratio_high_st, min_size=3, max_size=3),
    shared=st.floats(min_value=0.0, max_value=5.0),
)
def test_time_shared_by_every_option_never_changes_the_tie_verdict(
    steps: list[float],
    capexes: list[float],
    lows: list[float],
    highs: list[float],
    shared: float,
) -> None:
    valid = _valid("max_performance")
    techs: list[TechnologyName] = ["infiniband", "roce_v2", "roce_v1"]

    def verdicts(extra: float) -> dict[str, bool | None]:
        """Each option's "level with the fastest" (``None``: the fastest). Which of the level
        options wins may move: the idle GPU time's share of a longer step is smaller money."""
        evals = [
            _evaluation(t, step_s=s + extra, capex=c, in_domain_s=extra, band=(lo, hi))
            for t, s, c, lo, hi in zip(techs, steps, capexes, lows, highs, strict=False)
        ]
        return {
            o.technology: o.versus_fastest.inside if o.versus_fastest else None
            for o in rank(evals, money_table(evals, valid), valid)
        }

    assert verdicts(shared) == verdicts(0.0)


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.integers(min_value=2, max_value=600),
    technology=st.sampled_from(("infiniband", "roce_v2")),
    topology=st.sampled_from(("fat_tree", "rail_optimized")),
)
def test_growth_to_the_current_size_costs_nothing(
    nodes: int, technology: TechnologyName, topology: str
) -> None:
    gpus = nodes * 8
    valid = parse_spec(
        {
            "cluster": {"gpus": gpus},
            "fabric": {"technologies": [technology], "topology": topology},
            "growth": {"target_gpus": gpus},
        }
    )
    try:
        e = evaluate_one(valid, technology, backend="fake")
    except FabricPlanError:
        return  # a size this technology cannot build at all: nothing to grow
    assert e.growth is not None and e.growth.reachable
    assert e.growth.added_capex_usd == 0.0 and e.growth.recabled_links == 0


def test_growth_to_a_larger_size_buys_switches_and_moves_links() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 1024},
            "fabric": {"technologies": ["infiniband"], "topology": "fat_tree"},
            "growth": {"target_gpus": 4096},
        }
    )
    e = evaluate_one(valid, "infiniband", backend="fake")
    assert e.growth is not None and e.growth.reachable
    added = e.growth.added_capex_usd or 0.0
    switch = e.design.switch_id
    assert e.growth.added_items.get(switch, 0) > 0
    assert added >= e.growth.added_items[switch] * valid.prices[switch].price_usd


def test_scenario_with_gpus_keeps_the_rest() -> None:
    valid = _valid("cost_sensitive")
    bigger = scenario_with_gpus(valid, 4096)
    assert bigger.spec.cluster.gpus == 4096 and bigger.spec.priorities == "cost_sensitive"
    assert bigger.switches == valid.switches


def test_growth_that_regroups_the_spines_recables_every_uplink() -> None:
    valid = parse_spec(
        {
            "cluster": {"gpus": 2048},
            # one plane: eight one-switch planes of 256-port Ethernet would have no spines
            "fabric": {"technologies": ["infiniband", "roce_v2"], "planes": 1},
            "growth": {"target_gpus": 4096},
        }
    )
    ib = evaluate_one(valid, "infiniband", backend="fake")
    roce = evaluate_one(valid, "roce_v2", backend="fake")
    assert ib.growth is not None and roce.growth is not None
    # 64-port NDR at 2,048 ports is full in two tiers: 4,096 needs another spine grouping, so
    # every leaf-spine link moves; 128-port Ethernet only doubles its spines (half move).
    if ib.design.spine_groups == 1:
        assert ib.growth.recabled_links == ib.design.links["leaf_spine"]
    assert roce.growth.recabled_links <= roce.design.links["leaf_spine"]
    assert (ib.growth.added_capex_usd or 0) > 0 and (roce.growth.added_capex_usd or 0) > 0


def test_growing_one_switch_planes_moves_the_host_links_a_leaf_gives_up() -> None:
    # 2,048 NICs on eight one-switch planes of 256 x 400G; at 4,096 each plane is 4 leaves of
    # 128 hosts (128 uplinks each) and 2 spines: every switch keeps 128 of its 256 hosts, so
    # half of today's 2,048 node links move (there are no links above the leaves today).
    valid = parse_spec(
        {
            "cluster": {"gpus": 2048},
            "fabric": {
                "technologies": ["roce_v2"],
                "switch": {"roce_v2": "th6-128x800g"},
                "topology": "rail_optimized",
                "planes": 8,
            },
            "growth": {"target_gpus": 4096},
        }
    )
    roce = evaluate_one(valid, "roce_v2", backend="fake")
    assert roce.growth is not None and roce.design.tiers == 1
    assert roce.growth.recabled_links == 1024


@settings(max_examples=6, deadline=None)
@given(
    nodes=st.integers(2, 400),
    gpu_hour=st.sampled_from([0.0, 1.3, 4.0]),
    techs=st.sampled_from([("infiniband", "roce_v2"), ("roce_v2", "spectrum_x", "uec")]),
)
def test_every_price_flip_flips_the_answer_when_the_spec_says_that_price(
    nodes: int, gpu_hour: float, techs: tuple[str, ...]
) -> None:
    # The flip point is checked the way a user would: the spec re-run (design search included)
    # with the switch's price just past it ranks the named candidate first, and just short of it
    # keeps today's answer.
    from fabricplan.evaluate import evaluate

    def spec(prices: dict[str, float]) -> ValidScenario:
        return parse_spec(
            {
                "cluster": {"gpus": 8 * nodes},
                "fabric": {"technologies": list(techs)},
                "cost": {"prices": {"gpu-hour-h100": gpu_hour, **prices}},
            }
        )

    def winner(prices: dict[str, float]) -> str:
        valid = spec(prices)
        evals = evaluate(valid, backend="fake")
        return rank(evals, money_table(evals, valid), valid)[0].technology

    valid = spec({})
    rec = decide(evaluate(valid, backend="fake"), valid)
    for flip in rec.flips:
        if flip.kind != "price" or flip.value is None:
            continue
        item = flip.description.split(" costs ")[0].split(" if ")[-1]
        more = " costs more than " in flip.description
        past, short = (1.001, 0.999) if more else (0.999, 1.001)
        assert winner({item: flip.value * past}) == flip.description.split(" ")[0], flip
        assert winner({item: flip.value * short}) == rec.technology, flip


@settings(max_examples=6, deadline=None)
@example(nodes=52, techs=("infiniband", "roce_v2"))  # held fixed designs said $103.78
@given(
    nodes=st.integers(2, 2000),
    techs=st.sampled_from([("infiniband", "roce_v2"), ("roce_v2", "spectrum_x", "uec")]),
)
def test_the_gpu_hour_flip_flips_the_answer_when_the_spec_says_that_price(
    nodes: int, techs: tuple[str, ...]
) -> None:
    # As for the switch prices: re-run at the flip's GPU-hour price (the design search may keep
    # a faster design there), the named candidate ranks first just past it, today's just short.
    from fabricplan.evaluate import evaluate

    def ranked(price: float) -> tuple[str, ValidScenario]:
        valid = parse_spec(
            {
                "cluster": {"gpus": 8 * nodes},
                "fabric": {"technologies": list(techs)},
                "cost": {"prices": {"gpu-hour-h100": price}},
            }
        )
        evals = evaluate(valid, backend="analytic")
        return rank(evals, money_table(evals, valid), valid)[0].technology, valid

    today, valid = ranked(1.3)
    flip = _gpu_hour_flip_of(valid)
    if flip.value is None:
        return
    more = " more than " in flip.description
    past, short = (1.001, 0.999) if more else (0.999, 1.001)
    assert ranked(flip.value * past)[0] == flip.description.split(" ")[0], flip
    assert ranked(flip.value * short)[0] == today, flip


def _gpu_hour_flip_of(valid: ValidScenario) -> Any:
    from fabricplan.evaluate import evaluate

    rec = decide(evaluate(valid, backend="analytic"), valid)
    return next(f for f in rec.flips if f.kind == "gpu_hour")


def test_the_money_table_and_reasons_say_the_difference_and_its_band() -> None:
    from fabricplan.report.table import money_rows

    valid = _valid("max_performance")
    evals = [
        _evaluation("infiniband", step_s=1.0, capex=50e6),
        _evaluation("roce_v2", step_s=1.025),
    ]
    rec = decide(evals, valid)
    rows = dict(money_rows(rec))
    # 25 ms of a 1 s step; band 0.15 x hypot(0.125, 0.1) = 24.0 ms
    assert rows["step longer than the fastest (band of the difference)"] == [
        "fastest",
        "+2.5 % (±2.4 %), outside",
    ]
    assert any(
        "roce_v2 step 2.5 % longer than infiniband's (band of the difference ±2.4 %): outside the"
        " uncertainty, infiniband wins on step time." in r
        for r in rec.reasons
    )
    assert "step longer than the fastest (band of the difference)" not in dict(
        money_rows(decide(evals, _valid("balanced")))
    )


def test_a_team_change_that_moves_the_search_models_the_new_design() -> None:
    # At 2,048 GPUs on ConnectX-8 SuperNICs (2 x 400GbE, 200G lanes, so a Tomahawk-6 box at
    # 2 x 200G lanes takes them without gearbox optics), a RoCE team new to DCB makes the search
    # keep another switch (staff money is in its TCO) with another step: the performance kept
    # from today's design is not that design's, so the re-evaluation models it, as a fresh
    # evaluation does; the same design keeps it.
    valid = parse_spec(
        {
            "cluster": {"gpus": 2048, "nic": "cx8-eth"},
            "fabric": {"technologies": ["roce_v2"], "topology": "fat_tree"},
            "team": {"ethernet_dcb": "expert"},
            "workload": {"model": "llama3-70b", "tp": 8, "pp": 2},
        }
    )
    (today,), _ = evaluate_feasible(valid)
    new_team = scenario_with_team(
        valid, valid.spec.team.model_copy(update={"ethernet_dcb": "none"})
    )
    (fresh,), _ = evaluate_feasible(new_team)
    assert not same_fabric(fresh.design, today.design)  # the case this test is about
    kept = {"roce_v2": today.performance}
    (again,), _ = evaluate_feasible(
        new_team, performance=kept, performance_designs={"roce_v2": today.design}
    )
    assert again.performance == fresh.performance
    assert again.performance != today.performance
    (same,), _ = evaluate_feasible(
        valid, performance=kept, performance_designs={"roce_v2": today.design}
    )
    assert same.performance is today.performance


def test_recommend_says_which_design_each_kept_result_was_made_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fabricplan.evaluate as evaluate_module

    calls: list[dict[str, Any]] = []
    real = evaluate_module.evaluate_feasible

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate_module, "evaluate_feasible", spy)
    valid = parse_spec({"cluster": {"gpus": 256}})
    evals, _ = real(valid, backend="fake")
    recommend(valid, evals, backend="fake")
    reused = [c for c in calls if c.get("performance")]
    assert reused and all(
        c["performance_designs"] == {e.technology: e.design for e in evals} for c in reused
    )
