"""What each API route computes: the same library calls as the CLI command, the same document.

Every function takes a checked request body and the server's :class:`WebSettings`, and returns the
command's ``--format json`` document. Nothing here reads or writes a file: specs, logs and
configurations come in the request; a spec naming a file (``cost.price_book``) is refused.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import yaml

from fabricplan.model.results import PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.web.job import Report, Work
from fabricplan.web.limit import (
    WebRequestError,
    WebSettings,
    check_all_to_all,
    check_file,
    check_gpus,
    check_packet_size,
    check_run_time,
)
from fabricplan.web.schema import (
    MAX_SIZE_BYTES,
    CalibrateRequest,
    CheckBenchRequest,
    CompareRequest,
    LintRequest,
    PerfRequestBody,
    RoceConfigRequest,
    SimulateRequest,
    SpecRequest,
    SweepRequest,
    UploadedFile,
)

SPEC_ORIGIN = "spec"
"""How messages name the request's spec (the CLI names the spec file)."""


def valid_spec(
    data: dict[str, Any], settings: WebSettings, backend: str = "analytic"
) -> ValidScenario:
    """The request's spec checked as the CLI checks a spec file, plus the server's limits."""
    from fabricplan.spec import read_spec, resolve

    spec = read_spec(data, SPEC_ORIGIN)
    if spec.cost.price_book is not None:
        raise WebRequestError(
            "FP1115",
            f"{SPEC_ORIGIN}: cost.price_book",
            "names a file, which the web app never reads",
            spec.cost.price_book,
            "give the prices inline in cost.prices",
        )
    check_gpus(settings, backend, spec.cluster.gpus, SPEC_ORIGIN)
    return resolve(spec, origin=SPEC_ORIGIN)


def spec_document(body: SpecRequest, settings: WebSettings) -> dict[str, Any]:
    """The spec as given (JSON and YAML), with every default filled in."""
    valid = valid_spec(body.spec, settings)
    return {
        "spec": body.spec,
        "yaml": yaml.safe_dump(body.spec, sort_keys=False),
        "effective": valid.spec.model_dump(mode="json"),
        "assumptions": list(valid.assumptions),
    }


def options(
    body: SpecRequest, parts: tuple[str, ...], settings: WebSettings, decide: bool
) -> dict[str, Any]:
    """``design``, ``cost`` and ``compare``: the CLI's ``--format json`` document."""
    from fabricplan.evaluate import evaluate_feasible
    from fabricplan.report.document import options_document
    from fabricplan.search_cache import SearchCache

    valid = valid_spec(body.spec, settings)
    calibration = body.calibration if isinstance(body, CompareRequest) else None
    request = PerfRequest(calibration=calibration)
    cache = SearchCache()
    evals, infeasible = evaluate_feasible(valid, backend="analytic", request=request, cache=cache)
    recommendation = None
    if decide:
        from fabricplan.recommend.decision import recommend

        recommendation = recommend(valid, evals, "analytic", request, infeasible, cache)
    return options_document(valid, evals, parts, recommendation, infeasible)


COMPARE_PARTS = ("design", "cost", "performance", "ops")


def compare_report(body: CompareRequest, settings: WebSettings, fmt: str) -> str:
    """The ``compare`` report as a self-contained HTML page or Markdown."""
    from fabricplan.evaluate import evaluate_feasible
    from fabricplan.recommend.decision import recommend
    from fabricplan.search_cache import SearchCache

    valid = valid_spec(body.spec, settings)
    request = PerfRequest(calibration=body.calibration)
    cache = SearchCache()
    evals, infeasible = evaluate_feasible(valid, backend="analytic", request=request, cache=cache)
    recommendation = recommend(valid, evals, "analytic", request, infeasible, cache)
    if fmt == "html":
        from fabricplan.report.html import html_report

        return html_report(valid, evals, COMPARE_PARTS, recommendation, infeasible)
    from fabricplan.report.markdown import markdown_report

    return markdown_report(valid, evals, COMPARE_PARTS, recommendation, infeasible)


def perf(body: PerfRequestBody, settings: WebSettings) -> dict[str, Any]:
    """``perf``: predicted nccl-tests (or perftest) points per technology."""
    from fabricplan.evaluate import perform_each
    from fabricplan.model.results import DEFAULT_SIZES_BYTES, P2P_DEFAULT_SIZES_BYTES
    from fabricplan.report.document import perf_document

    for size in body.sizes_bytes or ():
        if not 0 < size <= MAX_SIZE_BYTES:
            raise WebRequestError(
                "FP1119",
                "sizes_bytes",
                "a size must be positive and at most 1 TiB",
                size,
                "use sizes such as 8, 1048576, 8589934592",
            )
    valid = valid_spec(body.spec, settings)
    default_sizes = P2P_DEFAULT_SIZES_BYTES if body.p2p else DEFAULT_SIZES_BYTES
    request = PerfRequest(
        collectives=() if body.p2p else tuple(body.collectives),
        sizes_bytes=tuple(body.sizes_bytes) if body.sizes_bytes else default_sizes,
        gpus=body.gpus,
        p2p=body.p2p,
        step=False,
        routing=body.routing,
        algorithm=body.algorithm,
        in_network_reduction=body.sharp,
        p2p_switch_hops=body.hops,
    )
    results, skipped = perform_each(valid, request, "analytic")
    ranks = body.gpus or valid.spec.cluster.gpus
    return perf_document("analytic", ranks, results, skipped, body.p2p)


