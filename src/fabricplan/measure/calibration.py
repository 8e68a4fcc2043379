"""Fit the model's free parameters to a cluster's measurements, and read and write the result.

The free parameters are the fields of :class:`~fabricplan.model.results.CalibrationProfile`:
adapter and switch-hop latency, the share of the line rate a NIC achieves, the share of NVLink
NCCL reaches, the collective protocol efficiency and a fixed software cost per collective step.

The fit minimises the squared log ratio between model and measurement over every measurement the
model can predict (busbw for nccl-tests rows, bandwidth or latency for perftest rows), so that a
10 % miss weighs the same at 8 B and at 8 GiB. Parameters are fitted in log space within physical
bounds, with a weak pull towards their starting values so that directions the data cannot see stay
put. A parameter the data do not determine (its log standard error above
:data:`MAX_LOG_STD`) is dropped and the fit repeated: the profile then keeps the model's default
for it and says so, rather than reporting a number the data never constrained.

>>> import numpy as np
>>> def predict(p):       # a model with one parameter: bandwidth = 50 GB/s x efficiency
...     eff = (p.nic_bw_efficiency if p and p.nic_bw_efficiency else 1.0)
...     return np.full(4, 50.0 * eff)
>>> fit = fit_profile(predict, np.array([44.0, 45.0, 46.0, 45.0]), ["nic_bw_efficiency"])
>>> round(fit.profile.nic_bw_efficiency, 2), fit.error_before_pct > fit.error_after_pct
(0.9, True)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray
from pydantic import ValidationError

from fabricplan.errors import InputFileError
from fabricplan.input_file import FileKind, read_yaml_file
from fabricplan.measure.expectation import ModelPredictor, Perform, resolve_technology
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord
from fabricplan.model.base import Frozen
from fabricplan.model.results import CalibrationProfile, ParameterChange
from fabricplan.model.scenario import TechnologyName, ValidScenario

FloatArray = NDArray[np.float64]
Predict = Callable[[CalibrationProfile | None], FloatArray]


@dataclass(frozen=True)
class FreeParameter:
    """A fitted field of :class:`CalibrationProfile`: its bounds and a generic starting value."""

    name: str
    low: float
    high: float
    start: float


FREE_PARAMETERS: dict[str, FreeParameter] = {
    p.name: p
    for p in (
        FreeParameter("nic_latency_ns", 50.0, 20_000.0, 600.0),
        FreeParameter("switch_latency_ns", 20.0, 20_000.0, 300.0),
        FreeParameter("nic_bw_efficiency", 0.05, 1.0, 0.95),
        FreeParameter("nvlink_bw_efficiency", 0.05, 1.0, 0.85),
        FreeParameter("collective_efficiency", 0.05, 1.0, 0.9),
        FreeParameter("collective_latency_us", 0.01, 1_000.0, 5.0),
    )
}
"""Bounds are physical limits (no adapter is faster than 50 ns, no efficiency above 1), wide enough
never to decide a fit."""

PRIOR_WEIGHT = 0.05
"""Weight of the pull of each log-parameter towards its start, against residuals of order 1 per
measurement: negligible where the data speak, decisive only where they are silent."""
NOISE_FLOOR = 0.02
"""Smallest log residual scatter assumed when judging uncertainty (2 %: run-to-run noise of
nccl-tests on a quiet fabric), so that a perfect fit does not make every parameter look exact."""
MAX_LOG_STD = 0.25
"""A parameter whose log standard error exceeds this (about +-28 %) is not determined by the
data."""
LEAST_SQUARES_MAX_EVALUATIONS = 400
PROFILE_DIGITS = 5
"""Significant digits written to the profile (the fit is not better than 0.1 %)."""
_BAD_RESIDUAL = 10.0
"""Residual for a point the model cannot compute at a trial value (log ratio of ~e**10)."""


class CalibrationFitResult(Frozen):
    """A fitted profile and how well it fits."""

    profile: CalibrationProfile
    fitted: tuple[str, ...]
    """Parameters the data determined."""
    kept_default: tuple[str, ...]
    """Parameters the data did not determine (the model's default stays)."""
    uncertainty_pct: dict[str, float]
    """One standard error of each fitted parameter, in percent."""
    error_before_pct: float
    """Mean absolute error of the model with its defaults, in percent of the measured values."""
    error_after_pct: float
    points: int


def _mape(predicted: FloatArray, measured: FloatArray) -> float:
    ok = np.isfinite(predicted) & (predicted > 0)
    if not ok.any():
        return float("nan")
    return float(np.mean(np.abs(predicted[ok] / measured[ok] - 1.0)) * 100.0)


def _profile(names: Sequence[str], x: FloatArray, source: str) -> CalibrationProfile:
    values = {name: float(np.exp(v)) for name, v in zip(names, x, strict=True)}
    for name, value in values.items():
        # exp(log(1.0)) may land a hair above 1; the profile's bound is inclusive at 1.
        values[name] = min(value, FREE_PARAMETERS[name].high)
    return CalibrationProfile(**values, source=source)


def _fit(
    predict: Predict, measured: FloatArray, names: list[str], x0: FloatArray, source: str
) -> tuple[FloatArray, FloatArray]:
    """Least squares in log space; returns the solution and the data part of its Jacobian."""
    from scipy.optimize import least_squares

    log_measured = np.log(measured)

    def residuals(x: FloatArray) -> FloatArray:
        predicted = predict(_profile(names, x, source))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log(predicted) - log_measured
        r = np.where(np.isfinite(r), r, _BAD_RESIDUAL)
        return np.concatenate([r, PRIOR_WEIGHT * (x - x0)])

    lower = np.log([FREE_PARAMETERS[n].low for n in names])
    upper = np.log([FREE_PARAMETERS[n].high for n in names])
    solution = least_squares(
        residuals,
        np.clip(x0, lower, upper),
        bounds=(lower, upper),
        method="trf",
        diff_step=1e-4,
        max_nfev=LEAST_SQUARES_MAX_EVALUATIONS,
    )
    return np.asarray(solution.x, dtype=float), np.asarray(solution.jac, dtype=float)[
        : len(measured)
    ]


def _log_std(jacobian: FloatArray, residual_scatter: float) -> FloatArray:
    scatter = max(residual_scatter, NOISE_FLOOR)
    normal = jacobian.T @ jacobian + PRIOR_WEIGHT**2 * np.eye(jacobian.shape[1])
    covariance = scatter**2 * np.linalg.inv(normal)
    std: FloatArray = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    return std


def fit_profile(
    predict: Predict,
    measured: FloatArray,
    parameters: Sequence[str] = tuple(FREE_PARAMETERS),
    start: Mapping[str, float] | None = None,
    source: str = "",
) -> CalibrationFitResult:
    """Fit ``parameters`` so that ``predict(profile)`` matches ``measured``.

    Parameters
    ----------
    predict
        The model: a profile (``None`` = the model's defaults) to one value per measurement, NaN
        where it has none.
    measured
        The measured values, in the same order and units.
    parameters
        Names of :data:`FREE_PARAMETERS` to fit.
    start
        Starting values (the model's defaults are best); the generic ones otherwise.
    source
        Stored in the profile (what it was fitted from).

    Returns
    -------
    CalibrationFitResult
    """
    measured = np.asarray(measured, dtype=float)
    baseline = np.asarray(predict(None), dtype=float)
    usable = np.isfinite(measured) & (measured > 0) & np.isfinite(baseline) & (baseline > 0)
    if not usable.any():
        raise InputFileError(
            "FP463",
            "calibrate",
            "no measurement has a model value to fit",
            None,
            "give nccl-tests or perftest logs of operations the model covers",
        )
    measured_used = measured[usable]

    def predict_used(profile: CalibrationProfile | None) -> FloatArray:
        values: FloatArray = np.asarray(predict(profile), dtype=float)[usable]
        return values

    names = [n for n in parameters if n in FREE_PARAMETERS]
    starts = {n: FREE_PARAMETERS[n].start for n in names} | dict(start or {})
    dropped: list[str] = []
    profile = CalibrationProfile(source=source)
    uncertainty: dict[str, float] = {}
    while names:
        x0 = np.log([starts[n] for n in names])
        x, jacobian = _fit(predict_used, measured_used, names, x0, source)
        trial = _profile(names, x, source)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.log(predict_used(trial) / measured_used)
        scatter = float(np.sqrt(np.mean(r[np.isfinite(r)] ** 2))) if np.isfinite(r).any() else 1.0
        std = _log_std(jacobian, scatter)
        worst = int(np.argmax(std))
        if std[worst] <= MAX_LOG_STD:
            profile = trial
            uncertainty = {n: (math.exp(s) - 1) * 100 for n, s in zip(names, std, strict=True)}
            break
        dropped.append(names.pop(worst))
    return CalibrationFitResult(
        profile=profile,
        fitted=tuple(names),
        kept_default=tuple(dropped),
        uncertainty_pct=uncertainty,
        error_before_pct=_mape(baseline[usable], measured_used),
        error_after_pct=_mape(predict_used(profile), measured_used),
        points=int(usable.sum()),
    )


def model_start(valid: ValidScenario, technology: TechnologyName) -> dict[str, float]:
    """Starting values from the catalog and the analytic model's defaults."""
    from fabricplan.analytic import profile as analytic

    return {
        "nic_latency_ns": valid.nics[technology].latency_ns.value,
        "switch_latency_ns": valid.switches[technology].latency_ns.value,
        "nic_bw_efficiency": analytic.DEFAULT_NIC_BW_EFFICIENCY,
        "nvlink_bw_efficiency": analytic.DEFAULT_NVLINK_BW_EFFICIENCY,
        "collective_efficiency": analytic.DEFAULT_COLLECTIVE_EFFICIENCY,
    }


def free_parameters(names: Sequence[str] | None, where: str = "--parameters") -> tuple[str, ...]:
    """The parameters to fit: every free one when ``names`` is None, else ``names`` checked (FP468).

    >>> free_parameters(["nic_bw_efficiency"])
    ('nic_bw_efficiency',)
    """
    if names is None:
        return tuple(FREE_PARAMETERS)
    unknown = [p for p in names if p not in FREE_PARAMETERS]
    if unknown or not names:
        raise InputFileError(
            "FP468",
            where,
            "names no free parameter" if not names else "unknown parameter",
            ", ".join(unknown) or None,
            f"use {', '.join(FREE_PARAMETERS)}",
        )
    return tuple(names)


def calibration_changes(
    profile: CalibrationProfile, valid: ValidScenario, technology: TechnologyName
) -> tuple[ParameterChange, ...]:
    """Each parameter the profile sets, beside the default it replaces (``None``: the model adds
    no such cost by default).

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> change = calibration_changes(CalibrationProfile(nic_bw_efficiency=0.9), valid, "roce_v2")
    >>> [(c.name, c.default, c.calibrated) for c in change]
    [('nic_bw_efficiency', 1.0, 0.9)]
    """
    defaults = model_start(valid, technology)
    return tuple(
        ParameterChange(name=name, default=defaults.get(name), calibrated=value)
        for name in FREE_PARAMETERS
        if (value := getattr(profile, name)) is not None
    )


def calibrate_files(
    files: Sequence[BenchFileRecord],
    valid: ValidScenario,
    perform: Perform,
    technology: TechnologyName | None = None,
    gpus: int | None = None,
    parameters: Sequence[str] = tuple(FREE_PARAMETERS),
) -> tuple[CalibrationFitResult, TechnologyName]:
    """Fit a profile to benchmark files of one technology's fabric (see :func:`fit_profile`)."""
    chosen: set[TechnologyName] = set()
    measurements: list[MeasurementRecord] = []
    for file in files:
        for run in file.runs:
            tech = resolve_technology(run, valid, technology, file.path)
            if tech is not None:
                chosen.add(tech)
                measurements.extend(m for m in file.measurements if m.run == run.index)
    if len(chosen) != 1:
        raise InputFileError(
            "FP464",
            "calibrate",
            "the logs are from more than one technology" if chosen else "no log ran over RDMA",
            ", ".join(sorted(chosen)) or None,
            "calibrate one technology's fabric at a time (or pass --technology)",
        )
    tech = chosen.pop()
    predictor = ModelPredictor(valid, tech, perform, gpus)
    measured = np.array([m.value for m in measurements], dtype=float)

    def predict(profile: CalibrationProfile | None) -> FloatArray:
        found = predictor.expected(measurements, profile)
        return np.array([e.value if e is not None else np.nan for e, _ in found], dtype=float)

    hardware = f"{valid.nics[tech].id}/{predictor.design.switch_id}"
    source = f"fabricplan calibrate on {tech} ({hardware} in the spec): " + ", ".join(
        Path(f.path).name for f in files
    )
    fit = fit_profile(predict, measured, parameters, model_start(valid, tech), source)
    # The profile applies only to the technology the logs ran on. The logs do not name the NIC
    # or switch model, so those stay open (a hand-written profile may set them to narrow it).
    scope = {"technology": tech}
    return fit.model_copy(update={"profile": fit.profile.model_copy(update=scope)}), tech


def profile_yaml(fit: CalibrationFitResult) -> str:
    """The profile as YAML, with the fit's report in comments.

    >>> fit = CalibrationFitResult(profile=CalibrationProfile(nic_bw_efficiency=0.9, source="x"),
    ...     fitted=("nic_bw_efficiency",), kept_default=(),
    ...     uncertainty_pct={"nic_bw_efficiency": 1.0},
    ...     error_before_pct=11.0, error_after_pct=1.2, points=4)
    >>> print(profile_yaml(fit).splitlines()[-2:])
    ['nic_bw_efficiency: 0.9', 'source: x']
    """
    lines = [
        "# fabricplan calibration profile (use: fabricplan compare SPEC --calibration FILE)",
        f"# fitted to {fit.points} measurements: mean error {fit.error_before_pct:.1f} % with the"
        f" model's defaults, {fit.error_after_pct:.1f} % after fitting",
    ]
    for name in fit.fitted:
        lines.append(f"#   {name}: +-{fit.uncertainty_pct.get(name, float('nan')):.1f} %")
    if fit.kept_default:
        lines.append(
            f"# not determined by these measurements (model default kept):"
            f" {', '.join(fit.kept_default)}"
        )
    body = {
        key: float(f"{value:.{PROFILE_DIGITS}g}") if isinstance(value, float) else value
        for key, value in fit.profile.model_dump(exclude_none=True).items()
    }
    return "\n".join(lines) + "\n" + yaml.safe_dump(body, sort_keys=False)


PROFILE_FILE = FileKind(
    "calibration profile",
    InputFileError,
    "FP460",
    yaml_code="FP461",
    fix="check the path (fabricplan calibrate -o writes one)",
)
"""A calibration profile: UTF-8 YAML of at most 16 MiB."""


def load_profile(path: str | os.PathLike[str]) -> CalibrationProfile:
    """Read a profile written by ``fabricplan calibrate`` (or by hand).

    Raises :class:`InputFileError` with one line naming the file, the line or key, and the fix
    (FP460 unreadable, FP461 not YAML, FP462 wrong content).
    """
    file = Path(path)
    data: Any = read_yaml_file(file, PROFILE_FILE)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputFileError(
            "FP462",
            str(file),
            "a profile is a mapping of parameter: value",
            type(data).__name__,
            f"use keys {', '.join(CalibrationProfile.model_fields)}",
        )
    try:
        return CalibrationProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise InputFileError(
                "FP462",
                f"{file}: {key}",
                "unknown parameter",
                None,
                f"use {', '.join(CalibrationProfile.model_fields)}",
            ) from None
        raise InputFileError(
            "FP462", f"{file}: {key}", str(err["msg"]).lower(), err.get("input"), "fix the value"
        ) from None
