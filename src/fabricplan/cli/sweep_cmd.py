"""``fabricplan sweep`` (many scenarios, results as Parquet) and ``fabricplan sweep-report``."""

from __future__ import annotations

import signal
import sys
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from fabricplan.cli.guard import (
    check_output_folder,
    check_output_format,
    check_output_path,
    guarded,
    write_atomic,
    write_atomic_set,
)
from fabricplan.cli.plan_cmd import MAX_SEED
from fabricplan.errors import SweepError

EXIT_INTERRUPTED = 130
"""Exit code of a sweep stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it)."""


RAY_LOCAL = "local"
"""The ``--ray`` value that starts a Ray runtime on this machine."""


def bare_ray_as_local(args: list[str]) -> list[str]:
    """The ``sweep`` command line with a bare ``--ray`` completed to ``--ray local``.

    Options of the command-line parser take a value or none, never an optional one, so a
    ``--ray`` at the end or before another option is completed before parsing.

    Parameters
    ----------
    args
        The command line after the program name.

    Returns
    -------
    list[str]
        The same arguments, with ``local`` after every bare ``--ray`` of a ``sweep`` command.

    Examples
    --------
    >>> bare_ray_as_local(["sweep", "s.yaml", "--ray", "--seeds", "2"])
    ['sweep', 's.yaml', '--ray', 'local', '--seeds', '2']
    >>> bare_ray_as_local(["sweep", "s.yaml", "--ray"])
    ['sweep', 's.yaml', '--ray', 'local']
    >>> bare_ray_as_local(["sweep", "s.yaml", "--ray", "head:6379"])
    ['sweep', 's.yaml', '--ray', 'head:6379']
    >>> bare_ray_as_local(["compare", "s.yaml", "--ray"])
    ['compare', 's.yaml', '--ray']
    """
    if not args or args[0] != "sweep":
        return list(args)
    completed: list[str] = []
    for index, arg in enumerate(args):
        completed.append(arg)
        following = args[index + 1] if index + 1 < len(args) else None
        if arg == "--ray" and (following is None or following.startswith("-")):
            completed.append(RAY_LOCAL)
    return completed


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
    app.command("sweep-report")(sweep_report)


