"""``design``, ``cost`` and ``compare``: the main job, from a spec to a recommendation."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabricplan.cli.guard import check_output_format, check_output_path, guarded, write_atomic

if TYPE_CHECKING:  # rich and the models are imported when a command runs (fast --help)
    from rich.progress import Progress

    from fabricplan.backends import Backend
    from fabricplan.model.fabric import FabricDesign
    from fabricplan.model.results import PerformanceResult, PerfRequest
    from fabricplan.model.scenario import ValidScenario

SpecArg = Annotated[
    Path, typer.Argument(help="The cluster spec (YAML); `fabricplan init` writes one.")
]


class Format(StrEnum):
    table = "table"
    json = "json"
    md = "md"
    markdown = "markdown"
    """The same as ``md``."""
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
ConfigOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--config",
        help="Real switch/NIC configuration files (SONiC, NVUE, EOS, mlnx_qos, NIC CC): linted"
        " into the lossless settings the models use. Repeat for several files.",
    ),
]
AllowLongOpt = Annotated[
    bool,
    typer.Option(
        "--allow-long",
        help="Run a flow compare estimated to take more than five minutes of CPU (the estimate"
        " comes from the scenario: GPUs, technologies, the sizes the decision tries).",
    ),
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Recompute simulated results instead of reusing them.")
]
MAX_SEED = 2**32 - 1
"""Largest ``--seed`` (the web API's bound too): numpy's ``SeedSequence`` refuses a negative one
with a ValueError deep in a run, so the command line bounds it at the edge."""
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        min=0,
        max=MAX_SEED,
        help="Flow/packet levels: seed of the first run (ECMP hashing).",
    ),
]
SeedsOpt = Annotated[
    int | None,
    typer.Option(
        "--seeds",
        min=1,
        max=16,
        help="Flow/packet levels: runs per point, children of --seed; the value is the first"
        " run's, the seed spread widens its band (default: 3 at the flow level under ECMP, 1"
        " otherwise). The analytic model ignores it.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("design")(design)
    app.command("cost")(cost)
    app.command("compare")(compare)


def with_configs(valid: ValidScenario, configs: list[Path] | None) -> ValidScenario:
    """``valid`` with the lossless settings (and UEC link features) the configuration files
    imply (``--config``)."""
    if not configs:
        return valid
    from fabricplan.lint.checking.deployed import (
        deployed_spec_data,
        read_deployed,
        with_deployed_uec,
    )
    from fabricplan.spec import replace_spec

    fabric = valid.spec.fabric
    data, said = deployed_spec_data(valid, read_deployed(configs, fabric.lossless, fabric.uec))
    revised = with_deployed_uec(replace_spec(valid, data, "--config"))
    return revised.model_copy(update={"assumptions": (*revised.assumptions, *said)})


def _backend(
    name: str, use_cache: bool, estimate_s: float | None = None
) -> tuple[str | Backend, Progress | None]:
    """The backend to run: a simulator is cached and shows a progress bar on standard error
    (with the run's estimated CPU time when there is one); the analytic model needs neither, nor
    rich (imported here, not for every command)."""
    if name not in SIMULATED:
        return name, None
    from rich.console import Console

    from fabricplan.cli.notice import announce_compilation

    announce_compilation(name)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from fabricplan.backends import get_backend
    from fabricplan.perf_cache import CachedBackend, default_cache_dir

    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    expected = ""
    if estimate_s is not None:
        from fabricplan.sim.flow.duration import format_seconds

        expected = f" (estimated {format_seconds(estimate_s)} of CPU in all)"
    task = progress.add_task(f"{name}: starting{expected}", total=None)

    def on_run(technology: str, state: str) -> None:
        progress.update(task, description=f"{name}: {technology} {state}{expected}", advance=1)

    inner = get_backend(name)
    if not use_cache:
        return _Reporting(inner, on_run), progress
    return CachedBackend(inner, default_cache_dir(), on_run), progress


SIMULATED = frozenset({"flow", "packet"})


class _Reporting:
    """A backend that reports each run (no cache)."""

    def __init__(self, inner: Backend, on_run: Callable[[str, str], None]) -> None:
        self.inner, self.name, self.on_run = inner, inner.name, on_run

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        self.on_run(design.technology, "running")
        result = self.inner.perform(valid, design, request)
        self.on_run(design.technology, "done")
        return result


def _run(
    spec_path: Path,
    parts: tuple[str, ...],
    fmt: Format,
    output: Path | None,
    backend: str = "analytic",
    calibration: Path | None = None,
    decide: bool = False,
    configs: list[Path] | None = None,
    use_cache: bool = True,
    seed: int = 0,
    seeds: int | None = None,
    allow_long: bool = False,
) -> None:
    from fabricplan.backends import user_backend
    from fabricplan.evaluate import evaluate_feasible
    from fabricplan.model.results import PerfRequest
    from fabricplan.search_cache import SearchCache
    from fabricplan.spec import load_spec

    user_backend(backend)  # an unknown name fails here, before any work
    fmt = Format.md if fmt is Format.markdown else fmt
    if output is not None:
        check_output_format(check_output_path(output), fmt.value)
    valid = with_configs(load_spec(spec_path), configs)
    profile = None
    if calibration is not None:
        from fabricplan.measure.calibration import load_profile

        profile = load_profile(calibration)
    request = PerfRequest(calibration=profile, seed=seed, seeds=seeds)
    estimate_s = None
    if backend == "flow" and decide:  # before any work: refuse a run of hours in one line
        from fabricplan.recommend.decision import CLUSTER_SIZE_STEPS
        from fabricplan.sim.flow.duration import check_compare_seconds

        estimate_s = check_compare_seconds(valid, request, CLUSTER_SIZE_STEPS, allow_long)
    chosen, progress = _backend(backend, use_cache, estimate_s)
    with progress if progress is not None else nullcontext():
        cache = SearchCache()  # the decision's re-evaluations reuse the designs made here
        evals, infeasible = evaluate_feasible(valid, backend=chosen, request=request, cache=cache)
        recommendation = None
        if decide:
            from fabricplan.recommend.decision import recommend

            recommendation = recommend(valid, evals, chosen, request, infeasible, cache)
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
        from rich.console import Console

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
    config: ConfigOpt = None,
    no_cache: NoCacheOpt = False,
    seed: SeedOpt = 0,
    seeds: SeedsOpt = None,
    allow_long: AllowLongOpt = False,
) -> None:
    """The main job: design, price, model and decide, with reasons and flip points.

    ``--backend flow|packet`` puts the simulated collective times into the step time; results
    are cached in the user cache directory (``$FABRICPLAN_CACHE_DIR``) and reused for an
    unchanged spec. ``--seeds N`` runs each simulated point under N ECMP seeds and widens its
    band by their spread. ``--config`` reads real switch/NIC configurations into the lossless
    settings. A flow compare's CPU time is estimated from the scenario first
    (:mod:`fabricplan.sim.flow.duration`): above five minutes it is refused (FP1416) unless
    ``--allow-long``; otherwise the progress line shows the estimate.
    """
    _run(
        spec,
        ("design", "cost", "performance", "ops"),
        fmt,
        output,
        backend,
        calibration,
        True,
        config,
        not no_cache,
        seed,
        seeds,
        allow_long,
    )
