"""What the model says each measurement should be, and how far the measurement is from it.

Which technology a run belongs to (first rule that applies):

1. ``--technology`` given by the user;
2. what the log says: perftest ``Link type : IB`` is InfiniBand, ``Ethernet`` is RoCE; NCCL's
   ``NET/IB : Using [0]mlx5_0:1/RoCE`` (or ``/IB``) device list; ``NCCL_IB_ROCE_VERSION_NUM``;
   a set ``NCCL_IB_GID_INDEX`` means RoCE. RoCE without a version is the spec's ``roce_v2`` if it
   has one, else its ``roce_v1``;
3. the spec names one technology only.

Otherwise the check stops (FP457) and asks for ``--technology``.

A measurement is compared on one quantity: busbw for nccl-tests (which is also the time: at a given
size, busbw ratio = inverse time ratio), average bandwidth for perftest ``*_bw``, typical latency
for ``*_lat``. ``ratio`` is measured performance over expected performance (bandwidth ratio, or
expected latency over measured latency), so ``ratio < 1`` is always worse than the model.

The expected band is the model's own uncertainty: the spread of measured over predicted
performance in the row's regime (small-message latency, mid-size, bandwidth) and technology over
published runs (:mod:`fabricplan.analytic.uncertainty`). A row inside it is ``ok`` (as expected),
below it ``slow``, above it ``fast``. ``--band`` replaces it with a fixed +-share.

>>> classify(0.97, 0.85, 1.15), classify(0.7, 0.85, 1.15), classify(1.4, 0.85, 1.15)
('ok', 'slow', 'fast')
>>> classify(0.7, 0.85, 1.15, threshold=0.8)
'fail'
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

from fabricplan.analytic.uncertainty import (
    band_for,
    load_bands,
    regime_of_p2p,
    regime_of_size,
)
from fabricplan.errors import InputFileError, ModelError
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord, RunRecord
from fabricplan.model.base import Frozen
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    CalibrationProfile,
    CollectivePoint,
    P2PPoint,
    PerformanceResult,
    PerfRequest,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric

EXPECTED_BAND_FRACTION = 0.15
"""Half-width of the fallback band of the diagnosis rules, as a share of the model's value, where
a judged row carries no band of its own."""

Status = Literal["ok", "slow", "fast", "fail", "unchecked"]
Perform = Callable[[ValidScenario, FabricDesign, PerfRequest], PerformanceResult]
"""A backend's ``perform`` (see :mod:`fabricplan.backends`)."""

MODELLED_COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "sendrecv",
)
MODELLED_P2P = ("write_lat", "read_lat", "send_lat", "write_bw", "read_bw", "send_bw")


class ExpectedRecord(Frozen):
    """The model's value for one measurement, with the band around it."""

    quantity: str
    value: float
    low: float
    high: float
    time_us: float | None = None
    algbw_GBps: float | None = None  # noqa: N815 - nccl-tests unit
    busbw_GBps: float | None = None  # noqa: N815
    bw_gbps: float | None = None
    latency_us: float | None = None
    algorithm: str | None = None


class JudgedRecord(Frozen):
    """One measurement beside the model's expectation."""

    measurement: MeasurementRecord
    technology: TechnologyName | None = None
    expected: ExpectedRecord | None = None
    ratio: float | None = None
    """Measured over expected performance (> 1 is better than the model)."""
    status: Status = "unchecked"
    note: str = ""
    """Why there is no expectation, or what the status rests on."""
    ratio_low: float | None = None
    """Lowest ratio inside the expected band (the band's performance-ratio limits)."""
    ratio_high: float | None = None
    band_basis: str = ""
    """Where the band comes from (the regime and its validation rows, or ``--band``)."""


def classify(ratio: float, low: float, high: float, threshold: float | None = None) -> Status:
    """Status of a performance ratio: ``fail`` below ``threshold``, else by the band
    ``low``..``high`` (inside it the run is as the model expects)."""
    if threshold is not None and ratio < threshold:
        return "fail"
    if ratio < low:
        return "slow"
    if ratio > high:
        return "fast"
    return "ok"