class RichProgress:
    """Points done, failures and ETA on stderr (a plain line at the end when not a terminal)."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.bar: Any = None
        self.task: Any = None
        self.failed = 0

    def start(self, points: int, done: int) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        if done:
            self.console.print(f"{done} of {points} points already in the results file")
        self.bar = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("points, {task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.console.is_terminal,
        )
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=points, completed=done, failed=0)

    def advance(self, failed: bool) -> None:
        self.failed += failed
        self.bar.update(self.task, advance=1, failed=self.failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


PARQUET_SUFFIXES = frozenset({".parquet", ".pq"})
"""The names a results file may have (a results file is always Parquet)."""


@guarded
def sweep(
    spec: Annotated[Path, typer.Argument(help="The base cluster spec (YAML).")],
    vary: Annotated[
        list[str],
        typer.Option(
            "--vary",
            help="KEY=VALUES at a spec path: 512..65536x2 (geometric), 1..4+1 (arithmetic),"
            " a,b,c (list); or a YAML file of explicit points. Repeat for a grid.",
        ),
    ],
    backend: Annotated[
        str, typer.Option("--backend", help="Performance model: analytic | flow | packet.")
    ] = "analytic",
    seeds: Annotated[
        int, typer.Option("--seeds", help="Seeds per point (flow / packet spread).", min=1)
    ] = 1,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=MAX_SEED, help="Base seed of the sweep.")
    ] = 0,
    size: Annotated[
        str, typer.Option("--size", help="Message size of the collective columns, e.g. 1G.")
    ] = "1G",
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Results file (Parquet); resumed if it exists.")
    ] = Path("results.parquet"),
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Local worker processes (default: every core).", min=1),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Run on Ray: bare --ray (last, or before another option) or 'local' starts a"
            " runtime on this machine; an address (host:6379, ray://host:10001) joins a cluster.",
        ),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start the results file over instead of resuming.")
    ] = False,
) -> None:
    """Evaluate every point of a grid over spec keys; one row per point, technology and seed."""

    from fabricplan.backends import user_backend
    from fabricplan.input_file import read_yaml_file
    from fabricplan.spec import SPEC_FILE, load_spec_file
    from fabricplan.sweep.grid import sweep_definition
    from fabricplan.sweep.runner import InProcessExecutor, ProcessPoolExecutor, run_sweep
    from fabricplan.units import parse_size

    check_output_path(output)
    if output.suffix.lower() not in PARQUET_SUFFIXES:
        raise SweepError(
            "FP1233",
            "--output",
            "names another kind of file; the results are Parquet",
            str(output),
            f"name the results file {output.stem}.parquet",
        )
    if ray is not None and workers is not None:
        raise SweepError(
            "FP1011", "--workers", "cannot be combined with --ray", workers, "give one of them"
        )
    user_backend(backend)  # an unknown name fails here, before any point
    try:
        size_bytes = parse_size(size)
    except ValueError:
        raise SweepError("FP1011", "--size", "is not a size", size, "use e.g. 1G or 64M") from None
    load_spec_file(spec)  # the base spec's own errors, with its file name
    base = read_yaml_file(spec, SPEC_FILE)
    definition = sweep_definition(base, vary, backend, seeds, seed, size_bytes)
    from fabricplan.cli.notice import announce_compilation

    announce_compilation(backend)
    executor: Any
    if ray is not None:
        from fabricplan.sweep.ray_runner import RayExecutor

        executor = RayExecutor(address=ray)
    elif workers == 1:
        executor = InProcessExecutor()
    else:
        executor = ProcessPoolExecutor(workers)
    progress = RichProgress()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        summary = run_sweep(definition, output, executor, progress, fresh=fresh)
    except KeyboardInterrupt:
        progress.close()
        print(
            f"interrupted: every finished point is in {output}; run the same command again to"
            " resume",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
        progress.close()
    where = ""
    if ray is not None and summary.ran:
        cluster = "a local Ray runtime" if ray == RAY_LOCAL else f"the Ray cluster at {ray}"
        where = f" on {cluster} ({executor.workers} CPUs)"
    typer.echo(
        f"wrote {summary.path}: {summary.rows} rows; {summary.points} points, {summary.ran} run"
        f" now{where}, {summary.skipped} already done, {summary.failed} failed"
        f" (`fabricplan sweep-report {summary.path}` shows them)"
    )


class ReportFormat(StrEnum):
    table = "table"
    md = "md"
    markdown = "markdown"
    """The same as ``md``."""
    html = "html"


@guarded
def sweep_report(
    results: Annotated[Path, typer.Argument(help="A results file from `fabricplan sweep`.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write here (.html or .md) instead of the terminal."),
    ] = None,
    fmt: Annotated[
        ReportFormat | None,
        typer.Option(
            "--format", "-f", help="table | md (or markdown) | html (default: from -o's suffix)."
        ),
    ] = None,
    figures: Annotated[
        Path | None,
        typer.Option("--figures", help="Also write each figure as an SVG file into this folder."),
    ] = None,
    x: Annotated[
        str | None,
        typer.Option(
            "--x",
            help="The varied key on the x axis (default: cluster.gpus or the first numeric one).",
        ),
    ] = None,
) -> None:
    """Plots and tables of a sweep: cost and step time against size with the crossovers, the
    Pareto front of TCO against step time, the recommendation map and the seed spread."""
    from fabricplan.report.sweep import (
        figure_files,
        load_sweep,
        sweep_html,
        sweep_markdown,
        sweep_tables,
    )

    chosen: ReportFormat
    if fmt is not None:
        chosen = ReportFormat.md if fmt is ReportFormat.markdown else fmt
    else:
        suffix = output.suffix.lower() if output is not None else ""
        chosen = {
            ".html": ReportFormat.html,
            ".htm": ReportFormat.html,
            ".md": ReportFormat.md,
            ".markdown": ReportFormat.md,
        }.get(suffix, ReportFormat.table)
    if output is not None:
        check_output_format(check_output_path(output), chosen.value)
    if figures is not None:
        check_output_folder(figures, "--figures")
    data = load_sweep(results, x)
    if figures is not None:
        svgs = dict(figure_files(data))
        write_atomic_set(figures, svgs)
        for name in svgs:
            typer.echo(f"wrote {figures / name}")
    if chosen is ReportFormat.table:
        from rich.console import Console

        console = Console(record=output is not None, width=120 if output else None)
        for table in sweep_tables(data):
            console.print(table)
        if output is not None:
            write_atomic(output, console.export_text())
            typer.echo(f"wrote {output}")
        return
    text = sweep_html(data) if chosen is ReportFormat.html else sweep_markdown(data)
    if output is None:
        typer.echo(text)
        return
    write_atomic(output, text)
    typer.echo(f"wrote {output}")
