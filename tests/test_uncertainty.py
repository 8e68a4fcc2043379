"""Uncertainty bands: regenerated from the validation residuals, carried by every prediction,
and used by check-bench and the report; calibration profiles scoped to their fabric."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabricplan.analytic import uncertainty
from fabricplan.analytic.uncertainty import (
    BandRecord,
    BandTable,
    Residual,
    band_for,
    band_table,
    difference_inside,
    inside_uncertainty,
    load_bands,
    regime_of_size,
    step_band,
    step_estimate,
    with_uncertainty,
)
from fabricplan.evaluate import calibrated_performance, evaluate_one
from fabricplan.measure import expectation
from fabricplan.measure.expectation import JudgeSpec, ModelPredictor, judge_files
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord, RunRecord
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    CalibrationProfile,
    CollectivePoint,
    Estimate,
    PerformanceResult,
    PerfRequest,
    StepTimeResult,
)
from fabricplan.model.scenario import ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "validation.py"
BANDS = ROOT / "src" / "fabricplan" / "analytic" / "data" / uncertainty.BANDS_FILE


def _script() -> ModuleType:
    name = "fabricplan_benchmark_validation"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def both() -> ValidScenario:
    return parse_spec(
        {
            "cluster": {"gpus": 256, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
            "fabric": {"technologies": ["infiniband", "roce_v2"]},
        }
    )


# --- the stored bands are what the current model's residuals give ---


def test_stored_bands_match_the_current_model() -> None:
    # A model change moves the residuals; `benchmarks/validation.py --write-bands` must be rerun.
    script = _script()
    functions = script.model_functions()
    assert functions is not None
    records = [script.compare_row(row, functions) for row in script.load_reference()]
    computed = script.residual_bands(records)
    stored = BandTable.model_validate(yaml.safe_load(BANDS.read_text(encoding="utf-8")))
    assert stored == computed, "rerun: python benchmarks/validation.py --write-bands"
    assert BANDS.read_text(encoding="utf-8") == uncertainty.bands_yaml(computed)


def test_every_regime_has_a_pooled_band_that_contains_one() -> None:
    table = load_bands()
    for regime in uncertainty.REGIMES:
        band = band_for(table, regime, None)
        assert band.technology is None and band.ratio_low < 1.0 < band.ratio_high


def _residuals(regime: str, tech: str, ratios: list[float]) -> list[Residual]:
    return [
        Residual(regime=regime, technology=tech, ratio=r, abs_error_pct=abs(1 / r - 1) * 100)  # type: ignore[arg-type]
        for r in ratios
    ]


def test_band_table_covers_the_central_rows_and_falls_back_when_thin() -> None:
    rows = _residuals("bandwidth", "infiniband", [0.80, 0.90, 0.95, 1.0, 1.05, 1.10, 1.30])
    rows += _residuals("latency", "roce_v2", [0.5])  # one row: too few for its own band
    table = band_table(rows, "test")
    ib = band_for(table, "bandwidth", "infiniband")
    assert ib.technology == "infiniband" and ib.rows == 7
    # 10th..90th percentile of the seven ratios (inclusive method): 0.86 and 1.18
    assert (ib.ratio_low, ib.ratio_high) == pytest.approx((0.86, 1.18))
    latency = band_for(table, "latency", "roce_v2")
    assert latency.technology is None and latency.rows == 8 and "only 1" in latency.basis
    # a technology below the per-technology minimum takes the pooled band
    assert band_for(table, "bandwidth", "roce_v2").technology is None


def test_an_exact_model_still_carries_the_noise_floor() -> None:
    table = band_table(_residuals("mid", "infiniband", [1.0, 1.0, 1.0]), "test")
    band = band_for(table, "mid", "infiniband")
    assert band.ratio_low == pytest.approx(1 - uncertainty.NOISE_FLOOR_FRACTION)
    assert band.ratio_high == pytest.approx(1 + uncertainty.NOISE_FLOOR_FRACTION)


@pytest.mark.parametrize(
    ("size", "regime"),
    [(8, "latency"), (65535, "latency"), (65536, "mid"), (2**26 - 1, "mid"), (2**26, "bandwidth")],
)
def test_regimes_split_at_64k_and_64m(size: int, regime: str) -> None:
    assert regime_of_size(size) == regime


# --- every prediction carries its band ---


def _assert_banded(value: float, low: float | None, high: float | None) -> None:
    assert low is not None and high is not None
    assert low <= value <= high and low < high


def test_every_predicted_value_of_compare_carries_a_band(both: ValidScenario) -> None:
    evaluation = evaluate_one(both, "roce_v2")
    perf = evaluation.performance
    _assert_banded(perf.base_latency_us, perf.base_latency_us_low, perf.base_latency_us_high)
    assert perf.collectives and perf.p2p and perf.step is not None
    for c in perf.collectives:
        _assert_banded(c.time_us, c.time_us_low, c.time_us_high)
        _assert_banded(c.busbw_GBps, c.busbw_GBps_low, c.busbw_GBps_high)
        _assert_banded(c.algbw_GBps, c.algbw_GBps_low, c.algbw_GBps_high)
    for p in perf.p2p:
        _assert_banded(p.latency_us, p.latency_us_low, p.latency_us_high)
        _assert_banded(p.bw_gbps, p.bw_gbps_low, p.bw_gbps_high)
    step = perf.step
    _assert_banded(step.step_s, step.step_s_low, step.step_s_high)
    _assert_banded(step.comm_exposed_s, step.comm_exposed_s_low, step.comm_exposed_s_high)
    _assert_banded(step.exposed_fraction, step.exposed_fraction_low, step.exposed_fraction_high)
    _assert_banded(
        step.gpu_hours_lost_per_year,
        step.gpu_hours_lost_per_year_low,
        step.gpu_hours_lost_per_year_high,
    )
    assert "analytic bands (" in perf.uncertainty


def test_a_point_takes_its_regimes_band_for_its_technology(both: ValidScenario) -> None:
    perf = evaluate_one(both, "infiniband").performance
    table = load_bands()
    for c in perf.collectives:
        band = band_for(table, regime_of_size(c.size_bytes), "infiniband")
        assert c.busbw_GBps_high == pytest.approx(c.busbw_GBps * band.ratio_high)
        assert c.time_us_high == pytest.approx(c.time_us / band.ratio_low)


def test_bands_are_idempotent(both: ValidScenario) -> None:
    perf = evaluate_one(both, "infiniband").performance
    assert with_uncertainty(perf) == perf


def test_step_band_adds_slow_communication_and_saves_at_most_the_exposed_part() -> None:
    step = StepTimeResult(
        compute_s=1.0,
        comm_total_s=0.4,
        comm_exposed_s=0.1,
        step_s=1.1,
        comm_by_dimension_s={},
        exposed_fraction=0.1 / 1.1,
        gpu_hours_lost_per_year=0.0,
    )
    banded = step_band(step, 0.5, 4.0)
    # half speed: 0.8 s of communication, 0.3 s hidden -> 0.5 s exposed
    assert banded.step_s_high == pytest.approx(1.5)
    assert banded.exposed_fraction_high == pytest.approx(0.5 / 1.5)
    assert banded.exposed_fraction_low == 0.0
    # four times faster: 0.1 s of communication hides entirely behind 0.3 s of compute
    assert banded.step_s_low == pytest.approx(1.0)
    estimate = step_estimate(banded)
    assert (estimate.low, estimate.value, estimate.high) == pytest.approx((1.0, 1.1, 1.5))


def test_the_fabric_band_leaves_the_nvlink_only_time_out() -> None:
    # 0.3 s of TP on NVLink and 0.2 s across the fabric, 0.1 s of it hidden: at half speed the
    # fabric part is 0.4 s with 0.1 s hidden -> 0.3 s exposed (the step band also slows TP).
    step = StepTimeResult(
        compute_s=1.0,
        comm_total_s=0.5,
        comm_exposed_s=0.4,
        comm_exposed_in_domain_s=0.3,
        step_s=1.4,
        comm_by_dimension_s={"tp": 0.3, "dp": 0.2},
        exposed_fraction=0.4 / 1.4,
        gpu_hours_lost_per_year=0.0,
    )
    banded = step_band(step, 0.5, 2.0)
    assert banded.comm_exposed_fabric_s_high == pytest.approx(0.3)
    assert banded.comm_exposed_fabric_s_low == pytest.approx(0.0)  # 0.1 s, all of it hidden
    assert banded.step_s_high == pytest.approx(1.0 + 1.0 - 0.1)  # 1 s of communication at half
    assert banded.step_s_high - step.step_s > banded.comm_exposed_fabric_s_high - 0.1


def test_json_of_compare_has_low_and_high_beside_the_step_time(tmp_path: Path) -> None:
    from fabricplan.cli.app import create_app

    app = create_app()
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"cluster": {"gpus": 256}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["compare", str(spec), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    for option in doc["options"]:
        step = option["performance"]["step"]
        assert step["step_s_low"] <= step["step_s"] <= step["step_s_high"]
        point = option["performance"]["collectives"][0]
        assert point["busbw_GBps_low"] <= point["busbw_GBps"] <= point["busbw_GBps_high"]


def test_the_table_prints_value_and_band(tmp_path: Path) -> None:
    from fabricplan.cli.app import create_app

    app = create_app()
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"cluster": {"gpus": 256}}), encoding="utf-8")
    result = CliRunner().invoke(app, ["compare", str(spec), "--format", "md"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("| step time"))
    # e.g. "| step time | 2.896 s (2.868-2.936) | ..."
    assert line.count(" s (") == 2 and line.count(")") == 2


estimates = st.builds(
    lambda v, lo, hi: Estimate(value=v, low=v * lo, high=v * hi),
    st.floats(0.1, 1e6),
    st.floats(0.2, 1.0),
    st.floats(1.0, 5.0),
)


@given(estimates, estimates)
def test_inside_uncertainty_is_symmetric_and_reflexive(a: Estimate, b: Estimate) -> None:
    assert inside_uncertainty(a, b) == inside_uncertainty(b, a)
    assert inside_uncertainty(a, a)


@given(estimates, st.floats(1.01, 100.0))
def test_a_difference_beyond_both_bands_is_not_inside(a: Estimate, gap: float) -> None:
    b = Estimate(value=a.high * gap * 2, low=a.high * gap, high=a.high * gap * 3)
    assert not inside_uncertainty(a, b)


@given(estimates, estimates, st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_the_band_of_a_difference_lies_between_correlated_and_overlapping(
    a: Estimate, b: Estimate, shared_a: float, gap: float
) -> None:
    a_step, b_step = shared_a + a.value + gap, shared_a + b.value
    diff, half, inside = difference_inside(a_step, a, b_step, b)
    # the sides that move the difference towards zero
    slow, fast = (a, b) if diff >= 0 else (b, a)
    down, up = slow.value - slow.low, fast.high - fast.value
    assert diff == pytest.approx(a.value + gap - b.value)
    assert max(down, up) - 1e-9 <= half <= down + up + 1e-9  # no band <= this <= interval sum
    assert inside == (abs(diff) <= half)
    mirrored = difference_inside(b_step, b, a_step, a)
    assert mirrored[2] == inside
    if diff != 0:  # level steps are inside whichever side is read
        assert mirrored[1] == pytest.approx(half)


# --- check-bench judges by the bands ---


class _FixedCollective:
    """A backend answering every all_reduce size with 10 us and 100 GB/s busbw."""

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        return PerformanceResult(
            backend="fake",
            technology=design.technology,
            base_latency_us=2.0,
            collectives=tuple(
                CollectivePoint(
                    collective="all_reduce",
                    size_bytes=s,
                    algorithm="ring/simple",
                    time_us=10.0,
                    algbw_GBps=50.0,
                    busbw_GBps=100.0,
                )
                for s in request.sizes_bytes
            ),
        )


def _nccl_file(time_us: float, size: int = 2**20) -> BenchFileRecord:
    m = MeasurementRecord(
        file="n.log",
        line=9,
        run=0,
        tool="nccl-tests",
        flavor="nccl-tests",
        test="all_reduce",
        size_bytes=size,
        time_us=time_us,
        algbw_GBps=50.0 * 10.0 / time_us,
        busbw_GBps=100.0 * 10.0 / time_us,
        ranks=16,
    )
    run = RunRecord(
        index=0,
        tool="nccl-tests",
        flavor="nccl-tests",
        test="all_reduce",
        line=3,
        ranks=16,
        technology_hint="roce",
    )
    return BenchFileRecord(path="n.log", format="nccl-tests text", runs=(run,), measurements=(m,))


WIDE_MID = BandTable(
    coverage=0.8,
    noise_floor=0.02,
    source="test",
    bands=tuple(
        BandRecord(regime=r, rows=9, ratio_low=lo, ratio_high=hi)
        for r, lo, hi in (("latency", 0.8, 1.2), ("mid", 0.6, 2.6), ("bandwidth", 0.95, 1.05))
    ),
)


@pytest.mark.parametrize(("speedup", "status"), [(2.0, "ok"), (0.7, "ok"), (2.8, "fast")])
def test_a_mid_size_row_inside_the_band_is_as_expected(
    both: ValidScenario, monkeypatch: pytest.MonkeyPatch, speedup: float, status: str
) -> None:
    # With the old fixed +-15 % band a run twice as fast as the model was "fast".
    monkeypatch.setattr(expectation, "load_bands", lambda: WIDE_MID)
    (j,) = judge_files([_nccl_file(10.0 / speedup)], both, JudgeSpec(), _FixedCollective().perform)
    assert j.ratio == pytest.approx(speedup) and j.status == status
    assert (j.ratio_low, j.ratio_high) == (0.6, 2.6) and j.band_basis.startswith("mid band")
    assert j.expected is not None and j.expected.high == pytest.approx(260.0)


def test_a_fixed_band_still_overrides(both: ValidScenario, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expectation, "load_bands", lambda: WIDE_MID)
    how = JudgeSpec(band=0.15)
    (j,) = judge_files([_nccl_file(5.0)], both, how, _FixedCollective().perform)
    assert j.status == "fast" and (j.ratio_low, j.ratio_high) == (0.85, 1.15)


def test_the_shipped_log_is_judged_by_the_stored_bands(both: ValidScenario) -> None:
    from fabricplan.analytic.performance import analytic_performance
    from fabricplan.measure.reader import read_bench_file

    log = ROOT / "tests" / "data" / "measure" / "nccl_2023_multi_roce_mpi.log"
    judged = judge_files([read_bench_file(log)], both, JudgeSpec(), analytic_performance)
    table = load_bands()
    for j in judged:
        if j.ratio is None:
            continue
        band = band_for(table, regime_of_size(j.measurement.size_bytes), j.technology)
        inside = band.ratio_low <= j.ratio <= band.ratio_high
        assert (j.status == "ok") == inside, j.measurement.size_bytes


# --- calibration applies to the fabric it was fitted on ---

ROCE_PROFILE = CalibrationProfile(
    nic_bw_efficiency=0.5, nic_latency_ns=2000.0, technology="roce_v2", source="roce logs"
)


def test_a_roce_profile_leaves_the_infiniband_prediction_alone(both: ValidScenario) -> None:
    plain = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**33,), step=False)
    calibrated = plain.model_copy(update={"calibration": ROCE_PROFILE})
    ib_design, roce_design = design_fabric(both, "infiniband"), design_fabric(both, "roce_v2")
    ib_before = calibrated_performance(both, ib_design, "analytic", plain)
    ib_after = calibrated_performance(both, ib_design, "analytic", calibrated)
    assert ib_after.collectives == ib_before.collectives
    assert ib_after.base_latency_us == ib_before.base_latency_us
    assert ib_after.calibration is None and "not applied" in ib_after.notes[-1]
    roce_before = calibrated_performance(both, roce_design, "analytic", plain)
    roce_after = calibrated_performance(both, roce_design, "analytic", calibrated)
    assert roce_after.collectives[0].busbw_GBps < roce_before.collectives[0].busbw_GBps
    effect = roce_after.calibration
    assert effect is not None and effect.technology == "roce_v2"
    assert {c.name for c in effect.changes} == {"nic_bw_efficiency", "nic_latency_ns"}
    assert effect.base_latency_us_before == pytest.approx(roce_before.base_latency_us)
    assert roce_after.base_latency_us > roce_before.base_latency_us


def test_a_profile_for_another_nic_is_not_applied(both: ValidScenario) -> None:
    other = ROCE_PROFILE.model_copy(update={"nic": "not-this-nic"})
    design = design_fabric(both, "roce_v2")
    result = calibrated_performance(both, design, "analytic", PerfRequest(calibration=other))
    assert result.calibration is None and "not-this-nic" in result.notes[-1]


def test_check_bench_expectations_ignore_a_profile_of_another_fabric(both: ValidScenario) -> None:
    from fabricplan.analytic.performance import analytic_performance

    predictor = ModelPredictor(both, "infiniband", analytic_performance, gpus=16)
    m = _nccl_file(10.0).measurements[0]
    assert predictor.applies(ROCE_PROFILE) is None
    assert predictor.expected([m], ROCE_PROFILE) == predictor.expected([m], None)


def test_the_report_says_what_the_profile_changed(tmp_path: Path) -> None:
    from fabricplan.cli.app import create_app

    app = create_app()
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"cluster": {"gpus": 256}}), encoding="utf-8")
    profile = tmp_path / "p.yaml"
    data: dict[str, Any] = ROCE_PROFILE.model_dump(exclude_none=True)
    profile.write_text(yaml.safe_dump(data), encoding="utf-8")
    table = CliRunner().invoke(
        app, ["compare", str(spec), "--calibration", str(profile), "--format", "md"]
    )
    assert table.exit_code == 0, table.output
    line = next(x for x in table.output.splitlines() if "calibration applied" in x)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "-"  # infiniband: not applied
    assert "nic_bw_efficiency 1->0.5" in cells[2] and "latency" in cells[2] and "step" in cells[2]
    notes = [x for x in table.output.splitlines() if x.startswith("- ")]
    assert any(x.startswith("- infiniband: calibration profile not applied") for x in notes)
    assert any(x.startswith("- roce_v2: calibration profile applied (roce logs)") for x in notes)
    assert any("figures in brackets are the model's uncertainty" in x for x in notes)
    doc = json.loads(
        CliRunner()
        .invoke(app, ["compare", str(spec), "--calibration", str(profile), "-f", "json"])
        .output
    )
    effects = {o["technology"]: o["performance"]["calibration"] for o in doc["options"]}
    assert effects["infiniband"] is None and effects["roce_v2"]["source"] == "roce logs"


# --- the flow and packet levels carry the flow level's own bands; seeds widen them -------------

FLOW_BANDS = ROOT / "src" / "fabricplan" / "analytic" / "data" / uncertainty.BANDS_FILES["flow"]


def test_stored_flow_bands_match_the_flow_level() -> None:
    # The validation rows run at the flow level (about 20 s): a change to the simulator or the
    # reference set reruns `benchmarks/validation.py --write-bands`.
    script = _script()
    functions = script.model_functions("flow")
    records = [script.compare_row(row, functions) for row in script.load_reference()]
    assert FLOW_BANDS.read_text(encoding="utf-8") == uncertainty.bands_yaml(
        script.residual_bands(records)
    ), "rerun: python benchmarks/validation.py --write-bands"


def test_each_level_names_the_bands_it_carries() -> None:
    point = CollectivePoint(
        collective="all_reduce",
        size_bytes=2**30,
        algorithm="x",
        time_us=1000.0,
        algbw_GBps=1.0,
        busbw_GBps=2.0,
    )
    for backend, level in (("analytic", "analytic"), ("flow", "flow"), ("packet", "flow")):
        result = PerformanceResult(
            backend=backend, technology="infiniband", base_latency_us=2.0, collectives=(point,)
        )
        banded = with_uncertainty(result)
        band = band_for(load_bands(level), "bandwidth", "infiniband")
        assert banded.uncertainty.startswith(f"{level} bands (")
        assert banded.collectives[0].time_us_high == pytest.approx(1000.0 / band.ratio_low)
    assert load_bands("flow") != load_bands("analytic")


def _flow_ring(tech: str, seeds: int | None) -> CollectivePoint:
    from fabricplan.sim.run import simulated_backend

    valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": [tech]}})
    request = PerfRequest(
        collectives=("all_reduce",), sizes_bytes=(2**28,), p2p=False, step=False, seeds=seeds
    )
    return simulated_backend("flow", valid, design_fabric(valid, tech), request).collectives[0]


def test_an_ecmp_flow_run_reports_its_spread_over_seeds() -> None:
    one = _flow_ring("roce_v2", 1)
    three = _flow_ring("roce_v2", None)  # ECMP at the flow level: 3 seeds by default
    assert one.time_us_seed_low is None and one.time_us_seed_high is None
    assert three.time_us == pytest.approx(one.time_us)  # the value is seed 0's run, as before
    assert three.time_us_seed_low is not None and three.time_us_seed_high is not None
    assert three.time_us_seed_low <= three.time_us <= three.time_us_seed_high
    banded = with_uncertainty(
        PerformanceResult(
            backend="flow", technology="roce_v2", base_latency_us=2.0, collectives=(three,)
        )
    ).collectives[0]
    band = band_for(load_bands("flow"), "bandwidth", "roce_v2")
    assert banded.time_us_low == pytest.approx(three.time_us_seed_low / band.ratio_high)
    assert banded.time_us_high == pytest.approx(three.time_us_seed_high / band.ratio_low)
    assert banded.busbw_GBps_low is not None and banded.busbw_GBps_low <= three.busbw_GBps


def test_adaptive_routing_runs_one_seed() -> None:
    point = _flow_ring("infiniband", None)
    assert point.time_us_seed_low is None


def test_the_step_band_widens_by_the_seed_spread() -> None:
    def seeded(high: float | None) -> PerformanceResult:
        point = CollectivePoint(
            collective="all_reduce",
            size_bytes=2**30,
            algorithm="flow/ring",
            time_us=1000.0,
            algbw_GBps=1.0,
            busbw_GBps=2.0,
            time_us_seed_low=None if high is None else 1000.0,
            time_us_seed_high=high,
        )
        step = StepTimeResult(
            compute_s=1.0,
            comm_total_s=0.5,
            comm_exposed_s=0.1,
            step_s=1.1,
            comm_by_dimension_s={},
            exposed_fraction=0.09,
            gpu_hours_lost_per_year=0.0,
        )
        result = PerformanceResult(
            backend="flow",
            technology="roce_v2",
            base_latency_us=2.0,
            collectives=(point,),
            step=step,
        )
        banded = with_uncertainty(result).step
        assert banded is not None and banded.step_s_high is not None
        return banded.step_s_high

    low, _high = uncertainty.envelope(
        [band_for(load_bands("flow"), r, "roce_v2") for r in uncertainty.STEP_REGIMES]
    )
    # the communication (0.5 s, 0.1 s exposed) runs up to 1.5x slower on its slowest seed
    assert seeded(None) == pytest.approx(1.1 - 0.1 + max(0.0, 0.5 / low - 0.4))
    assert seeded(1500.0) == pytest.approx(1.1 - 0.1 + max(0.0, 0.5 * 1.5 / low - 0.4))
