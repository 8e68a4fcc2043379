"""Acceptance targets: what the built cluster's nccl-tests should show, from the prediction.

One row per collective and message size of the analytic prediction for the whole cluster (every
GPU a rank): bus bandwidth and time with a band. The band is the prediction's own
(``busbw_GBps_low``/``_high``, ``time_us_low``/``_high`` on the point) when the model gives one,
else the model's validation targets, stated as constants:

- busbw: the target is ``busbw x (1 - BUSBW_BAND_FRACTION)``;
- time: at most ``time x (1 + TIME_BAND_FRACTION)``.

Written as a CSV, as an nccl-tests threshold list (``<binary> <size_bytes> <min busbw GB/s>
<max time us>``, one line per size, for a script that reads nccl-tests' table) and as a CloudAI
test scenario whose NcclTests carry the predicted busbw as their speed of light (``sol``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from fabricplan.model.results import CollectivePoint, PerformanceResult

BUSBW_BAND_FRACTION = 0.15
"""Relative band of a busbw target: the model's validation target of median |error| <= 15 % on
bandwidth against published nccl-tests runs (docs/validation.md)."""
TIME_BAND_FRACTION = 0.25
"""Relative band of a time target: the validation target of <= 25 % on small-message latency
(docs/validation.md)."""

VALIDATION_BAND_SOURCE = (
    f"validation targets: busbw -{BUSBW_BAND_FRACTION:.0%}, time +{TIME_BAND_FRACTION:.0%}"
)

NCCL_TESTS_BINARY = {
    "all_reduce": "all_reduce_perf",
    "all_gather": "all_gather_perf",
    "reduce_scatter": "reduce_scatter_perf",
    "all_to_all": "alltoall_perf",
    "broadcast": "broadcast_perf",
    "sendrecv": "sendrecv_perf",
}
"""nccl-tests binary per collective (github.com/NVIDIA/nccl-tests, src/)."""

TARGET_COLUMNS = (
    "collective",
    "nccl_tests_binary",
    "size_bytes",
    "ranks",
    "algorithm",
    "busbw_GBps",
    "busbw_low_GBps",
    "busbw_high_GBps",
    "time_us",
    "time_low_us",
    "time_high_us",
    "band_source",
)


@dataclass(frozen=True, slots=True)
class TargetRecord:
    """One acceptance target."""

    point: CollectivePoint
    busbw_low_GBps: float  # noqa: N815 - nccl-tests unit
    busbw_high_GBps: float  # noqa: N815
    time_low_us: float
    time_high_us: float
    band_source: str


def _band(point: CollectivePoint, name: str, fallback: float) -> tuple[float | None, str]:
    value = getattr(point, name, None)
    if isinstance(value, int | float):
        return float(value), "prediction band"
    del fallback
    return None, VALIDATION_BAND_SOURCE


def target_records(performance: PerformanceResult) -> list[TargetRecord]:
    """The targets of every predicted collective point.

    >>> from fabricplan.model.results import CollectivePoint, PerformanceResult
    >>> point = CollectivePoint(collective="all_reduce", size_bytes=1 << 30, algorithm="ring",
    ...     time_us=5000.0, algbw_GBps=200.0, busbw_GBps=375.0)
    >>> perf = PerformanceResult(backend="analytic", technology="infiniband",
    ...     base_latency_us=3.0, collectives=(point,))
    >>> record = target_records(perf)[0]
    >>> round(record.busbw_low_GBps, 2), round(record.time_high_us, 1), record.band_source
    (318.75, 6250.0, 'validation targets: busbw -15%, time +25%')
    """
    records = []
    for point in performance.collectives:
        low, source = _band(point, "busbw_GBps_low", BUSBW_BAND_FRACTION)
        high, _ = _band(point, "busbw_GBps_high", BUSBW_BAND_FRACTION)
        t_low, _ = _band(point, "time_us_low", TIME_BAND_FRACTION)
        t_high, _ = _band(point, "time_us_high", TIME_BAND_FRACTION)
        records.append(
            TargetRecord(
                point,
                low if low is not None else point.busbw_GBps * (1 - BUSBW_BAND_FRACTION),
                high if high is not None else point.busbw_GBps * (1 + BUSBW_BAND_FRACTION),
                t_low if t_low is not None else point.time_us * (1 - TIME_BAND_FRACTION),
                t_high if t_high is not None else point.time_us * (1 + TIME_BAND_FRACTION),
                source,
            )
        )
    return records


def targets_csv(performance: PerformanceResult, ranks: int) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TARGET_COLUMNS)
    for r in target_records(performance):
        p = r.point
        writer.writerow(
            [
                p.collective,
                NCCL_TESTS_BINARY[p.collective],
                p.size_bytes,
                ranks,
                p.algorithm,
                f"{p.busbw_GBps:.6g}",
                f"{r.busbw_low_GBps:.6g}",
                f"{r.busbw_high_GBps:.6g}",
                f"{p.time_us:.6g}",
                f"{r.time_low_us:.6g}",
                f"{r.time_high_us:.6g}",
                r.band_source,
            ]
        )
    return out.getvalue()


def nccl_thresholds(performance: PerformanceResult, ranks: int) -> str:
    """``<binary> <size_bytes> <min busbw GB/s> <max time us>`` per line."""
    lines = [
        f"# nccl-tests acceptance thresholds for {ranks} ranks ({performance.technology}),"
        " written by fabricplan export --format targets",
        "# binary size_bytes min_busbw_GBps max_time_us  (out-of-place columns of nccl-tests)",
    ]
    for r in target_records(performance):
        p = r.point
        lines.append(
            f"{NCCL_TESTS_BINARY[p.collective]} {p.size_bytes} {r.busbw_low_GBps:.6g}"
            f" {r.time_high_us:.6g}"
        )
    return "\n".join(lines) + "\n"


CLOUDAI_BASE_TEST = "nccl_base_test"
"""The NcclTest definition every CloudAI install ships (``conf/common/test/nccl_test.toml``,
``test_template_name = "NcclTest"``; NVIDIA/cloudai @5b5c0f72); each scenario test picks its
collective with ``cmd_args.subtest_name``."""


def _toml_size(size_bytes: int) -> str:
    """A byte count as nccl-tests' ``-b``/``-e`` take it (``128``, ``64K``, ``4G``)."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale}{suffix}"
    return str(size_bytes)


