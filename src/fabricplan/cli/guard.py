"""How every command meets the outside world: errors, output files and signals.

- :func:`guarded` turns a :class:`FabricPlanError` into one line on stderr and exit code 2, an
  interrupt (Ctrl-C, SIGTERM, also when it surfaces wrapped: a ``SystemError`` from a compiled
  numba loop, a ``RuntimeError`` from a class being built mid-import) into one line and exit
  code 130 / 143, and an internal error that user input reached
  into one line and exit code 2 instead of a traceback; so does a file system error no reader
  turned into its own message (a name too long to look up, a permission the path lost).
- the output files' checks and atomic writes (:func:`check_output_path`,
  :func:`check_output_folder`, :func:`check_output_format`, :func:`write_atomic`,
  :func:`write_atomic_set`) are :mod:`fabricplan.output_file`'s, re-exported for the commands.
- :func:`run_main` installs the SIGTERM handler and catches interrupts during start-up.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer

from fabricplan.errors import FabricPlanError
from fabricplan.output_file import (
    FORMAT_SUFFIXES,
    check_output_folder,
    check_output_format,
    check_output_path,
    write_atomic,
    write_atomic_set,
)

P = ParamSpec("P")
R = TypeVar("R")

EXIT_INPUT = 2
EXIT_SIGINT = 128 + signal.SIGINT
"""Exit code after Ctrl-C (130), as a shell reports a process ended by SIGINT."""
EXIT_SIGTERM = 128 + signal.SIGTERM
"""Exit code after SIGTERM (143)."""
INTERNAL_CODE = "FP1399"
"""An internal check refused a value the input edge let through (a bug to report)."""
FILE_SYSTEM_CODE = "FP1415"
"""The operating system refused a path no reader checked first (``OSError`` at the edge)."""


class Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks remove temporary files."""


def fail(message: str) -> typer.Exit:
    """Print one error line and return the exit to raise."""
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(EXIT_INPUT)


_received: list[BaseException] = []
"""The interrupt each signal handler of :func:`run_main` raised, in order of arrival: an
interrupt inside a library's error handling can come back as that library's own error with no
cause chain at all (pydantic-core's ``SchemaError`` names ``KeyboardInterrupt`` only in its
text), and the record still says the process was interrupted."""


def _interrupt_in(exc: BaseException) -> BaseException | None:
    """The interrupt behind an exception: numba re-raises it as ``SystemError`` (its cause),
    CPython as ``RuntimeError`` (its context); any other wrapping is known from the record of
    received signals."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt | Terminated):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return _received[-1] if _received else None


def interrupted(exc: BaseException) -> typer.Exit:
    """Print the one interrupt line and return the exit (130 after SIGINT, 143 after SIGTERM)."""
    term = isinstance(exc, Terminated)
    name = "SIGTERM" if term else "SIGINT"
    print(f"interrupted ({name}); no partial file was left", file=sys.stderr)
    return typer.Exit(EXIT_SIGTERM if term else EXIT_SIGINT)


def _internal(exc: BaseException) -> typer.Exit:
    """An internal error a user input reached: one line naming it, exit 2."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        what = f"{exc.title}.{loc}: {first['msg']}"
    elif isinstance(exc, RecursionError):
        what = "the input nests too deep to evaluate"
    elif isinstance(exc, MemoryError):
        what = "out of memory"
    else:
        what = f"{type(exc).__name__}: {exc}"
    what = what if len(what) <= 160 else what[:157] + "..."
    return fail(
        f"input: a value passed the spec's checks but an internal model refused it ({what}); "
        f"use values of a real cluster, and report the spec [{INTERNAL_CODE}]"
    )


def _file_system(exc: OSError) -> typer.Exit:
    """An operating-system error on a path the user gave: one line naming it, exit 2."""
    from fabricplan.errors import FabricPlanError

    where = os.fsdecode(exc.filename) if exc.filename is not None else "a file"
    what = exc.strerror or type(exc).__name__
    fix = "check the path: an existing regular file, each name at most 255 bytes"
    return fail(str(FabricPlanError(FILE_SYSTEM_CODE, where, what, None, fix)))


INTERNAL_ERRORS = (ValueError, ArithmeticError, RecursionError, MemoryError, UnicodeError)
"""Exceptions user input can drive a model into: overflow, conversions, deep input."""


