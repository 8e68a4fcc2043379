"""Registers every command module on the app."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from fabricplan.cli import plan_cmd, spec_cmd

    spec_cmd.register(app)
    plan_cmd.register(app)
    from fabricplan.cli import catalog_cmd
    catalog_cmd.register(app)
    from fabricplan.cli import perf_cmd
    perf_cmd.register(app)
    from fabricplan.cli import bench_cmd
    bench_cmd.register(app)
    from fabricplan.cli import lint_cmd
    lint_cmd.register(app)
    from fabricplan.cli import simulate_cmd
    simulate_cmd.register(app)
