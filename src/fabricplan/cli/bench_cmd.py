"""``check-bench`` and ``calibrate``: real measurements against the model, and the model fitted to
them."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fabricplan.cli.guard import check_output_path, guarded, write_atomic
from fabricplan.errors import InputFileError

if TYPE_CHECKING:  # rich is imported when a table is printed (fast --help)
    from rich.console import Console

EXIT_BELOW_THRESHOLD = 1
MAX_WARNINGS_SHOWN = 8
_STATUS_STYLE = {
    "ok": "green",
    "fast": "cyan",
    "slow": "yellow",
    "fail": "bold red",
    "unchecked": "dim",
}
_UNITS = {"busbw_GBps": "busbw GB/s", "bw_gbps": "bandwidth Gb/s", "latency_us": "latency us"}
_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class Format(StrEnum):
    table = "table"
    json = "json"


LogsArg = Annotated[
    list[Path], typer.Argument(help="nccl-tests / rccl-tests / perftest output (text or JSON).")
]
SpecOpt = Annotated[
    Path | None, typer.Option("--spec", help="The cluster spec the logs come from.")
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
TechnologyOpt = Annotated[
    str | None,
    typer.Option(
        "--technology",
        help="infiniband | roce_v2 | roce_v1 | spectrum_x | ddc | uec, when the log does not say.",
    ),
]
OpOpt = Annotated[
    str | None,
    typer.Option("--op", help="The test (all_reduce, write_bw, ...) where the log does not say."),
]
GpusOpt = Annotated[
    int | None,
    typer.Option("--gpus", min=1, help="Ranks of an nccl-tests run whose log has no device list."),
]
BackendOpt = Annotated[str, typer.Option("--backend", help="Model: analytic | flow | packet.")]


def register(app: typer.Typer) -> None:
    app.command("check-bench")(check_bench)
    app.command("calibrate")(calibrate)


def _op(op: str | None) -> str | None:
    from fabricplan.measure.logline import known_test_name

    return known_test_name(op)


def _technology(name: str | None) -> Any:
    from typing import get_args

    from fabricplan.model.scenario import TechnologyName

    known = get_args(TechnologyName)
    if name is not None and name not in known:
        raise InputFileError(
            "FP458",
            "--technology",
            "is not a technology",
            name,
            f"use one of {', '.join(known)}",
        )
    return name


def _read(logs: list[Path], op: str | None) -> list[Any]:
    from fabricplan.measure.reader import read_bench_file

    return [read_bench_file(path, _op(op)) for path in logs]


def _model(spec: Path, backend: str) -> tuple[Any, Any]:
    from fabricplan.backends import get_backend
    from fabricplan.spec import load_spec

    return load_spec(spec), get_backend(backend).perform


def _value(quantity: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if quantity != "busbw_GBps" or value < 100 else f"{value:.1f}"


def _run_line(key: str, run: Any) -> str:
    parts = [f"{key} {run.test}"]
    if run.ranks:
        parts.append(f"{run.ranks} GPUs" + (f" on {run.nodes} nodes" if run.nodes else ""))
    if run.technology_hint:
        parts.append(f"{run.technology_hint} ({run.hint_reason})")
    if not run.complete:
        parts.append("[yellow]incomplete[/]")
    return ", ".join(parts)


def _print_check(console: Console, result: Any) -> None:
    from rich.table import Table

    from fabricplan.units import format_size

    keys: dict[tuple[str, int], str] = {}
    for number, file in enumerate(result.files, 1):
        console.print(
            f"[bold]\\[{number}] {file.path}[/bold] ({file.format}): {len(file.measurements)} rows"
        )
        for run in file.runs:
            keys[(file.path, run.index)] = f"{number}.{run.index}"
            console.print("  " + _run_line(keys[(file.path, run.index)], run), highlight=False)
        for warning in file.warnings[:MAX_WARNINGS_SHOWN]:
            console.print(f"  [yellow]warning[/yellow] {warning}", highlight=False)
        if len(file.warnings) > MAX_WARNINGS_SHOWN:
            console.print(f"  ... {len(file.warnings) - MAX_WARNINGS_SHOWN} more warnings")
    judged_cols = result.compared or result.thresholds_set
    groups: dict[tuple[str, str], list[Any]] = {}
    for j in result.judged:
        groups.setdefault((j.measurement.test, j.measurement.quantity), []).append(j)
    for (test, quantity), rows in groups.items():
        table = Table(title=f"{test}: {_UNITS[quantity]}", title_justify="left")
        columns = ["run", "size"] + (["time us"] if quantity == "busbw_GBps" else []) + ["measured"]
        if result.compared:
            columns += ["expected", "band", "ratio"]
        if judged_cols:
            columns.append("status")
        for column in columns:
            table.add_column(column, justify="left" if column in {"run", "status"} else "right")
        for j in rows:
            m = j.measurement
            cells = [keys.get((m.file, m.run), "?"), format_size(m.size_bytes)]
            if quantity == "busbw_GBps":
                cells.append(f"{m.time_us:.5g}")
            cells.append(_value(quantity, m.value))
            if result.compared:
                e = j.expected
                cells += [
                    _value(quantity, e.value) if e else "-",
                    f"{_value(quantity, e.low)}-{_value(quantity, e.high)}" if e else "",
                    f"{j.ratio:.0%}" if j.ratio is not None else "-",
                ]
            if judged_cols:
                cells.append(f"[{_STATUS_STYLE[j.status]}]{j.status}[/]")
            table.add_row(*cells)
        console.print(table)
    for note in result.calibration_notes:
        console.print(f"[cyan]calibration[/] {note}", highlight=False)
    for finding in result.findings:
        style = _SEVERITY_STYLE[finding.severity]
        console.print(
            f"[{style}]{finding.severity}[/] [{finding.code}] {finding.message}", highlight=False
        )
    counts = ", ".join(f"{n} {s}" for s, n in sorted(_status_counts(result).items()))
    console.print(f"{len(result.judged)} measurements" + (f": {counts}" if counts else ""))
    if result.failures:
        console.print(f"[bold red]{result.failures} below the threshold[/] (exit code 1)")


def _status_counts(result: Any) -> dict[str, int]:
    if not (result.compared or result.thresholds_set):
        return {}
    counts: dict[str, int] = {}
    for j in result.judged:
        counts[j.status] = counts.get(j.status, 0) + 1
    return counts


@guarded
def check_bench(
    logs: LogsArg,
    spec: SpecOpt = None,
    fmt: FormatOpt = Format.table,
    technology: TechnologyOpt = None,
    op: OpOpt = None,
    gpus: GpusOpt = None,
    backend: BackendOpt = "analytic",
    calibration: Annotated[
        Path | None, typer.Option("--calibration", help="A profile from `fabricplan calibrate`.")
    ] = None,
    band: Annotated[
        float | None,
        typer.Option(
            "--band",
            min=0.0,
            max=0.9,
            help="Fixed half-width of the expected band (default: the model's validation band"
            " for each row's regime and technology).",
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            help="Fail (exit 1) below this share of the expected performance.",
        ),
    ] = None,
    min_busbw: Annotated[
        float | None, typer.Option("--min-busbw", min=0.0, help="Fail below this busbw (GB/s).")
    ] = None,
    min_bw_gbps: Annotated[
        float | None,
        typer.Option("--min-bw-gbps", min=0.0, help="Fail below this perftest bandwidth (Gb/s)."),
    ] = None,
    min_size: Annotated[
        str, typer.Option("--min-size", help="Thresholds apply from this size on (e.g. 64M).")
    ] = "0",
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write busbw vs size to FILE.png or FILE.svg.")
    ] = None,
) -> None:
    """Read benchmark logs; with --spec, judge them against the model and name likely causes."""
    from fabricplan.measure.check import check_bench as run_check
    from fabricplan.measure.check import check_document
    from fabricplan.measure.expectation import JudgeSpec
    from fabricplan.units import parse_size

    if plot is not None and plot.suffix.lower() not in {".png", ".svg"}:
        raise InputFileError(
            "FP465",
            "--plot",
            "the figure must be .png or .svg",
            str(plot),
            "name the file e.g. busbw.png",
        )
    if plot is not None:
        check_output_path(plot, "--plot")
    try:
        min_size_bytes = parse_size(min_size)
    except ValueError:
        raise InputFileError(
            "FP467", "--min-size", "is not a size", min_size, "use e.g. 0, 1M, 64M, 1G"
        ) from None
    profile = None
    if calibration is not None:
        from fabricplan.measure.calibration import load_profile

        profile = load_profile(calibration)
    how = JudgeSpec(
        band=band,
        threshold=threshold,
        min_busbw_GBps=min_busbw,
        min_bw_gbps=min_bw_gbps,
        min_size_bytes=min_size_bytes,
        technology=_technology(technology),
        gpus=gpus,
        calibration=profile,
    )
    files = _read(logs, op)
    valid, perform = _model(spec, backend) if spec is not None else (None, None)
    result = run_check(files, valid, how, perform)
    if plot is not None:
        from fabricplan.measure.plot import bench_figure

        write_atomic(plot, bench_figure(result, "svg" if plot.suffix.lower() == ".svg" else "png"))
    if fmt is Format.json:
        typer.echo(json.dumps(check_document(result), indent=2))
    else:
        from rich.console import Console

        _print_check(Console(), result)
        if plot is not None:
            typer.echo(f"wrote {plot}")
    if result.failures:
        raise typer.Exit(EXIT_BELOW_THRESHOLD)


@guarded
def calibrate(
    logs: LogsArg,
    spec: Annotated[Path, typer.Option("--spec", help="The cluster spec the logs come from.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the profile.")],
    fmt: FormatOpt = Format.table,
    technology: TechnologyOpt = None,
    op: OpOpt = None,
    gpus: GpusOpt = None,
    backend: BackendOpt = "analytic",
    parameters: Annotated[
        str | None,
        typer.Option("--parameters", help="Comma-separated subset of the free parameters."),
    ] = None,
) -> None:
    """Fit the model's free parameters to measurements and write a calibration profile."""
    check_output_path(output, "--output")
    from fabricplan.measure.calibration import (
        calibrate_files,
        free_parameters,
        model_start,
        profile_yaml,
    )

    names = free_parameters(
        None if parameters is None else [p.strip() for p in parameters.split(",") if p.strip()]
    )
    files = _read(logs, op)
    valid, perform = _model(spec, backend)
    fit, tech = calibrate_files(files, valid, perform, _technology(technology), gpus, names)
    write_atomic(output, profile_yaml(fit))
    if fmt is Format.json:
        typer.echo(
            json.dumps({"technology": tech, "output": str(output), **fit.model_dump()}, indent=2)
        )
        return
    from rich.console import Console
    from rich.table import Table

    start = model_start(valid, tech)
    console = Console()
    table = Table(title=f"calibration on {tech} ({fit.points} measurements)")
    for column in ("parameter", "model default", "fitted", "+-"):
        table.add_column(column, justify="left" if column == "parameter" else "right")
    for name in names:
        value = getattr(fit.profile, name)
        table.add_row(
            name,
            f"{start[name]:g}" if name in start else "model",
            f"{value:.4g}" if value is not None else "default kept",
            f"{fit.uncertainty_pct[name]:.1f} %" if name in fit.uncertainty_pct else "",
        )
    console.print(table)
    console.print(
        f"mean error: {fit.error_before_pct:.1f} % with the defaults ->"
        f" {fit.error_after_pct:.1f} % fitted"
    )
    console.print(
        f"the profile applies to {fit.profile.technology} only; other technologies keep the"
        " model's defaults (add nic: / switch: to narrow it to one adapter or switch model)",
        highlight=False,
    )
    console.print(f"wrote {output} (use: fabricplan compare {spec} --calibration {output})")
