"""``fabricplan simulate SPEC``: one traffic pattern on every technology's designed fabric.

Options and rendering only: :func:`fabricplan.sim.run.run_pattern` designs each fabric and runs
the pattern at the chosen level (flow, packet or the analytic model) with seeds, jobs and
failures. Without ``--pattern`` the spec's ``workload`` is simulated as one training step.
"""

from __future__ import annotations

import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from fabricplan.cli.guard import guarded
from fabricplan.cli.plan_cmd import MAX_SEED
from fabricplan.errors import ModelError
from fabricplan.sim.mechanism import CONGESTION_CONTROLS, ROUTING_NAMES, RoutingName
from fabricplan.sim.run_options import (
    DEFAULT_TOLERANCE,
    PATTERNS,
    PatternName,
    RunCongestionControl,
    RunOptions,
    SimLevel,
)

# The spec, the models and the simulators are imported when the command runs, so that
# `fabricplan simulate --help` imports none of them (tests/test_cli_startup.py).

PROGRESS_AFTER_S = 2.0
"""A progress bar appears once a run has taken this long."""


class Backend(StrEnum):
    flow = "flow"
    packet = "packet"
    analytic = "analytic"


class Format(StrEnum):
    table = "table"
    json = "json"


class PlacementChoice(StrEnum):
    packed = "packed"
    fragmented = "fragmented"


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)


