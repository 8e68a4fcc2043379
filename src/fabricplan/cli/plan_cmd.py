"""``design``, ``cost`` and ``compare``: the main job, from a spec to a recommendation."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from fabricplan.cli.guard import check_output_format, check_output_path, guarded, write_atomic

SpecArg = Annotated[
    Path, typer.Argument(help="The cluster spec (YAML); `fabricplan init` writes one.")
]


class Format(StrEnum):
    table = "table"
    json = "json"
    md = "md"
    html = "html"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
]
BackendOpt = Annotated[
    str, typer.Option("--backend", help="Performance model: analytic | flow | packet.")
]
CalibrationOpt = Annotated[
    Path | None,
    typer.Option("--calibration", help="A profile from `fabricplan calibrate` to use."),
]


def register(app: typer.Typer) -> None:
    app.command("design")(design)
    app.command("cost")(cost)
    app.command("compare")(compare)


def _run(
    spec_path: Path,
    parts: tuple[str, ...],
    fmt: Format,
    output: Path | None,
    backend: str = "analytic",
    calibration: Path | None = None,
    decide: bool = False,
) -> None:
    from fabricplan.evaluate import evaluate_feasible
    from fabricplan.model.results import PerfRequest
    from fabricplan.spec import load_spec

    if output is not None:
        check_output_format(check_output_path(output), fmt.value)
    valid = load_spec(spec_path)
    profile = None
    if calibration is not None:
        from fabricplan.measure.calibration import load_profile

        profile = load_profile(calibration)
    request = PerfRequest(calibration=profile)
    evals, infeasible = evaluate_feasible(valid, backend=backend, request=request)
    recommendation = None
    if decide:
        from fabricplan.recommend.decision import recommend

        recommendation = recommend(valid, evals, backend, request, infeasible)
    if fmt is Format.json:
        from fabricplan.report.document import options_document

        doc = options_document(valid, evals, parts, recommendation, infeasible)
        text = json.dumps(doc, indent=2)
    elif fmt is Format.md:
        from fabricplan.report.markdown import markdown_report

        text = markdown_report(valid, evals, parts, recommendation, infeasible)
    elif fmt is Format.html:
        from fabricplan.report.html import html_report

        text = html_report(valid, evals, parts, recommendation, infeasible)
    else:
        from fabricplan.report.table import print_report

        console = Console(record=output is not None, width=120 if output else None)
        print_report(console, valid, evals, parts, recommendation, infeasible)
        if output is not None:
            write_atomic(output, console.export_text())
            typer.echo(f"wrote {output}")
        return
    if output is not None:
        write_atomic(output, text)
        typer.echo(f"wrote {output}")
    else:
        typer.echo(text)


@guarded
def design(spec: SpecArg, fmt: FormatOpt = Format.table, output: OutputOpt = None) -> None:
    """Design every technology's fabric: switches per tier, links, cables, limits."""
    _run(spec, ("design",), fmt, output)


@guarded
def cost(spec: SpecArg, fmt: FormatOpt = Format.table, output: OutputOpt = None) -> None:
    """Design and price every technology's fabric: capex, power, opex, TCO."""
    _run(spec, ("design", "cost"), fmt, output)


@guarded
def compare(
    spec: SpecArg,
    fmt: FormatOpt = Format.table,
    output: OutputOpt = None,
    backend: BackendOpt = "analytic",
    calibration: CalibrationOpt = None,
) -> None:
    """The main job: design, price, model and decide, with reasons and flip points."""
    _run(spec, ("design", "cost", "performance", "ops"), fmt, output, backend, calibration, True)
