"""The deployed lossless configuration: spec fields, lint findings -> settings, the packet-measured
effect in the analytic model, the configuration risk, SHARP as deployed, growth, the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabricplan.analytic.config_risk import (
    DETECTION_HOURS,
    FIX_ENGINEER_HOURS,
    MISCONFIG_INCIDENTS_PER_YEAR,
    PAUSE_STORMS_PER_NIC_YEAR,
    UNWATCHED_STORM_HOURS,
    WATCHDOG_DETECTION_S,
    config_risk,
    pause_storm_risk,
)
from fabricplan.analytic.lossless import (
    LOSSY_ALL_TO_ALL_OVERSUBSCRIBED,
    LOSSY_ALL_TO_ALL_TWO_TO_ONE,
    LOSSY_RING_OVERSUBSCRIBED,
    LOSSY_RING_TWO_TO_ONE,
    NO_CC,
    NO_CC_ALL_TO_ALL_NONBLOCKING,
    NO_CC_ALL_TO_ALL_TWO_TO_ONE,
    NO_CC_RING_NONBLOCKING,
    NO_CC_RING_TWO_TO_ONE,
    WATCHDOG_OFF,
    LosslessEffect,
    lossless_effect,
    with_lossless_step,
)
from fabricplan.analytic.step_simulated import collective_ratios, simulated_step
from fabricplan.backends import FakeBackend
from fabricplan.cli.app import create_app
from fabricplan.errors import FabricPlanError
from fabricplan.evaluate import evaluate_one
from fabricplan.lint.checking.deployed import (
    RULE_SETTING,
    UNMODELLED_RULES,
    deployed_settings,
    deployed_spec_data,
    with_deployed_uec,
)
from fabricplan.lint.checking.linter import lint_devices, lint_files
from fabricplan.lint.checking.rule import RULES, IntentSpec, LintFinding
from fabricplan.lint.model import DeviceConfig, PortConfig
from fabricplan.model.results import CollectivePoint, PerfRequest, StepTimeResult
from fabricplan.model.scenario import LosslessSpec, UecLinkSpec
from fabricplan.perf_cache import CachedBackend, cache_key
from fabricplan.spec import parse_spec, replace_spec
from fabricplan.topology.designer import design_fabric

DATA = Path(__file__).parent / "data" / "lint"
app = create_app()


def _step(ep: float = 0.0, dp: float = 0.2) -> StepTimeResult:
    exposed = ep + dp
    return StepTimeResult(
        compute_s=1.0,
        comm_total_s=exposed,
        comm_exposed_s=exposed,
        step_s=1.0 + exposed,
        comm_by_dimension_s={"ep": ep, "dp": dp},
        exposed_fraction=exposed / (1.0 + exposed),
        gpu_hours_lost_per_year=exposed / (1.0 + exposed) * 100 * 8760,
    )


def test_the_catalog_configuration_costs_nothing() -> None:
    effect = lossless_effect(True, True, "dcqcn", False, 3.0, "ecmp")
    assert effect.neutral and effect.notes == ()


def test_pfc_off_carries_the_packet_measured_factors_at_3_to_1() -> None:
    effect = lossless_effect(False, True, "dcqcn", False, 3.0, "ecmp")
    assert (effect.all_to_all, effect.ring) == (
        LOSSY_ALL_TO_ALL_OVERSUBSCRIBED,
        LOSSY_RING_OVERSUBSCRIBED,
    )
    # No contention at 1:1 with adaptive routing: nothing to drop.
    assert lossless_effect(False, True, "dcqcn", False, 1.0, "adaptive").neutral
    # Halfway between the 1:1 run (x1.000) and the 2:1 run at 1.5:1.
    half = lossless_effect(False, True, "dcqcn", False, 1.5, "ecmp")
    assert half.all_to_all == pytest.approx(1.0 + 0.5 * (LOSSY_ALL_TO_ALL_TWO_TO_ONE - 1.0))
    assert "linear at 1.5:1 between the runs" in half.notes[0]


@pytest.mark.parametrize(
    ("pfc", "headroom_ok", "cc", "a2a", "ring"),
    [
        (
            False,
            True,
            "dcqcn",
            (1.000, LOSSY_ALL_TO_ALL_TWO_TO_ONE, LOSSY_ALL_TO_ALL_OVERSUBSCRIBED),
            (1.000, LOSSY_RING_TWO_TO_ONE, LOSSY_RING_OVERSUBSCRIBED),
        ),
        (
            True,
            True,
            "none",
            (NO_CC_ALL_TO_ALL_NONBLOCKING, NO_CC_ALL_TO_ALL_TWO_TO_ONE, 0.981),
            (NO_CC_RING_NONBLOCKING, NO_CC_RING_TWO_TO_ONE, 0.859),
        ),
    ],
)
def test_the_factors_are_the_runs_at_1_2_and_3_to_1_and_lie_between_them(
    pfc: bool, headroom_ok: bool, cc: str, a2a: tuple[float, ...], ring: tuple[float, ...]
) -> None:
    # The packet runs (docs/models.md, "Lossless configuration") at 1:1, 2:1, 3:1, held beyond.
    for o, want_a2a, want_ring in zip((1.0, 2.0, 3.0), a2a, ring, strict=True):
        effect = lossless_effect(pfc, headroom_ok, cc, False, o, "ecmp")
        assert (effect.all_to_all, effect.ring) == (want_a2a, want_ring)
    beyond = lossless_effect(pfc, headroom_ok, cc, False, 8.0, "ecmp")
    assert (beyond.all_to_all, beyond.ring) == (a2a[2], ring[2])
    assert "held there at 8:1" in beyond.notes[0]
    for o, low, high in ((1.4, 0, 1), (2.7, 1, 2)):
        effect = lossless_effect(pfc, headroom_ok, cc, False, o, "ecmp")
        assert min(a2a[low], a2a[high]) <= effect.all_to_all <= max(a2a[low], a2a[high])
        assert min(ring[low], ring[high]) <= effect.ring <= max(ring[low], ring[high])


def test_no_congestion_control_carries_its_measured_effect_and_the_watchdog_a_risk() -> None:
    effect = lossless_effect(True, True, "none", True, 1.0, "ecmp")
    # Hashed rings on a non-blocking ECMP fabric: the collisions' pauses reach the senders.
    assert effect.ring == NO_CC_RING_NONBLOCKING > 1.0
    assert [part.setting for part in effect.settings] == [NO_CC, WATCHDOG_OFF]
    assert effect.settings[1].all_to_all == effect.settings[1].ring == 1.0
    # Per-packet routing on a non-blocking fabric has nothing to collide on.
    assert lossless_effect(True, True, "none", False, 1.0, "adaptive").neutral
    # Not measured on top of PFC off: PFC off's factors alone, and said.
    both = lossless_effect(False, True, "none", False, 3.0, "ecmp")
    assert (both.all_to_all, both.ring) == (
        LOSSY_ALL_TO_ALL_OVERSUBSCRIBED,
        LOSSY_RING_OVERSUBSCRIBED,
    )
    assert any("not measured on top of" in n for n in both.notes)


def test_a_pause_storm_lasts_the_watchdogs_detection_time_or_an_hour() -> None:
    on = pause_storm_risk(2_048, 2_048, 5, watchdog=True)
    off = pause_storm_risk(2_048, 2_048, 5, watchdog=False)
    storms = PAUSE_STORMS_PER_NIC_YEAR * 2_048 * 5
    assert on.storms == off.storms == pytest.approx(storms)
    assert on.gpu_hours == pytest.approx(storms * WATCHDOG_DETECTION_S / 3600 * 2_048)
    assert off.gpu_hours == pytest.approx(storms * UNWATCHED_STORM_HOURS * 2_048)
    assert on.staff_hours == 0.0 < off.staff_hours


@settings(max_examples=60, deadline=None)
@given(
    nics=st.integers(0, 1_000_000),
    gpus=st.integers(1, 1_000_000),
    years=st.integers(1, 10),
)
def test_the_watchdog_off_never_costs_less_and_the_risk_grows_with_the_fabric(
    nics: int, gpus: int, years: int
) -> None:
    on, off = (pause_storm_risk(nics, gpus, years, w) for w in (True, False))
    assert off.gpu_hours >= on.gpu_hours >= 0.0
    bigger = pause_storm_risk(nics + 1, gpus + 1, years, False)
    assert bigger.gpu_hours >= off.gpu_hours


def test_the_watchdog_off_in_the_spec_is_priced_as_pause_storm_risk() -> None:
    spec = {"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}}
    good = evaluate_one(parse_spec(spec), "roce_v2")
    spec["fabric"]["lossless"] = {"pfc_watchdog": False}  # type: ignore[index]
    bad = evaluate_one(parse_spec(spec), "roce_v2")
    assert bad.performance.step == good.performance.step  # no collective is slower
    storms = PAUSE_STORMS_PER_NIC_YEAR * 256 * 5
    added = bad.cost.config_risk_gpu_hours - good.cost.config_risk_gpu_hours
    assert added == pytest.approx(
        storms * 256 * (UNWATCHED_STORM_HOURS - WATCHDOG_DETECTION_S / 3600)
    )
    note = next(n for n in bad.performance.notes if n.startswith("configuration: "))
    assert "PFC watchdog off" in note and "pause storms" in note and "$" in note


def test_no_congestion_control_in_the_spec_says_its_step_and_money() -> None:
    spec = {
        "cluster": {"gpus": 256},
        # two tiers of one plane: hashed uplinks to collide on (one switch has none)
        "fabric": {"technologies": ["roce_v2"], "topology": "fat_tree", "tiers": 2, "planes": 1},
        "workload": {"model": "llama3-8b"},
    }
    good = evaluate_one(parse_spec(spec), "roce_v2")
    spec["fabric"]["lossless"] = {"congestion_control": "none"}  # type: ignore[index]
    bad = evaluate_one(parse_spec(spec), "roce_v2")
    assert good.performance.step is not None and bad.performance.step is not None
    assert bad.performance.step.step_s > good.performance.step.step_s  # rings x1.037 on ECMP
    note = next(n for n in bad.performance.notes if n.startswith("configuration: "))
    assert "no congestion control" in note and "rings +3.7%" in note and "of GPU time" in note


@pytest.mark.parametrize("lossless", [{"congestion_control": "none"}, {"pfc": False}])
def test_a_one_switch_fabric_has_no_hashed_collisions_to_pay_for(
    lossless: dict[str, object],
) -> None:
    # 256 NICs on one 256 x 400G switch: every flow has one path (NIC, switch, NIC), so the
    # non-blocking ECMP factors (hash collisions on shared uplinks) do not apply.
    spec: dict[str, object] = {
        "cluster": {"gpus": 256},
        "fabric": {
            "technologies": ["roce_v2"],
            "switch": {"roce_v2": "th6-128x800g"},
            "topology": "fat_tree",
            "planes": 1,
        },
        "workload": {"model": "llama3-8b"},
    }
    good = evaluate_one(parse_spec(spec), "roce_v2")
    spec["fabric"] = {**spec["fabric"], "lossless": lossless}  # type: ignore[dict-item]
    bad = evaluate_one(parse_spec(spec), "roce_v2")
    assert good.design.tiers == 1
    assert good.performance.step is not None and bad.performance.step is not None
    assert bad.performance.step.step_s == good.performance.step.step_s
    note = next(n for n in bad.performance.notes if n.startswith("configuration: "))
    assert "rings +0.0%" in note and "one-switch" not in note.split("(")[0]


def test_the_step_pays_the_effect_on_its_exposed_fabric_time_only() -> None:
    step = _step(ep=0.1, dp=0.1)
    after = with_lossless_step(step, LosslessEffect(1.5, 1.2, ("x",)))
    assert after.step_s - step.step_s == pytest.approx(0.5 * 0.1 + 0.2 * 0.1)
    assert after.step_s == pytest.approx(after.compute_s + after.comm_exposed_s)
    in_domain = step.model_copy(update={"comm_exposed_in_domain_s": 0.2})
    assert with_lossless_step(in_domain, LosslessEffect(1.5, 1.2, ("x",))).step_s == step.step_s


def test_pfc_off_in_the_spec_lengthens_the_roce_step_and_says_what_it_costs() -> None:
    spec = {
        "cluster": {"gpus": 256},
        # two tiers: a 3:1 leaf (one switch has no uplinks to oversubscribe)
        "fabric": {
            "technologies": ["roce_v2"],
            "oversubscription": 3,
            "topology": "fat_tree",
            "tiers": 2,
            "planes": 1,
        },
        "workload": {"model": "mixtral-8x7b", "tp": 1, "ep": 8},
    }
    good = evaluate_one(parse_spec(spec), "roce_v2")
    spec["fabric"]["lossless"] = {"pfc": False}  # type: ignore[index]
    bad = evaluate_one(parse_spec(spec), "roce_v2")
    assert good.performance.step is not None and bad.performance.step is not None
    assert bad.performance.step.step_s > good.performance.step.step_s
    note = next(n for n in bad.performance.notes if n.startswith("configuration: "))
    assert "PFC off" in note and "of GPU time over 5 years" in note


def test_an_infiniband_fabric_ignores_the_ethernet_lossless_settings() -> None:
    base = {"cluster": {"gpus": 256}, "fabric": {"technologies": ["infiniband"]}}
    lossy = {**base, "fabric": {**base["fabric"], "lossless": {"pfc": False}}}
    a, b = (evaluate_one(parse_spec(s), "infiniband", backend="fake") for s in (base, lossy))
    assert a.performance == b.performance and a.cost.config_risk_gpu_hours == 0.0


def test_config_risk_is_rate_times_cost_and_zero_without_pfc() -> None:
    techs = parse_spec({"cluster": {"gpus": 16}}).technologies
    risk = config_risk(techs["roce_v2"], "none", 3, 512, 0.1, 150.0)
    incidents = MISCONFIG_INCIDENTS_PER_YEAR["none"] * 3
    assert risk.gpu_hours == pytest.approx(incidents * DETECTION_HOURS * 512 * 0.1)
    assert risk.staff_usd == pytest.approx(incidents * FIX_ENGINEER_HOURS * 150.0)
    assert config_risk(techs["infiniband"], "none", 3, 512, 0.1, 150.0).staff_usd == 0.0
    ranked = [
        config_risk(techs["roce_v2"], level, 3, 512, 0.1, 150.0).gpu_hours
        for level in ("none", "some", "expert")
    ]
    assert ranked == sorted(ranked, reverse=True)


def test_every_lint_rule_is_mapped_or_said_unmodelled() -> None:
    assert set(RULE_SETTING) | set(UNMODELLED_RULES) == set(RULES)
    assert not set(RULE_SETTING) & set(UNMODELLED_RULES)
    assert set(RULE_SETTING.values()) <= set(LosslessSpec.model_fields) | {"routing", "uec"}


def test_findings_become_settings() -> None:
    def finding(rule: str, value: str = "x") -> LintFinding:
        return LintFinding(
            rule=rule, severity="error", device="d", setting="s", value=value, what="w", file="f"
        )

    result = lint_files([DATA / "sonic_leaf_400g.json"])
    findings = (
        finding("L04"),
        finding("L11"),
        finding("L05"),
        finding("L06", "2048"),
        finding("L07"),
        finding("L15"),
        finding("L13"),
    )
    settings = deployed_settings(
        type(result)(devices=result.devices, intent=result.intent, findings=findings),
        LosslessSpec(),
    )
    lossless = settings.lossless
    assert (lossless.pfc, lossless.ecn, lossless.congestion_control) == (True, False, "none")
    assert lossless.pfc_watchdog is False and lossless.pfc_headroom_bytes == 1
    assert not settings.adaptive_routing_ok
    assert any("not modelled" in n for n in settings.notes)


def test_a_clean_config_keeps_the_catalog_settings() -> None:
    result = lint_files([DATA / "sonic_leaf_400g.json"])
    assert deployed_settings(result, LosslessSpec()).lossless == LosslessSpec()


def _nic(name: str, **port: bool) -> DeviceConfig:
    return DeviceConfig(name, "nic", "nic_cc", f"{name}.txt", ports=(PortConfig("eth0", **port),))


def test_an_llr_mismatch_turns_llr_off_in_fabric_uec() -> None:
    # One NIC states LLR off where the other has it on (L24): LLR is off on that link, and the
    # models set it for the whole fabric, so fabric.uec.link_level_retry becomes false; CBFC,
    # which no finding names, stays as the spec has it.
    devices = [
        _nic("gpu01", link_level_retry=True, credit_flow_control=True),
        _nic("gpu02", link_level_retry=False, credit_flow_control=True),
    ]
    result = lint_devices(devices, IntentSpec(lossless_priorities=frozenset({3})))
    assert [f.rule for f in result.findings] == ["L24"]
    both = UecLinkSpec(link_level_retry=True, credit_flow_control=True)
    deployed = deployed_settings(result, LosslessSpec(), both)
    assert deployed.uec == UecLinkSpec(link_level_retry=False, credit_flow_control=True)
    assert deployed.lossless == LosslessSpec()
    assert any("uec.link_level_retry: false" in n for n in deployed.notes)
    spec = {
        "cluster": {"gpus": 1024},
        "fabric": {"technologies": ["uec"], "uec": both.model_dump()},
    }
    valid = parse_spec(spec)
    data, said = deployed_spec_data(valid, deployed)
    revised = with_deployed_uec(replace_spec(valid, data, "--config"))
    tech = revised.technologies["uec"]
    assert (tech.link_level_retry, tech.link_flow_control) == (False, "credit")
    assert "fabric.uec" in said[0]
    # A clean configuration leaves fabric.uec as the spec has it.
    clean = lint_devices(devices[:1], IntentSpec(lossless_priorities=frozenset({3})))
    assert deployed_settings(clean, LosslessSpec(), both).uec == both


def test_compare_reads_a_broken_config_into_pfc_off(tmp_path: Path) -> None:
    data = json.loads((DATA / "sonic_leaf_400g.json").read_text())
    data["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"] = "4"
    bad = tmp_path / "leaf.json"
    bad.write_text(json.dumps(data))
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 64}\nfabric: {oversubscription: 3, topology: fat_tree}\n")
    result = CliRunner().invoke(
        app, ["compare", str(spec), "--config", str(bad), "-f", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["spec"]["fabric"]["lossless"]["pfc"] is False
    assert any("L01" in a for a in doc["assumptions"])


def test_sharp_auto_is_collnet_off_and_on_needs_the_hardware() -> None:
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"sharp": {"infiniband": "on"}}})
    design = design_fabric(valid, "infiniband")
    req = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**33,), p2p=False, step=False)
    from fabricplan.analytic.performance import analytic_performance

    on = analytic_performance(valid, design, req)
    auto = analytic_performance(parse_spec({"cluster": {"gpus": 1024}}), design, req)
    assert on.collectives[0].busbw_GBps > auto.collectives[0].busbw_GBps
    assert any("CollNet off" in n for n in auto.notes)
    assert any("unvalidated" in n for n in on.notes)
    with pytest.raises(FabricPlanError) as caught:
        parse_spec({"cluster": {"gpus": 64}, "fabric": {"sharp": {"roce_v2": "on"}}})
    assert caught.value.code == "FP701"


def test_simulated_collectives_scale_the_step() -> None:
    def point(op: str, size: int, t: float) -> CollectivePoint:
        return CollectivePoint(
            collective=op,  # type: ignore[arg-type]
            size_bytes=size,
            algorithm="x",
            time_us=t,
            algbw_GBps=1.0,
            busbw_GBps=1.0,
        )

    sim = (point("all_reduce", 2**30, 120.0), point("all_reduce", 8, 5.0))
    ana = (point("all_reduce", 2**30, 100.0), point("all_reduce", 8, 1.0))
    ratios = collective_ratios(sim, ana)
    assert ratios == {"all_reduce": pytest.approx(1.2)}  # the 8-byte row is latency-bound
    step = simulated_step(_step(dp=0.2), ratios)
    assert step.step_s == pytest.approx(1.2 + 0.2 * 0.2)


def test_the_cache_reuses_an_unchanged_question_only(tmp_path: Path) -> None:
    valid = parse_spec({"cluster": {"gpus": 16}})
    design = design_fabric(valid, "roce_v2")
    request = PerfRequest(sizes_bytes=(8,))
    cached = CachedBackend(FakeBackend(), tmp_path)
    cached.perform(valid, design, request)
    cached.perform(valid, design, request)
    cached.perform(valid, design, request.model_copy(update={"seed": 1}))
    assert (cached.hits, cached.misses) == (1, 2)
    assert cache_key(valid, design, request, "flow") != cache_key(valid, design, request, "fake")
    (next(tmp_path.glob("*.json"))).write_text("not json")
    CachedBackend(FakeBackend(), tmp_path).perform(valid, design, request)  # recomputed


def test_qps_spreads_every_pattern() -> None:
    from fabricplan.sim.pattern import PATTERNS, pattern_traffic
    from fabricplan.sim.traffic import GpuLayout

    layout = GpuLayout(gpus=64, gpus_per_node=8, nics_per_node=8)
    for pattern in PATTERNS:
        if pattern == "training_step":
            continue
        one = pattern_traffic(pattern, layout, 2**20, seed=0, qps=1)
        four = pattern_traffic(pattern, layout, 2**20, seed=0, qps=4)
        assert four.flows == 4 * one.flows, pattern
        assert four.total_bytes == pytest.approx(one.total_bytes), pattern


@pytest.mark.parametrize("fmt", ["table", "md", "html"])
def test_reports_print_the_workload_as_run_and_the_performance_notes(
    tmp_path: Path, fmt: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 2048}\nworkload: {model: deepseek-v3}\n")
    out = tmp_path / f"report.{fmt}"
    result = CliRunner().invoke(
        app, ["compare", str(spec), "-f", fmt, "-o", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "TP1 PP16 DP128 EP64, fp8, seq 4,096" in text  # what the step model runs
    assert "TP8 PP1" not in text
    assert "NCCL tuner" in text  # a performance note
    assert "money over" in text.lower()


def test_a_deployed_misconfiguration_gets_a_flip_point_for_fixing_it() -> None:
    from fabricplan.evaluate import evaluate
    from fabricplan.recommend.decision import recommend

    spec = {
        "cluster": {"gpus": 256},
        "fabric": {"oversubscription": 3, "topology": "fat_tree", "lossless": {"pfc": False}},
    }
    valid = parse_spec(spec)
    rec = recommend(valid, evaluate(valid, backend="fake"), backend="fake")
    configuration = [f for f in rec.flips if f.kind == "configuration"]
    assert len(configuration) == 1 and "lossless configuration" in configuration[0].description
    # Both numbers, the deployed and the fixed one, for the PFC fabric, and the answer either way.
    words = configuration[0].description
    assert "roce_v2 total $" in words and " -> $" in words and "step " in words
    assert "the answer stays" in words or "ranks first instead of" in words
    clean = parse_spec({**spec, "fabric": {"oversubscription": 3, "topology": "fat_tree"}})
    rec = recommend(clean, evaluate(clean, backend="fake"), backend="fake")
    assert not [f for f in rec.flips if f.kind == "configuration"]


class _SlowRoceSimulator:
    """A stand-in simulator (named like one): the analytic results, with every RoCE collective
    three times slower, as a congested fabric would simulate."""

    name = "flow"

    def perform(self, valid, design, request):  # type: ignore[no-untyped-def]
        from fabricplan.backends import get_backend

        result = get_backend("analytic").perform(valid, design, request)
        factor = 3.0 if design.technology == "roce_v2" else 1.0
        return result.model_copy(
            update={
                "backend": "flow",
                "collectives": tuple(
                    p.model_copy(update={"time_us": p.time_us * factor}) for p in result.collectives
                ),
            }
        )


def test_simulated_collectives_go_into_the_step_and_can_change_the_answer() -> None:
    from fabricplan.evaluate import evaluate_feasible
    from fabricplan.recommend.decision import decide

    valid = parse_spec({"cluster": {"gpus": 2048}, "workload": {"tp": 8, "pp": 4}})
    analytic, _ = evaluate_feasible(valid)
    simulated, _ = evaluate_feasible(valid, backend=_SlowRoceSimulator())
    steps = {
        kind: {e.technology: e.performance.step.step_s for e in evals if e.performance.step}
        for kind, evals in (("analytic", analytic), ("simulated", simulated))
    }
    assert steps["simulated"]["infiniband"] == pytest.approx(steps["analytic"]["infiniband"])
    assert steps["simulated"]["roce_v2"] > steps["analytic"]["roce_v2"]
    assert decide(analytic, valid).technology == "roce_v2"
    assert decide(simulated, valid).technology == "infiniband"
    roce = next(e for e in simulated if e.technology == "roce_v2")
    assert any("step time uses the simulated collectives" in n for n in roce.performance.notes)


def test_more_queue_pairs_spread_ecmp_collisions_in_the_analytic_model() -> None:
    from fabricplan.analytic.profile import fabric_profile
    from fabricplan.analytic.traffic import pattern_throughput, ring_pattern

    def throughput(qps: int | None) -> float:
        valid = parse_spec(
            {
                "cluster": {"gpus": 2048},
                "fabric": {"technologies": ["roce_v2"], "topology": "fat_tree"},
                "nccl": {"qps_per_connection": qps},
            }
        )
        prof = fabric_profile(valid, design_fabric(valid, "roce_v2"))
        assert prof.qps_per_connection == (qps or 1)
        pattern = ring_pattern(256, 8, prof.nodes_per_leaf, prof.nodes_per_pod)
        return pattern_throughput(prof, pattern, 256)

    one, eight = throughput(None), throughput(8)
    assert one < eight <= 1.0