class LateProgress:
    """A rich progress bar on stderr that shows itself only after :data:`PROGRESS_AFTER_S`."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}

    def __call__(self, label: str, done: float) -> None:
        if self.bar is None:
            if time.perf_counter() - self.started < PROGRESS_AFTER_S or not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(label, total=1.0)
        self.bar.update(self.tasks[label], completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> str | None:
    if value is not None and value not in allowed:
        raise ModelError(
            "FP537",
            option,
            "is not one of the allowed values",
            value,
            f"use one of {', '.join(allowed)}",
        )
    return value


def _table(record: dict[str, Any]) -> str:
    lines = [f"# {record['technology']}: {record['pattern']} ({record['backend']} model)"]
    if record.get("fct_us") is None:
        lines.append(
            f"  completion {record['completion_us']:.1f} us"
            f"  ({record.get('algorithm', '')}, busbw {record['busbw_GBps']:.1f} GB/s)"
        )
        return "\n".join(lines)
    fct = record["fct_us"]
    spread = record["seeds"]["completion_us"]
    lines += [
        f"  routing {record['routing']}, flow control {record['link_flow_control']},"
        f" congestion control {record['congestion_control']}",
        f"  flows {record['flows']}, completion {record['completion_us']:.1f} us,"
        f" FCT p50 {fct['p50']:.1f} p99 {fct['p99']:.1f} max {fct['max']:.1f} us",
    ]
    if len(record["seeds"]["seeds"]) > 1:
        lines.append(
            f"  over {len(record['seeds']['seeds'])} seeds: completion min"
            f" {spread['min']:.1f} p50 {spread['p50']:.1f} max {spread['max']:.1f} us"
        )
    lines += [
        f"  {c['name']}: {c['time_us']:.1f} us ({c['flows']} flows)" for c in record["collectives"]
    ]
    lines += [
        f"  {t['tier']:<14} utilisation mean {t['mean_utilisation']:6.1%}"
        f" max {t['max_utilisation']:6.1%}  paused {t['paused_us']:.1f} link-us"
        for t in record["tiers"]
    ]
    lines += [
        f"  busiest: {b['name']} ({b['tier']}) {b['utilisation']:.1%}"
        for b in record["busiest_links"][:3]
    ]
    if record["backend"] == "packet":
        lines.append(
            f"  status {record['status']}, {record['events']} events, pauses {record['pauses']},"
            f" drops {record['drops']}, retransmits {record['retransmits']},"
            f" {record['wall_s']:.2f} s"
        )
    else:
        lines.append(f"  {record['epochs']} epochs, {record['wall_s']:.2f} s")
    return "\n".join(lines)


@guarded
def simulate_command(
    spec: Annotated[Path, typer.Argument(help="Cluster spec (YAML).")],
    backend: Annotated[Backend, typer.Option("--backend", help="Model.")] = Backend.flow,
    pattern: Annotated[
        str | None,
        typer.Option(
            "--pattern",
            "-p",
            help=f"{', '.join(PATTERNS)} (default: the spec's workload as a training step).",
        ),
    ] = None,
    size: Annotated[
        str | None,
        typer.Option(
            "--size",
            "-s",
            help="Bytes, e.g. 64M (per rank for"
            " collectives, per flow for permutation/incast/random).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of everything random.")
    ] = 0,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            help="Runs, each with a child of --seed (numpy SeedSequence); the report gives"
            " the spread.",
            min=1,
        ),
    ] = 1,
    routing: Annotated[
        str | None, typer.Option("--routing", help="Override routing: " + ", ".join(ROUTING_NAMES))
    ] = None,
    cc: Annotated[
        str | None,
        typer.Option("--cc", help="Override congestion control: " + ", ".join(CONGESTION_CONTROLS)),
    ] = None,
    senders: Annotated[int | None, typer.Option("--senders", help="Incast senders.", min=1)] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", help="Equal jobs sharing the fabric, each running the pattern.", min=1
        ),
    ] = 1,
    placement: Annotated[
        PlacementChoice, typer.Option("--placement", help="Where the jobs' nodes are.")
    ] = PlacementChoice.packed,
    qps: Annotated[
        int, typer.Option("--qps", help="Queue pairs per connection (ECMP entropy).", min=1)
    ] = 1,
    background: Annotated[
        float,
        typer.Option(
            "--background", help="Poisson WebSearch background load (0-1).", min=0.0, max=1.0
        ),
    ] = 0.0,
    background_us: Annotated[
        float, typer.Option("--background-us", help="Background arrival window (us).", min=0.0)
    ] = 1000.0,
    fail_links: Annotated[
        int,
        typer.Option(
            "--fail-links", help="Random leaf-spine cables down (drawn from the seed).", min=0
        ),
    ] = 0,
    fail_switch: Annotated[
        list[str] | None,
        typer.Option("--fail-switch", help="A switch down, e.g. spine0 (repeatable)."),
    ] = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Completion batching (0 = exact).", min=0.0)
    ] = DEFAULT_TOLERANCE,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            help="Refuse a run whose estimated memory is above this (e.g. 8G); default: the"
            " memory the machine has available.",
        ),
    ] = None,
) -> None:
    """Simulate one traffic pattern on every technology of SPEC."""
    from fabricplan.cli.notice import announce_compilation
    from fabricplan.sim.run import run_pattern
    from fabricplan.spec import load_spec
    from fabricplan.units import parse_size

    chosen = cast(PatternName, _choice(pattern, PATTERNS, "--pattern") or "training_step")
    mode = cast(RoutingName | None, _choice(routing, ROUTING_NAMES, "--routing"))
    allowed_cc: tuple[str, ...] = CONGESTION_CONTROLS
    if backend is Backend.packet:  # the packet backend also runs HPCC
        allowed_cc = (*CONGESTION_CONTROLS, "hpcc")
    congestion = cast(RunCongestionControl | None, _choice(cc, allowed_cc, "--cc"))
    size_bytes = None
    if size is not None:
        try:
            size_bytes = parse_size(size)
        except ValueError:
            raise ModelError("FP533", "--size", "not a size", size, "use e.g. 64M") from None
    max_memory_bytes = None
    if max_memory is not None:
        try:
            max_memory_bytes = parse_size(max_memory)
        except ValueError:
            max_memory_bytes = 0
        if max_memory_bytes <= 0:
            raise ModelError(
                "FP1404", "--max-memory", "not a memory size", max_memory, "use e.g. 8G or 512M"
            ) from None
    options = RunOptions(
        max_memory_bytes=max_memory_bytes,
        pattern=chosen,
        size_bytes=size_bytes,
        seed=seed,
        seeds=seeds,
        routing=mode,
        congestion_control=congestion,
        senders=senders,
        jobs=jobs,
        placement=placement.value,
        qps=qps,
        background_load=background,
        background_us=background_us,
        fail_links=fail_links,
        fail_switches=tuple(fail_switch or ()),
        tolerance=tolerance,
    )
    valid = load_spec(spec)
    level: SimLevel = backend.value
    announce_compilation(level)
    progress = LateProgress()
    try:
        records = [
            run_pattern(valid, tech, level, options, progress).record()
            for tech in valid.spec.fabric.technologies
        ]
    finally:
        progress.close()
    if fmt is Format.json:
        typer.echo(json.dumps({"backend": backend.value, "results": records}, indent=2))
        return
    typer.echo("\n\n".join(_table(r) for r in records))