def roce_config(body: RoceConfigRequest, settings: WebSettings) -> dict[str, Any]:
    """``roce-config``: the baseline files by name."""
    from fabricplan.export.switch_config import spec_roce_config_files

    valid = valid_spec(body.spec, settings)
    return {"files": spec_roce_config_files(valid, body.vendor, SPEC_ORIGIN)}


def file_name(upload: UploadedFile) -> str:
    """The upload's base name: messages name it; no path from a request is ever opened."""
    name = PureWindowsPath(PurePosixPath(upload.name).name).name.strip()
    if not name or name in {".", ".."}:
        raise WebRequestError(
            "FP1116", "files.name", "is not a file name", upload.name, "send the file's base name"
        )
    return name


def _texts(files: list[UploadedFile], settings: WebSettings) -> dict[str, str]:
    texts: dict[str, str] = {}
    for upload in files:
        name = file_name(upload)
        check_file(settings, name, upload.text)
        if name in texts:
            raise WebRequestError(
                "FP1117", name, "uploaded twice", None, "give each file a different name"
            )
        texts[name] = upload.text.lstrip("\ufeff")
    return texts


def lint(body: LintRequest, settings: WebSettings) -> dict[str, Any]:
    """``lint``: the findings over the uploaded configurations, checked as one fabric."""
    from fabricplan.lint.checking.linter import lint_texts
    from fabricplan.lint.checking.rule import IntentSpec

    for priority in body.pfc_priorities or ():
        if not 0 <= priority <= 7:
            raise WebRequestError(
                "FP1118", "pfc_priorities", "a priority is 0-7", priority, "use e.g. [3]"
            )
    intent = IntentSpec(
        lossless_priorities=frozenset(body.pfc_priorities)
        if body.pfc_priorities is not None
        else None,
        roce_dscp=body.roce_dscp,
        cnp_dscp=body.cnp_dscp,
    )
    result = lint_texts(_texts(body.files, settings), body.device_type, intent)
    return result.as_dict()


def _bench_files(files: list[UploadedFile], op: str | None, settings: WebSettings) -> list[Any]:
    from fabricplan.measure.reader import read_bench_text

    return [read_bench_text(text, name, op) for name, text in _texts(files, settings).items()]


def check_bench(body: CheckBenchRequest, settings: WebSettings) -> dict[str, Any]:
    """``check-bench``: the measurements, judged against the model when a spec is given."""
    from fabricplan.backends import get_backend
    from fabricplan.measure.check import check_bench as run_check
    from fabricplan.measure.check import check_document
    from fabricplan.measure.expectation import JudgeSpec

    how = JudgeSpec(
        band=body.band,
        threshold=body.threshold,
        min_busbw_GBps=body.min_busbw_GBps,
        min_bw_gbps=body.min_bw_gbps,
        min_size_bytes=body.min_size_bytes,
        technology=body.technology,
        gpus=body.gpus,
        calibration=body.calibration,
    )
    valid = valid_spec(body.spec, settings) if body.spec is not None else None
    files = _bench_files(body.files, _op(body.op), settings)
    perform = get_backend("analytic").perform if valid is not None else None
    return check_document(run_check(files, valid, how, perform))


def _op(op: str | None) -> str | None:
    from fabricplan.measure.logline import known_test_name

    return known_test_name(op, "op")


def calibrate(body: CalibrateRequest, settings: WebSettings) -> dict[str, Any]:
    """``calibrate``: the fitted profile (as data and as the YAML file the CLI writes)."""
    from fabricplan.backends import get_backend
    from fabricplan.measure.calibration import calibrate_files, free_parameters, profile_yaml

    names = free_parameters(body.parameters, "parameters")
    valid = valid_spec(body.spec, settings)
    files = _bench_files(body.files, _op(body.op), settings)
    fit, tech = calibrate_files(
        files, valid, get_backend("analytic").perform, body.technology, body.gpus, names
    )
    return {"technology": tech, **fit.model_dump(mode="json"), "profile_yaml": profile_yaml(fit)}


