"""How far a prediction can be from a real run: bands from the validation residuals.

Every predicted number belongs to a *regime*:

- ``latency``: collectives below :data:`SMALL_MESSAGE_BYTES` and perftest ``*_lat`` tests, where
  time is launch, protocol and hop latency;
- ``mid``: collectives from :data:`SMALL_MESSAGE_BYTES` up to :data:`LARGE_MESSAGE_BYTES`, where
  pipelining, channel count and protocol switches decide;
- ``bandwidth``: collectives from :data:`LARGE_MESSAGE_BYTES` on and perftest ``*_bw`` tests.

For each regime (and each technology with enough rows) ``benchmarks/validation.py --write-bands``
compares the analytic model with the published runs of ``tests/data/validation/reference.yaml``
and stores the spread of *measured over predicted performance* (bandwidth ratio, or predicted
over measured time) in ``analytic/data/uncertainty_bands.yaml``: the central
:data:`BAND_COVERAGE` of the ratios, widened to at least :data:`NOISE_FLOOR_FRACTION` either
side. A predicted bandwidth ``b`` then carries ``[b x ratio_low, b x ratio_high]``, a predicted
time ``t`` carries ``[t / ratio_high, t / ratio_low]``. The stored file is regenerated from the
current model (a test checks it is), so the bands follow the model, never the other way round.

>>> table = load_bands()
>>> band = band_for(table, "bandwidth", "infiniband")
>>> band.ratio_low <= 1.0 <= band.ratio_high
True
>>> low, high = performance_band(100.0, band)
>>> low <= 100.0 <= high
True
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import Field

from fabricplan.input_file import load_package_yaml
from fabricplan.model.base import Frozen
from fabricplan.model.results import (
    CollectivePoint,
    Estimate,
    P2PPoint,
    PerformanceResult,
    StepTimeResult,
)

Regime = Literal["latency", "mid", "bandwidth"]
REGIMES: tuple[Regime, ...] = ("latency", "mid", "bandwidth")

SMALL_MESSAGE_BYTES = 64 * 2**10
"""Collectives below this size are latency-bound: NCCL's LL protocol range and the sizes the
issue calls small-message (nccl-tests rows below 64 KiB)."""
LARGE_MESSAGE_BYTES = 64 * 2**20
"""From this size on a multi-node collective has reached its bandwidth plateau (the same limit
``measure.diagnosis.LARGE_MESSAGE_BYTES`` uses)."""
BAND_COVERAGE = 0.8
"""Share of the validation rows a band covers: the 10th to the 90th percentile of the ratios."""
NOISE_FLOOR_FRACTION = 0.02
"""Smallest half-width of a band: the run-to-run spread of nccl-tests on a quiet fabric (an
estimate, as ``measure.calibration.NOISE_FLOOR``), so a regime the model happens to hit exactly
still says it is not exact."""
MIN_ROWS_FOR_BAND = 3
"""Rows a regime needs for its own band; with fewer the regime takes the band of every scored
row (all regimes together) and says so."""
MIN_ROWS_FOR_TECHNOLOGY_BAND = 5
"""Rows a technology needs in a regime for a band of its own; below, the pooled band applies."""
STEP_REGIMES: tuple[Regime, ...] = ("mid", "bandwidth")
"""Regimes a training step's communication falls in (gradient buckets, activations, pipeline
sends and MoE dispatch are megabytes); its band is the envelope of their bands."""
BANDS_FILE = "uncertainty_bands.yaml"
BandLevel = Literal["analytic", "flow"]
BANDS_FILES: dict[BandLevel, str] = {
    "analytic": BANDS_FILE,
    "flow": "uncertainty_bands_flow.yaml",
}
"""Each level with validation residuals of its own, and the file they are stored in
(``benchmarks/validation.py --write-bands`` writes both)."""
BACKEND_BANDS: dict[str, tuple[BandLevel, str]] = {
    "analytic": ("analytic", "the analytic model's residuals over the published runs"),
    "flow": (
        "flow",
        "the flow level's own residuals: every validation row run at the flow level (its"
        " fabric time simulated, latency from the analytic model)",
    ),
    "packet": (
        "flow",
        "the flow level's residuals: the validation rows (up to 1,440 GPUs) are not run packet by"
        " packet, and the packet level agrees with the flow level within 5 % on the cross-level"
        " scenarios (tests/test_levels_agree.py)",
    ),
}
"""Backend -> the level whose bands its values carry, and why; any other backend (the test
``fake``) takes the analytic bands."""


class BandRecord(Frozen):
    """The spread of measured over predicted performance in one regime."""

    regime: Regime
    technology: str | None = None
    """``None``: every technology's rows together."""
    rows: int = Field(ge=0)
    ratio_low: float = Field(gt=0)
    ratio_high: float = Field(gt=0)
    median_abs_error_pct: float | None = None
    basis: str = ""
    """How the band was formed (its own rows, or the fallback)."""