def ratio_band(
    m: MeasurementRecord, technology: TechnologyName | None, band: float | None
) -> tuple[float, float, str]:
    """The ratios a measurement may have and still be as expected, and why.

    ``band`` (``--band``) gives a fixed +-share; ``None`` the model's validation band for the
    measurement's regime and technology.

    >>> from fabricplan.measure.measurement import MeasurementRecord
    >>> m = MeasurementRecord(file="a", line=1, run=0, tool="perftest", flavor="perftest",
    ...     test="write_lat", size_bytes=2, time_us=1.0, latency_us=1.0)
    >>> ratio_band(m, "infiniband", 0.1)[:2]
    (0.9, 1.1)
    """
    if band is not None:
        return 1.0 - band, 1.0 + band, f"--band {band:g}"
    regime = regime_of_p2p(m.test) if m.tool == "perftest" else regime_of_size(m.size_bytes)
    record = band_for(load_bands(), regime, technology)
    who = record.technology or "all technologies"
    return record.ratio_low, record.ratio_high, f"{regime} band ({who}, {record.basis})"


def resolve_technology(
    run: RunRecord, valid: ValidScenario, override: TechnologyName | None, origin: str
) -> TechnologyName | None:
    """The technology of a run by the rule in the module docstring (``None``: TCP sockets)."""
    available = valid.spec.fabric.technologies
    if override is not None:
        if override not in available:
            raise InputFileError(
                "FP458",
                "--technology",
                "is not in the spec's fabric.technologies",
                override,
                f"use one of {', '.join(available)}",
            )
        return override
    hint = run.technology_hint
    if hint == "socket":
        return None
    if hint is not None:
        wanted: tuple[TechnologyName, ...] = ("roce_v2", "roce_v1") if hint == "roce" else (hint,)
        for tech in wanted:
            if tech in available:
                return tech
        raise InputFileError(
            "FP458",
            f"{origin}:{run.line}",
            f"the log is {hint} ({run.hint_reason}) but the spec does not have it",
            ", ".join(available),
            f"add {wanted[0]} to fabric.technologies or pass --technology",
        )
    if len(available) == 1:
        return available[0]
    raise InputFileError(
        "FP457",
        f"{origin}:{run.line}",
        "cannot tell which technology this run used",
        None,
        f"pass --technology ({' or '.join(available)})",
    )


