"""Registers every command module on the app."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from fabricplan.cli import (
        bench_cmd,
        catalog_cmd,
        export_cmd,
        lint_cmd,
        perf_cmd,
        plan_cmd,
        serve_cmd,
        simulate_cmd,
        spec_cmd,
        sweep_cmd,
    )

    for module in (
        spec_cmd,
        plan_cmd,
        catalog_cmd,
        perf_cmd,
        simulate_cmd,
        lint_cmd,
        bench_cmd,
        serve_cmd,
        export_cmd,
        sweep_cmd,
    ):
        module.register(app)