class BandTable(Frozen):
    """Every regime's band, as stored in ``analytic/data/uncertainty_bands.yaml``."""

    coverage: float
    noise_floor: float
    source: str
    bands: tuple[BandRecord, ...]


def regime_of_size(size_bytes: int) -> Regime:
    """The regime of a collective of ``size_bytes``.

    >>> regime_of_size(8), regime_of_size(1 << 20), regime_of_size(1 << 30)
    ('latency', 'mid', 'bandwidth')
    """
    if size_bytes < SMALL_MESSAGE_BYTES:
        return "latency"
    if size_bytes < LARGE_MESSAGE_BYTES:
        return "mid"
    return "bandwidth"


def regime_of_p2p(test: str) -> Regime:
    """The regime of a perftest test: ``*_lat`` latency, ``*_bw`` bandwidth.

    >>> regime_of_p2p("send_lat"), regime_of_p2p("write_bw")
    ('latency', 'bandwidth')
    """
    return "latency" if test.endswith("_lat") else "bandwidth"


def _quantiles(ratios: Sequence[float]) -> tuple[float, float]:
    if len(ratios) == 1:
        return ratios[0], ratios[0]
    tail = (1.0 - BAND_COVERAGE) / 2.0
    cuts = statistics.quantiles(ratios, n=round(1.0 / tail), method="inclusive")
    return cuts[0], cuts[-1]


class Residual(Frozen):
    """One scored validation row: its regime, technology, measured over predicted performance
    and the absolute error of the predicted figure in percent."""

    regime: Regime
    technology: str
    ratio: float = Field(gt=0)
    abs_error_pct: float = Field(ge=0)


def band_from_residuals(
    regime: Regime, technology: str | None, residuals: Sequence[Residual], basis: str
) -> BandRecord:
    """A band from residuals (see the module docstring).

    >>> rows = [Residual(regime="mid", technology="infiniband", ratio=r, abs_error_pct=0.0)
    ...         for r in (0.5, 1.0, 1.5, 2.0, 2.5)]
    >>> band_from_residuals("mid", None, rows, "x").ratio_high
    2.3
    """
    low, high = _quantiles(sorted(r.ratio for r in residuals))
    errors = [r.abs_error_pct for r in residuals]
    return BandRecord(
        regime=regime,
        technology=technology,
        rows=len(residuals),
        ratio_low=round(min(low, 1.0 - NOISE_FLOOR_FRACTION), 4),
        ratio_high=round(max(high, 1.0 + NOISE_FLOOR_FRACTION), 4),
        median_abs_error_pct=round(statistics.median(errors), 2) if errors else None,
        basis=basis,
    )


def band_table(residuals: Iterable[Residual], source: str) -> BandTable:
    """Every regime's band from the scored validation rows.

    A regime with fewer than :data:`MIN_ROWS_FOR_BAND` rows takes the band of all rows together;
    a technology gets its own band where it has :data:`MIN_ROWS_FOR_TECHNOLOGY_BAND` rows in the
    regime.

    >>> rows = [Residual(regime="bandwidth", technology="infiniband", ratio=r, abs_error_pct=1.0)
    ...         for r in (0.9, 1.0, 1.1)]
    >>> [b.regime for b in band_table(rows, "test").bands]
    ['latency', 'mid', 'bandwidth']
    """
    everything = list(residuals)
    bands: list[BandRecord] = []
    for regime in REGIMES:
        mine = [r for r in everything if r.regime == regime]
        if len(mine) >= MIN_ROWS_FOR_BAND:
            bands.append(band_from_residuals(regime, None, mine, f"{len(mine)} {regime} rows"))
        elif everything:
            basis = f"only {len(mine)} {regime} rows: the band of all {len(everything)} rows"
            bands.append(band_from_residuals(regime, None, everything, basis))
        for tech in sorted({r.technology for r in mine}):
            own = [r for r in mine if r.technology == tech]
            if len(own) >= MIN_ROWS_FOR_TECHNOLOGY_BAND:
                bands.append(band_from_residuals(regime, tech, own, f"{len(own)} {tech} rows"))
    return BandTable(
        coverage=BAND_COVERAGE, noise_floor=NOISE_FLOOR_FRACTION, source=source, bands=tuple(bands)
    )