class ModelPredictor:
    """Model values for measurements on one technology's fabric.

    Parameters
    ----------
    valid
        The cluster the logs come from.
    technology
        Its fabric.
    perform
        A backend's ``perform`` (``get_backend("analytic").perform`` in the CLI).
    gpus
        Ranks to assume for nccl-tests runs whose log does not say.
    """

    def __init__(
        self,
        valid: ValidScenario,
        technology: TechnologyName,
        perform: Perform,
        gpus: int | None = None,
    ) -> None:
        self.valid = valid
        self.technology = technology
        self.design = design_fabric(valid, technology)
        self.perform = perform
        self.gpus = gpus

    def applies(self, calibration: CalibrationProfile | None) -> CalibrationProfile | None:
        """The profile if it was fitted on this fabric (technology, NIC, switch), else ``None``:
        a profile fitted on RoCE runs does not move the InfiniBand expectation."""
        if calibration is None:
            return None
        nic = self.valid.nics[self.technology].id
        if calibration.applies_to(self.technology, nic, self.design.switch_id):
            return calibration
        return None

    def _ranks(self, m: MeasurementRecord) -> tuple[int | None, str]:
        ranks = m.ranks or self.gpus
        total = self.valid.spec.cluster.gpus
        if ranks is None:
            return None, "the log does not say how many GPUs took part; pass --gpus"
        if ranks < 2:
            return None, "a single rank moves no data over the network"
        if ranks > total:
            return None, f"{ranks} ranks but the spec's cluster has {total} GPUs"
        return ranks, ""

    def expected(
        self, measurements: Sequence[MeasurementRecord], calibration: CalibrationProfile | None
    ) -> list[tuple[ExpectedRecord | None, str]]:
        """For each measurement: the model's values at the band's centre, or why there are none.

        The band is filled in by :func:`judge_files`; here ``low == high == value``. A
        ``calibration`` fitted on another fabric is not used (:meth:`applies`).
        """
        calibration = self.applies(calibration)
        out: list[tuple[ExpectedRecord | None, str]] = [(None, "")] * len(measurements)
        groups: dict[tuple[str, int], list[int]] = defaultdict(list)
        p2p: list[int] = []
        for i, m in enumerate(measurements):
            if m.tool == "perftest":
                if m.test in MODELLED_P2P:
                    p2p.append(i)
                else:
                    out[i] = (None, f"the model has no {m.test}")
                continue
            if m.test not in MODELLED_COLLECTIVES:
                why = (
                    "the log does not name the operation; pass --op"
                    if m.test == "unknown"
                    else f"the model has no {m.test}"
                )
                out[i] = (None, why)
                continue
            ranks, why = self._ranks(m)
            if ranks is None:
                out[i] = (None, why)
                continue
            groups[(m.test, ranks)].append(i)
        for (test, ranks), members in groups.items():
            sizes = tuple(sorted({measurements[i].size_bytes for i in members}))
            request = PerfRequest(
                collectives=(test,),
                sizes_bytes=sizes,
                gpus=ranks,
                p2p=False,
                step=False,
                calibration=calibration,
            )
            try:
                result = self.perform(self.valid, self.design, request)
            except ModelError as exc:
                # One odd run (e.g. 12 ranks on 8-GPU nodes) must not stop the whole check.
                for i in members:
                    out[i] = (None, f"the model cannot take this run: {exc.what} ({exc.value})")
                continue
            points: dict[tuple[str, int], CollectivePoint] = {
                (p.collective, p.size_bytes): p for p in result.collectives
            }
            for i in members:
                point = points.get((test, measurements[i].size_bytes))
                if point is None:
                    out[i] = (None, "the model returned no value at this size")
                    continue
                value = point.busbw_GBps
                out[i] = (
                    ExpectedRecord(
                        quantity="busbw_GBps",
                        value=value,
                        low=value,
                        high=value,
                        time_us=point.time_us,
                        algbw_GBps=point.algbw_GBps,
                        busbw_GBps=value,
                        algorithm=point.algorithm,
                    ),
                    "",
                )
        if p2p:
            sizes = tuple(sorted({measurements[i].size_bytes for i in p2p}))
            # perftest runs between two hosts: the model's pair is two adjacent nodes.
            pair = min(2 * self.valid.spec.cluster.gpus_per_node, self.valid.spec.cluster.gpus)
            request = PerfRequest(
                collectives=(),
                sizes_bytes=sizes,
                gpus=pair,
                p2p=True,
                step=False,
                calibration=calibration,
            )
            result = self.perform(self.valid, self.design, request)
            found: dict[tuple[str, int], P2PPoint] = {(p.test, p.size_bytes): p for p in result.p2p}
            for i in p2p:
                m = measurements[i]
                p = found.get((m.test, m.size_bytes))
                if p is None:
                    out[i] = (None, "the model returned no value at this size")
                    continue
                # A bidirectional run adds both directions' bandwidth.
                bw = p.bw_gbps * (2 if m.bidirectional else 1)
                value = p.latency_us if m.quantity == "latency_us" else bw
                out[i] = (
                    ExpectedRecord(
                        quantity=m.quantity,
                        value=value,
                        low=value,
                        high=value,
                        time_us=p.latency_us if m.quantity == "latency_us" else None,
                        bw_gbps=bw,
                        latency_us=p.latency_us,
                    ),
                    "",
                )
        return out


def _banded(
    expected: ExpectedRecord, ratio_low: float, ratio_high: float, higher_is_better: bool
) -> ExpectedRecord:
    if higher_is_better:
        low, high = expected.value * ratio_low, expected.value * ratio_high
    else:
        # A latency band: the same performance ratios as a bandwidth band.
        low, high = expected.value / ratio_high, expected.value / ratio_low
    return expected.model_copy(update={"low": low, "high": high})


def _ratio(m: MeasurementRecord, expected: ExpectedRecord) -> float | None:
    if m.tool == "nccl-tests" and expected.time_us and m.time_us > 0:
        # The same ratio as busbw's at this size, without the two-decimal rounding of tiny busbw.
        return expected.time_us / m.time_us
    measured = m.value
    if not measured > 0 or not expected.value > 0:
        return None
    return measured / expected.value if m.higher_is_better else expected.value / measured


