"""Registers every command module on the app."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    from fabricplan.cli import plan_cmd, spec_cmd

    spec_cmd.register(app)
    plan_cmd.register(app)