def bands_yaml(table: BandTable) -> str:
    """The stored form of a band table (what ``--write-bands`` writes)."""
    header = (
        "# Uncertainty bands of the analytic model, per regime and technology.\n"
        "# GENERATED by `benchmarks/validation.py --write-bands` from the validation residuals;\n"
        "# do not edit (tests/test_uncertainty.py checks it matches the current model).\n"
    )
    body = yaml.safe_dump(table.model_dump(mode="json"), sort_keys=False)
    return header + body


@lru_cache(maxsize=2)
def load_bands(level: BandLevel = "analytic") -> BandTable:
    """The stored band table of a level (read once; it is package data)."""
    text = (resources.files("fabricplan.analytic") / "data" / BANDS_FILES[level]).read_text(
        encoding="utf-8"
    )
    return BandTable.model_validate(load_package_yaml(text))


def bands_of_backend(backend: str) -> tuple[BandLevel, str]:
    """Whose validation residuals a backend's values carry, and why (:data:`BACKEND_BANDS`).

    >>> bands_of_backend("packet")[0], bands_of_backend("fake")[0]
    ('flow', 'analytic')
    """
    return BACKEND_BANDS.get(backend, BACKEND_BANDS["analytic"])


def band_for(table: BandTable, regime: Regime, technology: str | None) -> BandRecord:
    """The technology's own band in the regime where it has one, else the pooled band."""
    pooled: BandRecord | None = None
    for band in table.bands:
        if band.regime != regime:
            continue
        if band.technology is not None and band.technology == technology:
            return band
        if band.technology is None:
            pooled = band
    if pooled is None:
        raise LookupError(f"uncertainty bands: no {regime} band in {BANDS_FILE}")
    return pooled


def performance_band(value: float, band: BandRecord) -> tuple[float, float]:
    """``(low, high)`` of a predicted bandwidth (higher is better)."""
    return value * band.ratio_low, value * band.ratio_high


def time_band(value: float, band: BandRecord) -> tuple[float, float]:
    """``(low, high)`` of a predicted time (lower is better): the same performance ratios."""
    return value / band.ratio_high, value / band.ratio_low


def envelope(bands: Sequence[BandRecord]) -> tuple[float, float]:
    """The widest ``(ratio_low, ratio_high)`` of several bands."""
    return min(b.ratio_low for b in bands), max(b.ratio_high for b in bands)


def step_band(step: StepTimeResult, ratio_low: float, ratio_high: float) -> StepTimeResult:
    """The step time's band when its communication runs ``ratio_low``-``ratio_high`` times the
    predicted speed (compute time is not validated against network runs and carries no band).

    With communication ``c`` of which ``e`` is exposed (the rest hides behind compute), running
    ``c`` at ``1/r`` its time exposes ``max(0, c/r - (c - e))``: slower communication adds all of
    its extra time, faster communication saves at most what was exposed.

    The same band of the scale-out part alone goes to ``comm_exposed_fabric_s_low`` /
    ``_high``: communication ``c - d`` without the NVLink-only groups ``d``
    (``comm_exposed_in_domain_s``). That part is all that differs between two fabrics of one
    cluster, so it is what :func:`difference_inside` reads.

    >>> s = StepTimeResult(compute_s=1.0, comm_total_s=0.5, comm_exposed_s=0.1, step_s=1.1,
    ...     comm_by_dimension_s={}, exposed_fraction=0.09, gpu_hours_lost_per_year=0.0)
    >>> banded = step_band(s, 0.5, 2.0)
    >>> round(banded.step_s_low, 3), round(banded.step_s_high, 3)
    (1.0, 1.6)
    """
    hidden = step.comm_total_s - step.comm_exposed_s

    def exposed(ratio: float) -> float:
        return max(0.0, step.comm_total_s / ratio - hidden)

    exposed_low, exposed_high = exposed(ratio_high), exposed(ratio_low)
    step_low = step.step_s - step.comm_exposed_s + exposed_low
    step_high = step.step_s - step.comm_exposed_s + exposed_high
    # GPU-hours lost scale with the exposed share of the step (analytic.step: exposed / step).
    hours_per_share = (
        step.gpu_hours_lost_per_year / step.exposed_fraction if step.exposed_fraction > 0 else 0.0
    )
    # The scale-out part alone: NVLink-only groups (fully exposed, comm_exposed_in_domain_s)
    # run the same on every fabric, so the band that tells two fabrics apart leaves them out.
    fabric_total = max(0.0, step.comm_total_s - step.comm_exposed_in_domain_s)

    def fabric_exposed(ratio: float) -> float:
        return max(0.0, fabric_total / ratio - hidden)

    share_low = exposed_low / step_low if step_low > 0 else 0.0
    share_high = exposed_high / step_high if step_high > 0 else 0.0
    return step.model_copy(
        update={
            "comm_exposed_s_low": exposed_low,
            "comm_exposed_s_high": exposed_high,
            "step_s_low": step_low,
            "step_s_high": step_high,
            "exposed_fraction_low": share_low,
            "exposed_fraction_high": share_high,
            "gpu_hours_lost_per_year_low": share_low * hours_per_share,
            "gpu_hours_lost_per_year_high": share_high * hours_per_share,
            "comm_exposed_fabric_s_low": fabric_exposed(ratio_high),
            "comm_exposed_fabric_s_high": fabric_exposed(ratio_low),
        }
    )