class JudgeSpec(Frozen):
    """How to judge: the band and the thresholds the user set."""

    band: float | None = None
    """A fixed +-share around the model's value; ``None`` (default) uses the model's validation
    band for each row's regime and technology (:func:`ratio_band`)."""
    threshold: float | None = None
    """Fail below this share of the expected performance (e.g. 0.8)."""
    min_busbw_GBps: float | None = None  # noqa: N815
    min_bw_gbps: float | None = None
    min_size_bytes: int = 0
    """Thresholds apply to messages of at least this size."""
    technology: TechnologyName | None = None
    gpus: int | None = None
    calibration: CalibrationProfile | None = None


def absolute_failure(m: MeasurementRecord, how: JudgeSpec) -> str:
    """Why a measurement is below an absolute floor the user set ("" when it is not)."""
    if m.size_bytes < how.min_size_bytes:
        return ""
    floor = how.min_busbw_GBps
    if floor is not None and m.busbw_GBps is not None and m.busbw_GBps < floor:
        return f"busbw {m.busbw_GBps:g} GB/s < --min-busbw {floor:g}"
    floor = how.min_bw_gbps
    if floor is not None and m.bw_gbps is not None and m.bw_gbps < floor:
        return f"bw {m.bw_gbps:.2f} Gb/s < --min-bw-gbps {floor:g}"
    return ""


def judge_files(
    files: Sequence[BenchFileRecord],
    valid: ValidScenario | None,
    how: JudgeSpec,
    perform: Perform | None = None,
) -> tuple[JudgedRecord, ...]:
    """Every measurement of every file beside the model's expectation.

    Without ``valid`` (no spec) only the absolute thresholds are applied.
    """
    judged: list[JudgedRecord] = []
    predictors: dict[TechnologyName, ModelPredictor] = {}
    for file in files:
        techs: dict[int, TechnologyName | None] = {}
        expectations: dict[int, tuple[ExpectedRecord | None, str]] = {}
        if valid is not None and perform is not None:
            techs = {
                r.index: resolve_technology(r, valid, how.technology, file.path) for r in file.runs
            }
            by_tech: dict[TechnologyName, list[MeasurementRecord]] = defaultdict(list)
            for m in file.measurements:
                tech = techs.get(m.run)
                if tech is not None:
                    by_tech[tech].append(m)
            for tech, members in by_tech.items():
                if tech not in predictors:
                    predictors[tech] = ModelPredictor(valid, tech, perform, how.gpus)
                found = predictors[tech].expected(members, how.calibration)
                for m, exp in zip(members, found, strict=True):
                    expectations[id(m)] = exp
        for m in file.measurements:
            judged.append(_judge_one(m, techs.get(m.run), expectations.get(id(m)), how, valid))
    return tuple(judged)


def _judge_one(
    m: MeasurementRecord,
    tech: TechnologyName | None,
    expectation: tuple[ExpectedRecord | None, str] | None,
    how: JudgeSpec,
    valid: ValidScenario | None,
) -> JudgedRecord:
    floor = absolute_failure(m, how)
    if expectation is None or expectation[0] is None:
        note = (
            expectation[1]
            if expectation
            else (
                "no spec given" if valid is None else "NCCL used TCP sockets; no RDMA model applies"
            )
        )
        return JudgedRecord(
            measurement=m,
            technology=tech,
            status="fail" if floor else "unchecked",
            note=floor or note,
        )
    low, high, basis = ratio_band(m, tech, how.band)
    expected = _banded(expectation[0], low, high, m.higher_is_better)
    ratio = _ratio(m, expected)
    if ratio is None:
        return JudgedRecord(
            measurement=m,
            technology=tech,
            expected=expected,
            status="fail" if floor else "unchecked",
            note=floor or "zero measured or expected value",
            ratio_low=low,
            ratio_high=high,
            band_basis=basis,
        )
    threshold = how.threshold if m.size_bytes >= how.min_size_bytes else None
    status = "fail" if floor else classify(ratio, low, high, threshold)
    note = floor or (
        f"{ratio:.0%} of expected < --threshold {how.threshold:g}" if status == "fail" else ""
    )
    return JudgedRecord(
        measurement=m,
        technology=tech,
        expected=expected,
        ratio=ratio,
        status=status,
        note=note,
        ratio_low=low,
        ratio_high=high,
        band_basis=basis,
    )