def guarded(func: Callable[P, R]) -> Callable[P, R]:
    """Run a command; every error a user can cause becomes one line on stderr.

    A :class:`FabricPlanError` exits 2 with its message; Ctrl-C exits 130 and SIGTERM 143 (also
    from inside a compiled loop); overflow, conversion, recursion and memory errors and
    pydantic's ``ValidationError`` of an internal model exit 2 with code FP1399; an ``OSError``
    on a path (other than a closed pipe) exits 2 with code FP1415.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except FabricPlanError as exc:
            raise fail(str(exc)) from None
        except (KeyboardInterrupt, Terminated) as exc:
            raise interrupted(exc) from None
        except typer.Exit:
            raise
        except Exception as exc:
            # An interrupt can surface wrapped: numba re-raises it as ``SystemError``, CPython as
            # ``RuntimeError`` when it lands in a class body's ``__set_name__`` during an import,
            # pydantic-core as a ``SchemaError`` that keeps only its name.
            cause = _interrupt_in(exc)
            if cause is not None:
                raise interrupted(cause) from None
            if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
                raise _file_system(exc) from None  # typer answers a closed pipe itself
            if isinstance(exc, INTERNAL_ERRORS):
                raise _internal(exc) from None
            from pydantic import ValidationError

            if isinstance(exc, ValidationError):
                raise _internal(exc) from None
            raise

    return wrapper


def _raise_terminated(signum: int, frame: Any) -> None:
    exc = Terminated()
    _received.append(exc)
    raise exc


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    exc = KeyboardInterrupt()
    _received.append(exc)
    raise exc


def run_main(build: Callable[[], Callable[[], Any]]) -> None:
    """Install the SIGTERM handler, build the application and run it.

    An interrupt while the application is imported or built ends with the same one line and
    exit code as one inside a command.
    """
    _received.clear()
    signal.signal(signal.SIGTERM, _raise_terminated)
    # Ctrl-C is Python's KeyboardInterrupt again (the console script's entry ended the process at
    # once while it imported): from here on, ``finally`` blocks remove temporary files.
    signal.signal(signal.SIGINT, _raise_keyboard_interrupt)
    try:
        build()()
    except (KeyboardInterrupt, Terminated) as exc:
        code = interrupted(exc).exit_code
        sys.exit(code)
    except Exception as exc:
        # an interrupt wrapped (by CPython, pydantic, numba) while the application is built
        cause = _interrupt_in(exc)
        if cause is None:
            raise
        sys.exit(interrupted(cause).exit_code)
    except SystemExit as exc:
        # Ctrl-C while click parses the command line, before the command's own guard: typer
        # exits 130 without a word; say the one line the guard would have said.
        cause = _unreported_interrupt(exc)
        if cause is not None:
            sys.exit(interrupted(cause).exit_code)
        raise


def exit_at_once(run: Callable[[], None]) -> None:
    """Run ``run`` as the whole process and end the process without the interpreter's teardown.

    Freeing every object and module at exit took 0.13-0.2 s of CPU after a 100k-GPU ``compare``
    (docs/performance.md), after the answer was written. The exit still does what a normal one
    does that anyone sees: the ``atexit`` handlers run, standard output and error are flushed,
    and the exit code is the command's. It falls back to the normal exit where that would do
    more: a thread that is not a daemon still running (the normal exit waits for it), an exit
    with a message instead of a code, a stream that cannot be flushed. Any other exception
    leaves as usual (its traceback is printed by the interpreter).
    """
    import atexit
    import threading

    try:
        run()
        code = 0
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        code = exc.code or 0
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(t.is_alive() and not t.daemon for t in others):
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)  # the normal exit reports the stream as Python does
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # as the interpreter's own exit on a failed flush
    os._exit(code)


def _unreported_interrupt(exc: BaseException) -> BaseException | None:
    """The interrupt behind an exit that no one reported: one reached through explicit causes
    and unsuppressed contexts (the guard's own exits suppress theirs)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt | Terminated):
            return current
        seen.add(id(current))
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None
    return None


__all__ = [
    "EXIT_INPUT",
    "EXIT_SIGINT",
    "EXIT_SIGTERM",
    "FORMAT_SUFFIXES",
    "INTERNAL_CODE",
    "Terminated",
    "check_output_folder",
    "check_output_format",
    "check_output_path",
    "exit_at_once",
    "fail",
    "guarded",
    "interrupted",
    "run_main",
    "write_atomic",
    "write_atomic_set",
]
