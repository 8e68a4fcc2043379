"""The decision engine on hand-made evaluations: expected totals are derived here from the ratio
scores (best / value for costs and times, value / best for the rest) and the preset weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign, Finding
from fabricplan.model.results import (
    CollectivePoint,
    CostBreakdown,
    Evaluation,
    OpsAssessment,
    PerformanceResult,
    StepTimeResult,
)
from fabricplan.model.scenario import (
    Criterion,
    PriorityPreset,
    TeamSpec,
    TechnologyName,
    ValidScenario,
)
from fabricplan.recommend.decision import NEAR_TIE_LEAD, decide, scenario_with_gpus
from fabricplan.recommend.flip import MAX_PRICE_RISE, price_flip, rescaled_weights, weight_flip
from fabricplan.recommend.score import (
    RawTable,
    criterion_scores,
    ranking,
    raw_figures,
    weighted_totals,
)
from fabricplan.recommend.weights import CRITERIA, PRESET_WEIGHTS, criterion_weights
from fabricplan.spec import parse_spec

YEARS = 5
SUPPORT_FRACTION = 0.1


def _valid(priorities: Any = "balanced", **extra: Any) -> ValidScenario:
    return parse_spec(
        {
            "cluster": {"gpus": 1024},
            "fabric": {"technologies": ["infiniband", "roce_v2", "roce_v1"]},
            "priorities": priorities,
            **extra,
        }
    )


def _evaluation(
    technology: TechnologyName,
    *,
    step_s: float | None = 1.0,
    capex: float = 10e6,
    energy: float = 0.2e6,
    headroom: int = 1024,
    burden: float = 0.3,
    ecosystem: float = 0.5,
    findings: tuple[Finding, ...] = (),
    all_reduce_us: float = 1000.0,
    gpus: int = 1024,
) -> Evaluation:
    design = FabricDesign(
        technology=technology,
        topology="fat_tree",
        switch_id="x",
        port_speed_gbps=400,
        radix=64,
        tiers=2,
        planes=1,
        spine_groups=1,
        nodes=gpus // 8,
        gpus=gpus,
        endpoints=gpus,
        hosts_per_leaf=32,
        leaves_per_pod=32,
        rail_aligned=False,
        tier_designs=(),
        link_groups=(),
        bisection_tbps=gpus * 0.2,
        worst_case_switch_hops=3,
        max_endpoints=gpus + headroom,
        headroom_gpus=headroom,
        findings=findings,
    )
    support = SUPPORT_FRACTION * capex
    opex = energy + support
    cost = CostBreakdown(
        capex_usd=capex,
        lines=(),
        power_w=1.0,
        energy_usd_per_year=energy,
        support_usd_per_year=support,
        operations_usd_per_year=0.0,
        opex_usd_per_year=opex,
        years=YEARS,
        tco_usd=capex + YEARS * opex,
        per_gpu_usd=0.0,
        capex_per_bisection_tbps_usd=0.0,
    )
    step = None
    if step_s is not None:
        step = StepTimeResult(
            compute_s=0.9,
            comm_total_s=0.2,
            comm_exposed_s=step_s - 0.9,
            step_s=step_s,
            comm_by_dimension_s={},
            exposed_fraction=0.1,
            gpu_hours_lost_per_year=0.0,
        )
    size = 2**30
    points = (
        CollectivePoint(
            collective="all_reduce",
            size_bytes=size,
            algorithm="ring",
            time_us=all_reduce_us,
            algbw_GBps=1.0,
            busbw_GBps=1.0,
        ),
    )
    performance = PerformanceResult(
        backend="fake", technology=technology, base_latency_us=3.0, collectives=points, step=step
    )
    ops = OpsAssessment(
        tasks=(), burden=burden, engineer_years_per_year=1.0, vendors=1, ecosystem_fit=ecosystem
    )
    return Evaluation(
        technology=technology, design=design, cost=cost, performance=performance, ops=ops
    )


def _total(rec: Any, tech: str) -> float:
    return next(o.total for o in rec.ranking if o.technology == tech)  # type: ignore[no-any-return]


def test_max_performance_picks_the_faster_when_only_performance_differs() -> None:
    fast, slow = _evaluation("infiniband", step_s=1.0), _evaluation("roce_v2", step_s=1.1)
    rec = decide([slow, fast], _valid("max_performance"))
    assert rec.technology == "infiniband"
    w = PRESET_WEIGHTS["max_performance"]["performance"]
    assert _total(rec, "infiniband") - _total(rec, "roce_v2") == pytest.approx(w * (1 - 1 / 1.1))


def test_cost_sensitive_picks_the_cheaper_when_only_cost_differs() -> None:
    dear, cheap = _evaluation("infiniband", capex=12e6), _evaluation("roce_v2", capex=8e6)
    rec = decide([dear, cheap], _valid("cost_sensitive"))
    assert rec.technology == "roce_v2"


def test_presets_weigh_a_real_trade_off_differently() -> None:
    # infiniband: 10 % faster; roce_v2: 30 % cheaper capex (and so cheaper TCO).
    fast = _evaluation("infiniband", step_s=1.0, capex=10e6)
    cheap = _evaluation("roce_v2", step_s=1.1, capex=7e6)
    tco_fast = 10e6 + YEARS * (0.2e6 + 1e6)
    tco_cheap = 7e6 + YEARS * (0.2e6 + 0.7e6)
    cases: tuple[tuple[PriorityPreset, str], ...] = (
        ("max_performance", "infiniband"),
        ("cost_sensitive", "roce_v2"),
    )
    for preset, expected in cases:
        w = PRESET_WEIGHTS[preset]
        lead = (
            w["performance"] * (1 - 1 / 1.1)
            - w["capex"] * (1 - 7 / 10)
            - w["tco"] * (1 - tco_cheap / tco_fast)
        )
        rec = decide([fast, cheap], _valid(preset))
        assert _total(rec, "infiniband") - _total(rec, "roce_v2") == pytest.approx(lead)
        assert rec.technology == expected


def test_the_ranking_carries_raw_figures_scores_and_weights() -> None:
    rec = decide(
        [_evaluation("infiniband", capex=5e6), _evaluation("roce_v2", capex=10e6)], _valid()
    )
    row = {s.criterion: s for s in rec.ranking[1].scores}
    assert rec.ranking[1].technology == "roce_v2"
    assert (row["capex"].raw, row["capex"].unit, row["capex"].score) == (10e6, "usd", 0.5)
    assert row["scalability"].raw == pytest.approx(2.0)  # (1024 + 1024) / 1024
    assert sum(rec.weights.values()) == pytest.approx(1.0)
    assert rec.weights == pytest.approx(PRESET_WEIGHTS["balanced"])


def test_reasons_name_the_dominant_criterion_with_numbers() -> None:
    fast = _evaluation("infiniband", step_s=1.0, capex=14e6)
    cheap = _evaluation("roce_v2", step_s=1.04, capex=8e6)
    rec = decide([fast, cheap], _valid("balanced"))
    assert rec.technology == "roce_v2"
    deciding = rec.reasons[1]
    assert deciding.startswith("roce_v2 has")
    assert "less TCO" in deciding and "outweighs" in deciding and "longer step time" in deciding
    assert "weight 0.25" in deciding  # balanced tco and performance weights
    assert "$" in deciding and "%" in deciding


def test_symmetric_inputs_tie_by_name_whatever_the_order() -> None:
    a, b = _evaluation("roce_v2"), _evaluation("infiniband")
    for order in ([a, b], [b, a]):
        rec = decide(order, _valid())
        assert rec.technology == "infiniband"
        assert rec.ranking[0].total == rec.ranking[1].total
        assert rec.reasons[0].startswith("This is a near tie")
        assert "tie-break" in rec.reasons[2]


def test_a_clear_lead_is_not_called_a_near_tie() -> None:
    fast = _evaluation("infiniband", step_s=1.0, capex=14e6)
    cheap = _evaluation("roce_v2", step_s=1.04, capex=8e6)
    rec = decide([fast, cheap], _valid("balanced"))
    lead = rec.ranking[0].total - rec.ranking[1].total
    assert lead >= NEAR_TIE_LEAD
    assert not any("near tie" in r for r in rec.reasons)


def test_one_candidate_ranks_alone_with_no_flips() -> None:
    rec = decide([_evaluation("roce_v2")], _valid(), reevaluate=lambda n: [])
    assert rec.technology == "roce_v2" and len(rec.ranking) == 1 and rec.flips == ()
    assert "only roce_v2 was evaluated" in rec.reasons[0]


def test_bad_inputs_get_codes() -> None:
    with pytest.raises(ModelError, match="FP570"):
        decide([], _valid())
    with pytest.raises(ModelError, match="FP572"):
        decide([_evaluation("roce_v2"), _evaluation("roce_v2")], _valid())
    blind = _evaluation("roce_v2", step_s=None).model_copy(
        update={
            "performance": PerformanceResult(
                backend="fake", technology="roce_v2", base_latency_us=1.0
            )
        }
    )
    with pytest.raises(ModelError, match="FP571"):
        decide([blind, _evaluation("infiniband", step_s=None)], _valid())


def test_without_step_times_the_largest_all_reduce_decides_performance() -> None:
    quick = _evaluation("infiniband", step_s=None, all_reduce_us=800.0)
    slow = _evaluation("roce_v2", step_s=None, all_reduce_us=1000.0)
    rec = decide([quick, slow], _valid("max_performance"))
    perf = {s.criterion: s for s in rec.ranking[1].scores}["performance"]
    assert perf.raw == pytest.approx(1e-3)
    assert perf.score == pytest.approx(0.8)
    assert "all_reduce time" in rec.reasons[1]


def test_an_error_finding_zeroes_scalability() -> None:
    lid = Finding(code="FP399", severity="error", message="more endpoints than LIDs")
    broken = _evaluation("infiniband", findings=(lid,))
    rec = decide([broken, _evaluation("roce_v2")], _valid())
    scal = {s.criterion: s for s in rec.ranking[-1].scores}["scalability"]
    assert rec.technology == "roce_v2" and scal.raw == 0.0 and scal.score == 0.0
    assert any("breaks a hard limit" in r and "FP399" in r for r in rec.reasons)


def _with_weights(weights: dict[Criterion, float]) -> ValidScenario:
    return _valid({c: max(w, 0.0) for c, w in weights.items()})


def test_moving_a_weight_across_the_computed_flip_changes_the_winner() -> None:
    fast = _evaluation("infiniband", step_s=1.0, capex=10e6)
    cheap = _evaluation("roce_v2", step_s=1.1, capex=7e6)
    evaluations = [fast, cheap]
    weights = criterion_weights("balanced")
    winner = decide(evaluations, _valid()).technology
    flip = weight_flip(criterion_scores(raw_figures(evaluations)), weights, "performance")
    assert flip is not None and flip.winner_before == winner
    for delta, expected in ((-1e-6, flip.winner_before), (1e-6, flip.winner_after)):
        t = flip.weight + delta * (1 if flip.weight > flip.weight_now else -1)
        moved = rescaled_weights(weights, "performance", t)
        assert decide(evaluations, _with_weights(moved)).technology == expected
    rec = decide(evaluations, _valid())
    point = next(
        f for f in rec.flips if f.kind == "weight" and "performance weight" in f.description
    )
    assert point.value == pytest.approx(flip.weight)


def test_a_price_rise_of_the_winner_at_the_computed_change_flips_it() -> None:
    fast = _evaluation("infiniband", step_s=1.0, capex=10e6)
    cheap = _evaluation("roce_v2", step_s=1.1, capex=7e6)
    valid = _valid("cost_sensitive")
    rec = decide([fast, cheap], valid)
    assert rec.technology == "roce_v2"
    rise = next(f for f in rec.flips if f.kind == "price" and f.description.startswith("roce_v2"))
    assert rise.value is not None and rise.value > 0

    def repriced(change: float) -> Evaluation:
        capex = 7e6 * (1 + change)
        return _evaluation("roce_v2", step_s=1.1, capex=capex)  # support follows capex

    change = rise.value / 100
    assert decide([fast, repriced(change - 1e-6)], valid).technology == "roce_v2"
    assert decide([fast, repriced(change + 1e-6)], valid).technology == "infiniband"
    cut = next(f for f in rec.flips if f.kind == "price" and f.description.startswith("infini"))
    assert cut.value is not None and -100 < cut.value < 0


def _sized(flip_at: int | None) -> Any:
    def reevaluate(gpus: int) -> Sequence[Evaluation]:
        cheap_ib = flip_at is not None and gpus >= flip_at
        return [
            _evaluation("infiniband", capex=5e6 if cheap_ib else 12e6, gpus=gpus),
            _evaluation("roce_v2", capex=8e6, gpus=gpus),
        ]

    return reevaluate


def test_cluster_size_flip_is_found_by_doubling() -> None:
    evaluations = _sized(None)(1024)
    rec = decide(evaluations, _valid("cost_sensitive"), reevaluate=_sized(4096))
    size = [f for f in rec.flips if f.kind == "cluster_size"]
    assert rec.technology == "roce_v2"
    assert len(size) == 1 and size[0].value == 4096
    assert "2,048" in size[0].description


def test_no_cluster_size_flip_is_said_with_the_range() -> None:
    rec = decide(_sized(None)(1024), _valid("cost_sensitive"), reevaluate=_sized(None))
    (size,) = [f for f in rec.flips if f.kind == "cluster_size"]
    assert size.value is None and "no flip between 128 and 8,192 GPUs" in size.description


def test_team_experience_flip_via_reevaluation() -> None:
    def reevaluate_team(team: TeamSpec) -> Sequence[Evaluation]:
        easy_ib = 0.05 if team.infiniband == "expert" else 0.9
        return [
            _evaluation("infiniband", burden=easy_ib, capex=10.5e6),
            _evaluation("roce_v2", burden=0.3, capex=10e6),
        ]

    valid = _valid("ethernet_team")
    rec = decide(reevaluate_team(valid.spec.team), valid, reevaluate_team=reevaluate_team)
    assert rec.technology == "roce_v2"
    (team,) = [f for f in rec.flips if f.kind == "team"]
    assert (
        "team.infiniband: expert" in team.description
        and "infiniband ranks first" in team.description
    )


def test_scenario_with_gpus_keeps_the_rest() -> None:
    valid = _valid("cost_sensitive")
    bigger = scenario_with_gpus(valid, 4096)
    assert bigger.spec.cluster.gpus == 4096 and bigger.spec.priorities == "cost_sensitive"
    assert bigger.switches == valid.switches


# --- properties --------------------------------------------------------------------------------

TECHS: tuple[TechnologyName, ...] = ("infiniband", "roce_v2", "roce_v1")
score = st.floats(0.0, 1.0, allow_nan=False)
table = st.integers(2, 3).flatmap(
    lambda n: st.tuples(*[st.tuples(*[score] * len(CRITERIA)) for _ in range(n)])
)
weight_vector = st.tuples(*[st.floats(0.0, 1.0)] * len(CRITERIA)).filter(lambda w: sum(w) > 0.01)


@settings(max_examples=200, deadline=None)
@given(rows=table, raw_weights=weight_vector, which=st.sampled_from(CRITERIA))
def test_the_flip_weight_is_where_the_totals_are_equal(
    rows: tuple[tuple[float, ...], ...], raw_weights: tuple[float, ...], which: Criterion
) -> None:
    scores: RawTable = {
        TECHS[i]: dict(zip(CRITERIA, row, strict=True)) for i, row in enumerate(rows)
    }
    weights = {c: w / sum(raw_weights) for c, w in zip(CRITERIA, raw_weights, strict=True)}
    winner = ranking(weighted_totals(scores, weights))[0]
    flip = weight_flip(scores, weights, which)
    if flip is None:
        for end in (0.0, 1.0):  # totals are lines in the weight: no crossing, same winner
            at_end = weighted_totals(scores, rescaled_weights(weights, which, end))
            assert (
                ranking(at_end)[0] == winner or round(at_end[winner] - max(at_end.values()), 9) == 0
            )
        return
    assert flip.winner_before == winner != flip.winner_after
    at_flip = weighted_totals(scores, rescaled_weights(weights, which, flip.weight))
    assert at_flip[flip.winner_before] == pytest.approx(at_flip[flip.winner_after], abs=1e-9)
    assert max(at_flip.values()) == pytest.approx(at_flip[flip.winner_before], abs=1e-9)
    step = 1e-7 if flip.weight > flip.weight_now else -1e-7
    if not flip.tied_now and 0 <= flip.weight + step <= 1:
        for t, expected in ((flip.weight - step, True), (flip.weight + step, False)):
            first = ranking(weighted_totals(scores, rescaled_weights(weights, which, t)))[0]
            assert (first == winner) is expected


@settings(max_examples=50, deadline=None)
@given(
    capex=st.tuples(st.floats(1e5, 1e8), st.floats(1e5, 1e8)),
    perf=st.tuples(st.floats(0.5, 2.0), st.floats(0.5, 2.0)),
)
def test_the_price_flip_is_where_the_winner_changes(
    capex: tuple[float, float], perf: tuple[float, float]
) -> None:
    raw: RawTable = {
        tech: {"performance": p, "capex": c, "tco": 2 * c}
        for tech, c, p in zip(("infiniband", "roce_v2"), capex, perf, strict=True)
    }
    weights: dict[Criterion, float] = {"performance": 0.4, "capex": 0.3, "tco": 0.3}
    winner = ranking(weighted_totals(criterion_scores(raw), weights))[0]
    flip = price_flip(raw, weights, winner, 2 * raw[winner]["capex"])

    def first(change: float) -> str:
        table = {t: dict(r) for t, r in raw.items()}
        table[winner] = {
            **raw[winner],
            "capex": raw[winner]["capex"] * (1 + change),
            "tco": raw[winner]["tco"] * (1 + change),
        }
        return ranking(weighted_totals(criterion_scores(table), weights))[0]

    if flip is None:
        assert first(MAX_PRICE_RISE) == winner
        return
    assert flip.change > 0
    # Totals equal to 12 decimals tie (and go to the name), so check just either side.
    assert first(flip.change * (1 + 1e-6) + 1e-9) != winner
    if flip.change > 1e-9:  # a tie now flips at any rise
        assert first(flip.change * (1 - 1e-6)) == winner


def test_recommend_on_designed_fabrics_explores_size_and_team() -> None:
    from fabricplan.evaluate import evaluate
    from fabricplan.recommend.decision import recommend

    valid = parse_spec({"cluster": {"gpus": 256}})
    evaluations = evaluate(valid, backend="fake")
    rec = recommend(valid, evaluations, backend="fake")
    assert {o.technology for o in rec.ranking} == {"infiniband", "roce_v2"}
    assert rec.ranking[0].total >= rec.ranking[1].total
    assert {f.kind for f in rec.flips} == {"weight", "price", "cluster_size", "team"}
    assert rec.technology == decide(evaluations, valid).technology


def test_a_tie_now_flips_on_any_move_the_right_way() -> None:
    scores: RawTable = {
        "infiniband": {"performance": 1.0, "tco": 0.5},
        "roce_v2": {"performance": 0.5, "tco": 1.0},
    }
    weights: dict[Criterion, float] = {"performance": 0.5, "tco": 0.5}
    flip = weight_flip(scores, weights, "performance")
    assert flip is not None and flip.tied_now and not flip.raise_weight
    assert (flip.weight, flip.winner_before, flip.winner_after) == (0.5, "infiniband", "roce_v2")
    lowered = weighted_totals(scores, rescaled_weights(weights, "performance", 0.49))
    assert ranking(lowered)[0] == "roce_v2"


def test_tco_counts_idle_gpu_time_only_when_every_candidate_has_it() -> None:
    a, b = _evaluation("infiniband", capex=12e6), _evaluation("roce_v2", capex=10e6)
    assert raw_figures([a, b])["roce_v2"]["tco"] == b.cost.tco_usd

    def idle(e: Evaluation, usd: float) -> Evaluation:
        cost = e.cost.model_copy(
            update={"gpu_idle_usd": usd, "tco_with_gpu_idle_usd": e.cost.tco_usd + usd}
        )
        return e.model_copy(update={"cost": cost})

    # The cheaper network idles GPUs worth more than the price difference: it loses on TCO.
    difference = a.cost.tco_usd - b.cost.tco_usd
    a_idle, b_idle = idle(a, 1e6), idle(b, 1e6 + 2 * difference)
    raw = raw_figures([a_idle, b_idle])
    assert raw["infiniband"]["tco"] < raw["roce_v2"]["tco"]
    assert raw["roce_v2"]["tco"] - raw["infiniband"]["tco"] == pytest.approx(difference)
    # One candidate without a step time: plain TCO for both, so the scales stay comparable.
    assert raw_figures([a_idle, b])["infiniband"]["tco"] == a.cost.tco_usd
