"""The ``fabricplan`` command. Each command group lives in its own module and registers here."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="fabricplan",
    help="Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE."""


def _register() -> None:
    # Imported here so that `fabricplan --help` stays fast and each module stays independent.
    from fabricplan.cli import commands

    commands.register(app)


def main() -> None:
    """Entry point of the ``fabricplan`` console script."""
    _register()
    app()
