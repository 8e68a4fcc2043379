"""The ``fabricplan`` command, built by :func:`create_app`.

Each command group lives in its own module with a ``register(app)`` function;
:func:`fabricplan.cli.commands.register` lists them. Every call of :func:`create_app` builds a
new application (nothing is registered on a module-level object), so tests and embedders get
one with each command exactly once.
"""

from __future__ import annotations

TYPE_CHECKING = False
"""No ``typing`` import at run time: the start-up before :func:`main` stays short (Ctrl-C)."""
if TYPE_CHECKING:  # typer is imported when the app is built, after the signal handlers are set
    import typer

__all__ = ["HELP", "create_app", "main"]

HELP = "Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE."


def create_app() -> typer.Typer:
    """A new ``fabricplan`` application with every command registered once.

    Returns
    -------
    typer.Typer
        The application; call it to run the command line.

    Examples
    --------
    >>> app = create_app()
    >>> names = [c.name for c in app.registered_commands]
    >>> "simulate" in names, len(names) == len(set(names))
    (True, True)
    """
    # Imported here so that `fabricplan --help` stays fast and each module stays independent.
    import typer

    from fabricplan.cli import commands

    app = typer.Typer(
        name="fabricplan",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root() -> None:
        """Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE."""

    commands.register(app)
    return app


def main() -> None:
    """Entry point of the ``fabricplan`` console script (Ctrl-C and SIGTERM end in one line)."""
    import functools
    import sys

    try:
        from fabricplan.cli.guard import run_main
        from fabricplan.cli.sweep_cmd import bare_ray_as_local
    except KeyboardInterrupt:  # Ctrl-C while typer itself is imported
        print("interrupted (SIGINT); no partial file was left", file=sys.stderr)
        sys.exit(130)
    args = bare_ray_as_local(sys.argv[1:])
    run_main(lambda: functools.partial(create_app(), args=args))


if __name__ == "__main__":
    main()