def simulation_work(body: SimulateRequest, settings: WebSettings) -> tuple[str, Work]:
    """Check a simulation request now (422 before anything is queued) and return the job's
    label and work: ``simulate --format json``'s document, with progress over every run."""
    from fabricplan.sim.run import RunOptions, run_pattern

    check_run_time(settings, body.time_limit_s)
    if body.backend == "packet":
        check_packet_size(settings, body.size_bytes)
    elif body.congestion_control == "hpcc":
        raise WebRequestError(
            "FP1120",
            "congestion_control",
            "hpcc is modelled by the packet backend only",
            body.congestion_control,
            "use none, dcqcn or ib_cc, or backend packet",
        )
    valid = valid_spec(body.spec, settings, body.backend)
    if body.pattern == "all_to_all":
        check_all_to_all(settings, valid.spec.cluster.gpus, SPEC_ORIGIN)
    options = RunOptions(
        pattern=body.pattern,
        size_bytes=body.size_bytes,
        seed=body.seed,
        seeds=body.seeds,
        routing=body.routing,
        congestion_control=body.congestion_control,
        senders=body.senders,
        jobs=body.jobs,
        placement=body.placement,
        qps=body.qps,
        background_load=body.background_load,
        background_us=body.background_us,
        fail_links=body.fail_links,
        fail_switches=tuple(body.fail_switches),
        tolerance=body.tolerance,
    )
    technologies = list(valid.spec.fabric.technologies)
    runs = len(technologies) * options.seeds
    level = body.backend

    def work(report: Report) -> dict[str, Any]:
        labels: list[str] = []

        def progress(label: str, done: float) -> None:
            if not labels or labels[-1] != label:
                labels.append(label)
            report((len(labels) - 1 + done) / runs, label)

        records = []
        for tech in technologies:
            report(len(labels) / runs, f"{tech}: designing and building the traffic")
            records.append(run_pattern(valid, tech, level, options, progress).record())
        return {"backend": body.backend, "results": records}

    from fabricplan.units import format_size

    size = f" {format_size(body.size_bytes)}" if body.size_bytes else ""
    label = f"{body.backend} {body.pattern}{size}, {valid.spec.cluster.gpus} GPUs"
    return label, work


def sweep_work(body: SweepRequest, settings: WebSettings) -> tuple[str, Work]:
    """Check a sweep request now (422 before anything is queued: the base spec, every point, the
    server's limits) and return the job's label and work: the rows ``fabricplan sweep`` writes,
    kept in the job's result instead of a file."""
    import math

    from fabricplan.sweep.grid import DEFAULT_SIZE_BYTES, point_tasks, sweep_definition
    from fabricplan.sweep.point import evaluate_point

    valid_spec(body.spec, settings)
    definition = sweep_definition(
        body.spec,
        body.vary,
        "analytic",
        body.seeds,
        body.base_seed,
        body.size_bytes or DEFAULT_SIZE_BYTES,
    )
    if "cost.price_book" in definition.keys:
        raise WebRequestError(
            "FP1115",
            "vary: cost.price_book",
            "names files, which the web app never reads",
            None,
            "vary cost.prices.<item> instead",
        )
    points = math.prod(len(d.points) for d in definition.dimensions)
    if points > settings.max_sweep_points:
        raise WebRequestError(
            "FP1124",
            "vary",
            "more points than this server sweeps",
            points,
            f"vary fewer values (at most {settings.max_sweep_points} points),"
            " or run `fabricplan sweep` on the command line",
        )
    tasks, total = point_tasks(definition)
    for task in tasks:
        check_gpus(settings, "analytic", task.valid.spec.cluster.gpus, f"sweep point {task.index}")

    def work(report: Report) -> dict[str, Any]:
        from fabricplan.report.sweep import (
            crossover_rows,
            figure_svgs,
            sweep_data,
            sweep_overview,
        )

        rows: list[dict[str, Any]] = []
        for done, task in enumerate(tasks):
            report(done / len(tasks), f"point {done + 1} of {len(tasks)}")
            rows.extend(evaluate_point(task).rows)
        report(1.0, "drawing the figures")
        # The Pareto fronts and the recommendation map of `fabricplan sweep-report`, as data;
        # its figures (crossovers marked, seed bands) and crossover table as it draws them.
        data = sweep_data(rows, definition.keys, "analytic", definition.seeds)
        header, crossing = crossover_rows(data) if data.x is not None else ([], [])
        return {
            "keys": list(definition.keys),
            "points": total,
            "rows": rows,
            **sweep_overview(data),
            "figures": [{"title": title, "svg": svg} for title, svg in figure_svgs(data)],
            "crossovers": {"header": header, "rows": crossing},
        }

    return f"sweep of {total} points over {', '.join(definition.keys)}", work