def cloudai_sol_toml(performance: PerformanceResult, ranks: int, nodes: int) -> str:
    """A CloudAI test scenario (``TestScenarioModel``: ``name`` and ``[[Tests]]``) with one
    NcclTest per collective over the predicted sizes, its ``sol`` the predicted busbw of the
    largest size (the speed-of-light line CloudAI's NcclTest report draws on its busbw plots);
    the per-size targets and bands ride along as comments.

    >>> from fabricplan.model.results import CollectivePoint, PerformanceResult
    >>> point = CollectivePoint(collective="all_reduce", size_bytes=1 << 30,
    ...     algorithm="ring", time_us=5000.0, algbw_GBps=200.0, busbw_GBps=375.0)
    >>> result = PerformanceResult(backend="analytic", technology="infiniband",
    ...     base_latency_us=2.0, collectives=(point,))
    >>> print(cloudai_sol_toml(result, 16, 2).split("[[Tests]]")[1].strip())
    id = "Tests.all_reduce"
    test_name = "nccl_base_test"
    num_nodes = 2
    sol = 375
      [Tests.cmd_args]
      subtest_name = "all_reduce_perf_mpi"
      minbytes = "1G"
      maxbytes = "1G"
    """
    records = target_records(performance)
    lines = [
        "# CloudAI test scenario: one NcclTest per collective, sol = the busbw (GB/s) fabricplan",
        f"# predicts at the largest size for {ranks} ranks on {nodes} nodes"
        f" ({performance.technology}). Run: cloudai run --test-scenario <this file> ...",
        "# Per size (a run passes when busbw >= busbw_low):",
        "#   subtest size_bytes algorithm busbw_GBps busbw_low_GBps time_us time_high_us band",
    ]
    for r in records:
        p = r.point
        lines.append(
            f"#   {NCCL_TESTS_BINARY[p.collective]}_mpi {p.size_bytes} {p.algorithm}"
            f" {p.busbw_GBps:.6g} {r.busbw_low_GBps:.6g} {p.time_us:.6g} {r.time_high_us:.6g}"
            f" ({r.band_source})"
        )
    lines += ["", f'name = "fabricplan-acceptance-{performance.technology}"', ""]
    collectives = list(dict.fromkeys(r.point.collective for r in records))
    for collective in collectives:
        points = sorted(
            (r.point for r in records if r.point.collective == collective),
            key=lambda point: point.size_bytes,
        )
        lines += [
            "[[Tests]]",
            f'id = "Tests.{collective}"',
            f'test_name = "{CLOUDAI_BASE_TEST}"',
            f"num_nodes = {nodes}",
            f"sol = {points[-1].busbw_GBps:.6g}",
            "  [Tests.cmd_args]",
            f'  subtest_name = "{NCCL_TESTS_BINARY[collective]}_mpi"',
            f'  minbytes = "{_toml_size(points[0].size_bytes)}"',
            f'  maxbytes = "{_toml_size(points[-1].size_bytes)}"',
            "",
        ]
    return "\n".join(lines)
