"""Calibration recovers known parameters from synthetic measurements with seeded noise; profiles
are written and read back, and bad ones are refused in one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fabricplan.analytic.performance import analytic_performance
from fabricplan.errors import InputFileError
from fabricplan.measure.calibration import (
    CalibrationFitResult,
    FloatArray,
    calibrate_files,
    fit_profile,
    load_profile,
    profile_yaml,
)
from fabricplan.measure.expectation import ModelPredictor
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord, RunRecord
from fabricplan.model.results import CalibrationProfile
from fabricplan.spec import parse_spec

NOISE = 0.02
"""Log-normal measurement noise of the synthetic data (2 %)."""
LINE_GBPS = 400.0
DEFAULTS = {
    "nic_latency_ns": 600.0,
    "switch_latency_ns": 300.0,
    "nic_bw_efficiency": 1.0,
    "collective_efficiency": 0.95,
    "collective_latency_us": 4.0,
}
TRUTH = {
    "nic_latency_ns": 900.0,
    "switch_latency_ns": 450.0,
    "nic_bw_efficiency": 0.88,
    "collective_efficiency": 0.8,
    "collective_latency_us": 6.0,
}

# (kind, ranks, switch hops, size): ring all_reduce in and across leaves, perftest write_bw,
# write_lat at one and at three switch hops.
ROWS = (
    [("all_reduce", n, h, 2**k) for n, h in ((16, 1), (64, 3)) for k in range(3, 34, 2)]
    + [("write_bw", 2, 1, 2**k) for k in range(12, 24, 2)]
    + [("write_lat", 2, h, s) for h in (1, 3) for s in (2, 64, 1024)]
)


def ring_model(profile: CalibrationProfile | None) -> FloatArray:
    """A small model with the same parameters as the analytic one, derived from first principles:
    a ring all_reduce takes 2(n-1) steps, each paying the software cost and one network hop
    (two adapters, the switches), and moves 2(n-1)/n of the data at the achieved rate."""
    p = {k: (getattr(profile, k, None) or v) for k, v in DEFAULTS.items()}
    goodput_GBps = LINE_GBPS / 8 * p["nic_bw_efficiency"]  # noqa: N806
    out = []
    for kind, ranks, hops, size in ROWS:
        hop_us = (2 * p["nic_latency_ns"] + hops * p["switch_latency_ns"]) / 1e3
        if kind == "all_reduce":
            moved = 2 * (ranks - 1) / ranks * size
            t = 2 * (ranks - 1) * (p["collective_latency_us"] + hop_us) + moved / (
                goodput_GBps * p["collective_efficiency"] * 1e3
            )
            out.append(moved / t / 1e3)  # busbw
        elif kind == "write_bw":
            out.append(size * 8 / ((hop_us + size / (goodput_GBps * 1e3)) * 1e3))  # Gb/s
        else:
            out.append(hop_us + size * 8 / (LINE_GBPS * 1e3))  # us
    return np.array(out)


def _noisy(truth: FloatArray, seed: int) -> FloatArray:
    return truth * np.exp(np.random.default_rng(seed).normal(0.0, NOISE, truth.size))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recovers_known_parameters_within_five_percent(seed: int) -> None:
    measured = _noisy(ring_model(CalibrationProfile(**TRUTH)), seed)
    fit = fit_profile(ring_model, measured, start=DEFAULTS)
    for name, true in TRUTH.items():
        assert getattr(fit.profile, name) == pytest.approx(true, rel=0.05), name
    # NVLink never enters this model: the data cannot determine it, so the default stays.
    assert fit.kept_default == ("nvlink_bw_efficiency",)
    assert fit.profile.nvlink_bw_efficiency is None
    assert fit.error_after_pct < 2 * NOISE * 100 < fit.error_before_pct
    assert fit.points == len(ROWS)


def test_collinear_latencies_are_not_both_reported() -> None:
    # Only one hop count: 2 x nic + 1 x switch is all the data can see.
    one_hop = [i for i, row in enumerate(ROWS) if row[2] == 1]
    truth = CalibrationProfile(nic_latency_ns=900.0, switch_latency_ns=450.0)
    measured = _noisy(ring_model(truth), 4)[one_hop]

    def model(profile: CalibrationProfile | None) -> FloatArray:
        return ring_model(profile)[one_hop]

    fit = fit_profile(model, measured, ["nic_latency_ns", "switch_latency_ns"], start=DEFAULTS)
    assert len(fit.fitted) == 1 and len(fit.kept_default) == 1
    # The one kept absorbs the sum: 2 x 900 + 450 = 2250 ns per hop.
    p = {**DEFAULTS, **fit.profile.model_dump(exclude_none=True)}
    assert 2 * p["nic_latency_ns"] + p["switch_latency_ns"] == pytest.approx(2250, rel=0.05)


def test_nothing_to_fit_is_refused() -> None:
    with pytest.raises(InputFileError) as info:
        fit_profile(lambda p: np.full(3, np.nan), np.ones(3))
    assert info.value.code == "FP463"


def _synthetic_files(valid_truth: CalibrationProfile, seed: int) -> list[BenchFileRecord]:
    """Measurements made by the analytic model itself at ``valid_truth``, with noise."""
    rows: list[MeasurementRecord] = []
    base = {"file": "synthetic.log", "line": 1}
    for run, (test, ranks) in enumerate(
        (("all_reduce", 16), ("all_reduce", 1024), ("all_gather", 1024))
    ):
        rows += [
            MeasurementRecord(
                **base,
                run=run,
                tool="nccl-tests",
                flavor="nccl-tests",
                test=test,
                size_bytes=2**k,
                time_us=1.0,
                busbw_GBps=1.0,
                algbw_GBps=1.0,
                ranks=ranks,
            )
            for k in range(10, 34, 2)
        ]
    rows += [
        MeasurementRecord(
            **base,
            run=3,
            tool="perftest",
            flavor="perftest",
            test="write_bw",
            size_bytes=2**k,
            time_us=1.0,
            bw_gbps=1.0,
        )
        for k in range(1, 24, 2)
    ]
    rows += [
        MeasurementRecord(
            **base,
            run=4,
            tool="perftest",
            flavor="perftest",
            test="write_lat",
            size_bytes=2**k,
            time_us=1.0,
            latency_us=1.0,
        )
        for k in (1, 4, 7, 10)
    ]
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband"]}})
    predictor = ModelPredictor(valid, "infiniband", analytic_performance)
    truth = np.array([e.value for e, _ in predictor.expected(rows, valid_truth) if e])
    measured = _noisy(truth, seed)
    noisy = [
        m.model_copy(update={m.quantity: float(v)}) for m, v in zip(rows, measured, strict=True)
    ]
    runs = tuple(
        RunRecord(
            index=i, tool=r.tool, flavor=r.flavor, test=r.test, line=1, technology_hint="infiniband"
        )
        for i, r in {m.run: m for m in noisy}.items()
    )
    return [
        BenchFileRecord(
            path="synthetic.log", format="synthetic", runs=runs, measurements=tuple(noisy)
        )
    ]


def test_calibrates_the_analytic_model_from_its_own_noisy_output() -> None:
    truth = CalibrationProfile(
        nic_latency_ns=800,
        switch_latency_ns=400,
        nic_bw_efficiency=0.9,
        collective_efficiency=0.85,
        collective_latency_us=8.0,
    )
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband"]}})
    fit, tech = calibrate_files(_synthetic_files(truth, seed=5), valid, analytic_performance)
    assert tech == "infiniband"
    assert fit.error_before_pct > 20 and fit.error_after_pct < 2 * NOISE * 100
    # Well-determined parameters land close; every fitted one within 3 of its standard errors.
    assert fit.profile.nic_bw_efficiency == pytest.approx(0.9, rel=0.03)
    assert fit.profile.collective_latency_us == pytest.approx(8.0, rel=0.05)
    for name in fit.fitted:
        true = getattr(truth, name) or getattr(CalibrationProfile(), name)
        if true is None:
            continue
        error = abs(math.log(getattr(fit.profile, name) / true))
        assert error <= 3 * math.log1p(fit.uncertainty_pct[name] / 100), name


def test_calibrating_two_technologies_at_once_is_refused() -> None:
    valid = parse_spec({"cluster": {"gpus": 1024}})
    files = _synthetic_files(CalibrationProfile(), seed=1)
    runs = tuple(
        r.model_copy(update={"technology_hint": "roce" if r.index else "infiniband"})
        for r in files[0].runs
    )
    with pytest.raises(InputFileError) as info:
        calibrate_files([files[0].model_copy(update={"runs": runs})], valid, analytic_performance)
    assert info.value.code == "FP464"


def test_profile_yaml_round_trip(tmp_path: Path) -> None:
    profile = CalibrationProfile(nic_latency_ns=812.5, nic_bw_efficiency=0.91, source="x.log")
    fit = CalibrationFitResult(
        profile=profile,
        fitted=("nic_latency_ns", "nic_bw_efficiency"),
        kept_default=("switch_latency_ns",),
        uncertainty_pct={"nic_latency_ns": 3.0, "nic_bw_efficiency": 1.0},
        error_before_pct=30.0,
        error_after_pct=2.0,
        points=40,
    )
    path = tmp_path / "profile.yaml"
    path.write_text(profile_yaml(fit))
    assert load_profile(path) == profile
    assert "not determined" in path.read_text()


@pytest.mark.parametrize(
    ("content", "code", "where"),
    [
        (None, "FP460", "p.yaml"),
        ("nic_latency_ns: [1,\n", "FP461", "p.yaml:"),
        ("- 1\n- 2\n", "FP462", "p.yaml"),
        ("nic_latncy_ns: 800\n", "FP462", "p.yaml: nic_latncy_ns"),
        ("nic_bw_efficiency: 1.4\n", "FP462", "p.yaml: nic_bw_efficiency"),
    ],
)
def test_bad_profiles_are_refused_in_one_line(
    tmp_path: Path, content: str | None, code: str, where: str
) -> None:
    path = tmp_path / "p.yaml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputFileError) as info:
        load_profile(path)
    assert info.value.code == code
    assert info.value.where.startswith(str(tmp_path / where))
    assert "\n" not in str(info.value)


def test_empty_profile_is_the_model_defaults(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("# nothing fitted\n")
    assert load_profile(path) == CalibrationProfile()
