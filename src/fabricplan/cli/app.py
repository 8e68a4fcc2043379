"""The ``fabricplan`` command, built by :func:`create_app`.

Each command group lives in its own module with a ``register(app)`` function;
:data:`fabricplan.cli.commands.COMMANDS` lists them, and a module is imported when one of its
commands runs (``fabricplan --help`` and ``--version`` import none). Every call of
:func:`create_app` builds a new application (nothing is registered on a module-level object), so
tests and embedders get one with each command exactly once.
"""

from __future__ import annotations

TYPE_CHECKING = False
"""No ``typing`` import at run time: the start-up before :func:`main` stays short (Ctrl-C)."""
if TYPE_CHECKING:  # typer is imported when the app is built, after the signal handlers are set
    from collections.abc import MutableMapping

    import typer

__all__ = ["HELP", "create_app", "main"]

HELP = "Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE."


def create_app() -> typer.Typer:
    """A new ``fabricplan`` application with every command of
    :data:`fabricplan.cli.commands.COMMANDS` (each command's module is imported when it runs).

    Returns
    -------
    typer.Typer
        The application; call it to run the command line.

    Examples
    --------
    >>> import typer
    >>> group = typer.main.get_command(create_app())
    >>> names = group.list_commands(None)
    >>> "simulate" in names, len(names) == len(set(names))
    (True, True)
    """
    # Imported here so that `fabricplan --help` stays fast and each module stays independent.
    import typer

    from fabricplan.cli.commands import LazyCommands

    app = typer.Typer(
        name="fabricplan",
        help=HELP,
        cls=LazyCommands,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    def _version(asked: bool) -> None:
        if asked:
            from fabricplan import __version__

            print(f"fabricplan {__version__}")
            raise typer.Exit()

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            help="Print the version and exit.",
            is_eager=True,
            callback=_version,
            expose_value=False,
        ),
    ) -> None:
        """Plan GPU-cluster networks: design, price, model and compare InfiniBand and RoCE."""

    return app


_BLAS_THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"
"""OpenBLAS's thread count, read once when numpy loads it. fabricplan calls no BLAS routine
(no ``numpy.linalg``, no matrix product), and OpenBLAS's default of one thread per core cost
about 0.06 s of CPU at every start on a 2-core machine (docs/performance.md); a value the user
set is kept."""


def _quiet_blas(environ: MutableMapping[str, str]) -> None:
    """One OpenBLAS thread unless the user chose a count (before numpy is imported)."""
    environ.setdefault(_BLAS_THREADS_VARIABLE, "1")


def main() -> None:
    """Entry point of the ``fabricplan`` console script (Ctrl-C and SIGTERM end in one line)."""
    import functools
    import os
    import sys

    _quiet_blas(os.environ)
    try:
        from fabricplan.cli.guard import run_main
        from fabricplan.cli.sweep_cmd import bare_ray_as_local
    except KeyboardInterrupt:  # Ctrl-C while typer itself is imported
        print("interrupted (SIGINT); no partial file was left", file=sys.stderr)
        sys.exit(130)
    args = bare_ray_as_local(sys.argv[1:])
    run_main(lambda: functools.partial(create_app(), args=args))


def _main_at_once() -> None:
    """:func:`main`, ending the process without the interpreter's teardown
    (:func:`fabricplan.cli.guard.exit_at_once`; the console script's and ``python -m``'s way)."""
    import sys

    try:
        from fabricplan.cli.guard import exit_at_once
    except KeyboardInterrupt:  # Ctrl-C while typer itself is imported
        print("interrupted (SIGINT); no partial file was left", file=sys.stderr)
        sys.exit(130)
    exit_at_once(main)


if __name__ == "__main__":
    _main_at_once()