def seed_spread(points: Sequence[CollectivePoint]) -> tuple[float, float]:
    """``(slowest, fastest)`` run over seeds relative to the value, over simulated points run
    with several seeds (``(1.0, 1.0)`` without any): the step's communication is as uncertain
    as its most seed-dependent collective.

    >>> p = CollectivePoint(collective="all_reduce", size_bytes=1, algorithm="flow/ring",
    ...     time_us=100.0, algbw_GBps=1.0, busbw_GBps=1.0, time_us_seed_low=100.0,
    ...     time_us_seed_high=149.0)
    >>> seed_spread([p])
    (1.49, 1.0)
    """
    slow, fast = 1.0, 1.0
    for point in points:
        if point.time_us <= 0:
            continue
        if point.time_us_seed_high is not None:
            slow = max(slow, point.time_us_seed_high / point.time_us)
        if point.time_us_seed_low is not None:
            fast = min(fast, point.time_us_seed_low / point.time_us)
    return slow, fast


def _banded_collective(point: CollectivePoint, band: BandRecord) -> CollectivePoint:
    """The band around a point; a simulated point run over several seeds gets the band around
    its whole seed range (fastest run / ratio_high .. slowest run / ratio_low)."""
    fastest = point.time_us if point.time_us_seed_low is None else point.time_us_seed_low
    slowest = point.time_us if point.time_us_seed_high is None else point.time_us_seed_high
    time_low, time_high = fastest / band.ratio_high, slowest / band.ratio_low
    # performance scales inversely with time: the slowest run bounds it from below
    down = point.time_us / slowest if slowest > 0 else 1.0
    up = point.time_us / fastest if fastest > 0 else 1.0
    algbw_low, algbw_high = (
        point.algbw_GBps * down * band.ratio_low,
        point.algbw_GBps * up * band.ratio_high,
    )
    busbw_low, busbw_high = (
        point.busbw_GBps * down * band.ratio_low,
        point.busbw_GBps * up * band.ratio_high,
    )
    return point.model_copy(
        update={
            "time_us_low": time_low,
            "time_us_high": time_high,
            "algbw_GBps_low": algbw_low,
            "algbw_GBps_high": algbw_high,
            "busbw_GBps_low": busbw_low,
            "busbw_GBps_high": busbw_high,
        }
    )


def _banded_p2p(point: P2PPoint, band: BandRecord) -> P2PPoint:
    latency_low, latency_high = time_band(point.latency_us, band)
    bw_low, bw_high = performance_band(point.bw_gbps, band)
    return point.model_copy(
        update={
            "latency_us_low": latency_low,
            "latency_us_high": latency_high,
            "bw_gbps_low": bw_low,
            "bw_gbps_high": bw_high,
        }
    )


