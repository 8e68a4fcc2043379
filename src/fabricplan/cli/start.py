"""The ``fabricplan`` console script's entry point: its first statements hand Ctrl-C and SIGTERM
to fabricplan, before anything else of the command is imported.

Until :func:`fabricplan.cli.guard.run_main` takes over, either signal prints the one interrupt
line and ends the process at once with exit code 130 (SIGINT) or 143 (SIGTERM): nothing has been
written yet, so there is nothing to clean up. What remains before these statements is CPython's
own start-up (the interpreter, ``site`` and the environment's ``.pth`` files), the console
script's two lines (``import re``, ``import sys``) and the package's ``__init__`` (a docstring and
a lazy attribute); a signal there is Python's own (killed by SIGINT, no fabricplan code has run).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:  # type checkers read `signal`'s stubs; the same functions and numbers
    import signal as _signal
else:  # the interpreter's built-in module: `signal` would first build its enum classes
    import _signal


def _interrupted_early(signum: int, frame: object) -> None:
    """One line and the exit code, while the command is still being imported."""
    import os

    name = "SIGTERM" if signum == _signal.SIGTERM else "SIGINT"
    os.write(2, f"interrupted ({name}); no partial file was left\n".encode())
    os._exit(128 + signum)


_signal.signal(_signal.SIGINT, _interrupted_early)
_signal.signal(_signal.SIGTERM, _interrupted_early)


def main() -> None:
    """Run the ``fabricplan`` command line (:func:`fabricplan.cli.app.main`), ending the process
    without the interpreter's teardown (:func:`fabricplan.cli.guard.exit_at_once`)."""
    from fabricplan.cli.app import _main_at_once

    _main_at_once()


__all__ = ["main"]