def with_uncertainty(
    result: PerformanceResult, table: BandTable | None = None
) -> PerformanceResult:
    """The result with a ``*_low`` / ``*_high`` band beside every predicted value.

    Bands come from the validation residuals of the result's level (:func:`bands_of_backend`:
    the analytic model's, the flow level's own, the flow level's for the packet level) unless a
    ``table`` is given; a point simulated over several seeds gets the band around its whole
    seed range (``time_us_seed_low`` / ``_high``); a perftest point takes its test's band
    (``*_lat`` latency, ``*_bw`` bandwidth; its time and bandwidth are one measurement), a
    collective point its size's band.
    Applying it twice gives the same result.

    Examples
    --------
    >>> point = CollectivePoint(collective="all_reduce", size_bytes=8, algorithm="Tree/LL",
    ...     time_us=50.0, algbw_GBps=0.0002, busbw_GBps=0.0004)
    >>> result = with_uncertainty(PerformanceResult(backend="analytic", technology="infiniband",
    ...     base_latency_us=2.0, collectives=(point,)))
    >>> banded = result.collectives[0]
    >>> banded.time_us_low < 50.0 < banded.time_us_high
    True
    """
    level, why = bands_of_backend(result.backend)
    label: str = level
    if table is None:
        table = load_bands(level)
    else:
        label, why = "given", "a band table given by the caller"
    tech = result.technology

    def band(regime: Regime) -> BandRecord:
        return band_for(table, regime, tech)

    p2p = tuple(_banded_p2p(p, band(regime_of_p2p(p.test))) for p in result.p2p)
    collectives = tuple(
        _banded_collective(c, band(regime_of_size(c.size_bytes))) for c in result.collectives
    )
    base_low, base_high = time_band(result.base_latency_us, band("latency"))
    step = result.step
    if step is not None:
        ratio_low, ratio_high = envelope([band(r) for r in STEP_REGIMES])
        slow, fast = seed_spread(result.collectives)
        step = step_band(step, ratio_low / slow, ratio_high / fast)
    used = {band(r).basis for r in REGIMES}
    seeded = any(c.time_us_seed_low is not None for c in collectives)
    basis = (
        f"{label} bands ({why}): the central {table.coverage:.0%} of measured/predicted"
        f" performance over published runs per regime ({table.source}); {tech}: "
        + "; ".join(sorted(used))
        + ("; simulated points: the band around their range over seeds" if seeded else "")
    )
    return result.model_copy(
        update={
            "p2p": p2p,
            "collectives": collectives,
            "base_latency_us_low": base_low,
            "base_latency_us_high": base_high,
            "step": step,
            "uncertainty": basis,
        }
    )


def step_estimate(step: StepTimeResult) -> Estimate:
    """The step time with its band (the value itself where no band was applied)."""
    low = step.step_s_low if step.step_s_low is not None else step.step_s
    high = step.step_s_high if step.step_s_high is not None else step.step_s
    return Estimate(value=step.step_s, low=low, high=high)


def inside_uncertainty(a: Estimate, b: Estimate) -> bool:
    """Whether the difference between two predictions is inside the uncertainty: one value lies
    within the other's band, so the published runs the bands come from could not tell them
    apart.

    >>> inside_uncertainty(Estimate(value=1.0, low=0.9, high=1.2),
    ...                    Estimate(value=1.1, low=1.0, high=1.3))
    True
    >>> inside_uncertainty(Estimate(value=1.0, low=0.95, high=1.05),
    ...                    Estimate(value=1.5, low=1.4, high=1.6))
    False
    """
    return b.low <= a.value <= b.high or a.low <= b.value <= a.high


def difference_inside(
    a_step_s: float, a_fabric: Estimate, b_step_s: float, b_fabric: Estimate
) -> tuple[float, float, bool]:
    """``(a - b, half-width of the band of that difference, inside)`` for two steps.

    Time that is the same on both options (compute; communication that never leaves one NVLink
    domain, computed by the same model from the same inputs) cancels exactly in ``a - b``, so
    the band that decides whether the difference is real is that of the difference of the
    scale-out exposed times ``a_fabric`` and ``b_fabric`` (each an :class:`Estimate` with its
    band), not the overlap of the two absolute step bands.

    The two errors are taken as independent: the half-widths combine as the square root of the
    sum of their squares. The validation residuals behind each technology's band come from
    different clusters, so no correlation between them can be estimated; independence lies
    between fully correlated errors (they would cancel: no band at all) and the overlap of the
    two intervals (the sum of the half-widths, which assumes both err to the worst side at
    once). The sides are the ones that move the difference towards zero: for ``a`` slower than
    ``b``, ``a``'s lower half-width and ``b``'s upper one. ``inside`` is ``|a - b| <= half``.

    >>> a = Estimate(value=0.4, low=0.37, high=0.44)
    >>> b = Estimate(value=0.3, low=0.26, high=0.33)
    >>> gap, half, inside = difference_inside(1.4, a, 1.3, b)
    >>> round(gap, 3), round(half, 3), inside
    (0.1, 0.042, False)
    >>> difference_inside(1.0, b, 1.0, b)[2]
    True
    """
    gap = a_step_s - b_step_s
    if gap >= 0:
        down, up = a_fabric.value - a_fabric.low, b_fabric.high - b_fabric.value
    else:
        down, up = b_fabric.value - b_fabric.low, a_fabric.high - a_fabric.value
    half = (max(0.0, down) ** 2 + max(0.0, up) ** 2) ** 0.5
    return gap, half, abs(gap) <= half
