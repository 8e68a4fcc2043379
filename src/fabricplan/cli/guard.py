"""How every command meets the outside world: errors, output files and signals.

- :func:`guarded` turns a :class:`FabricPlanError` into one line on stderr and exit code 2, an
  interrupt (Ctrl-C, SIGTERM, also when it surfaces as a ``SystemError`` from a compiled numba
  loop) into one line and exit code 130 / 143, and an internal error that user input reached
  into one line and exit code 2 instead of a traceback.
- :func:`check_output_path` checks a path a command will write *before* any work starts, and
  :func:`check_output_format` that its extension fits the format written.
- :func:`write_atomic` writes a whole file or nothing, :func:`write_atomic_set` a whole set of
  files or none of them (a temporary folder beside the target, then moved).
- :func:`run_main` installs the SIGTERM handler and catches interrupts during start-up.
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, ParamSpec, TypeVar

import typer

from fabricplan.errors import FabricPlanError, OutputFileError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_INPUT = 2
EXIT_SIGINT = 128 + signal.SIGINT
"""Exit code after Ctrl-C (130), as a shell reports a process ended by SIGINT."""
EXIT_SIGTERM = 128 + signal.SIGTERM
"""Exit code after SIGTERM (143)."""
INTERNAL_CODE = "FP1399"
"""An internal check refused a value the input edge let through (a bug to report)."""

FORMAT_SUFFIXES: Mapping[str, frozenset[str]] = {
    "json": frozenset({".json"}),
    "md": frozenset({".md", ".markdown"}),
    "html": frozenset({".html", ".htm"}),
    "table": frozenset({".txt", ".text", ".log", ""}),
    "yaml": frozenset({".yaml", ".yml"}),
    "png": frozenset({".png"}),
    "svg": frozenset({".svg"}),
}
"""The file names each output format may be written under."""


class Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks remove temporary files."""


def fail(message: str) -> typer.Exit:
    """Print one error line and return the exit to raise."""
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(EXIT_INPUT)


def _interrupt_in(exc: BaseException) -> BaseException | None:
    """The interrupt behind an exception: numba re-raises it as ``SystemError`` (its cause)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt | Terminated):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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


INTERNAL_ERRORS = (ValueError, ArithmeticError, RecursionError, MemoryError, UnicodeError)
"""Exceptions user input can drive a model into: overflow, conversions, deep input."""


def guarded(func: Callable[P, R]) -> Callable[P, R]:
    """Run a command; every error a user can cause becomes one line on stderr.

    A :class:`FabricPlanError` exits 2 with its message; Ctrl-C exits 130 and SIGTERM 143 (also
    from inside a compiled loop); overflow, conversion, recursion and memory errors and
    pydantic's ``ValidationError`` of an internal model exit 2 with code FP1399.
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
        except SystemError as exc:
            cause = _interrupt_in(exc)
            if cause is None:
                raise
            raise interrupted(cause) from None
        except INTERNAL_ERRORS as exc:
            raise _internal(exc) from None
        except Exception as exc:
            from pydantic import ValidationError

            if isinstance(exc, ValidationError):
                raise _internal(exc) from None
            raise

    return wrapper


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


def run_main(build: Callable[[], Callable[[], Any]]) -> None:
    """Install the SIGTERM handler, build the application and run it.

    An interrupt while the application is imported or built ends with the same one line and
    exit code as one inside a command.
    """
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        build()()
    except (KeyboardInterrupt, Terminated) as exc:
        code = interrupted(exc).exit_code
        sys.exit(code)
    except SystemExit as exc:
        # Ctrl-C while click parses the command line, before the command's own guard: typer
        # exits 130 without a word; say the one line the guard would have said.
        cause = _unreported_interrupt(exc)
        if cause is not None:
            sys.exit(interrupted(cause).exit_code)
        raise


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


NAME_MAX_BYTES = 255
"""Longest file name most Linux and macOS file systems take (ext4, xfs, apfs: 255 bytes)."""
KERNEL_FILE_SYSTEMS = ("/proc", "/sys", "/dev")
"""Folders that hold kernel interfaces, not files a report goes into."""


def _output_error(where: str, what: str, value: Any, fix: str, code: str = "FP1301") -> Any:
    return OutputFileError(code, where, what, value, fix)


def check_output_path(path: str | os.PathLike[str], option: str = "--output") -> Path:
    """The path a command will write, checked before any work starts.

    Refused with FP1301: an empty name, a name longer than 255 bytes, a directory (or a device)
    where a file goes, a path under a regular file, a folder in ``/proc``, ``/sys`` or ``/dev``,
    a folder that cannot be written (checked by creating and removing a temporary file).

    Examples
    --------
    >>> try:
    ...     check_output_path("/proc/version")
    ... except OutputFileError as exc:
    ...     print(exc.code, exc.what)
    FP1301 is in a kernel file system, not a folder for files
    """
    text = os.fspath(path)
    fix = f"give {option} a file name in a folder you can write"
    if text in {"", "."}:
        raise _output_error(option, "no file name given", None, fix)
    target = Path(text)
    too_long = [p for p in target.parts if len(os.fsencode(p)) > NAME_MAX_BYTES]
    if too_long:
        raise _output_error(
            option,
            "a file or folder name is longer than 255 bytes",
            f"{len(os.fsencode(too_long[0]))} bytes",
            "use a shorter name",
        )
    absolute = Path(os.path.abspath(text))
    if any(
        absolute == Path(root) or Path(root) in absolute.parents for root in KERNEL_FILE_SYSTEMS
    ):
        raise _output_error(text, "is in a kernel file system, not a folder for files", None, fix)
    if target.is_dir():
        raise _output_error(text, "is a directory", None, "add a file name to the path")
    if target.exists() and not target.is_file():
        raise _output_error(text, "exists and is not a regular file", None, fix)
    _check_folder(target.parent, text, fix)
    return target


def _check_folder(folder: Path, where: str, fix: str) -> None:
    """The nearest existing ancestor must be a folder we can create a file in."""
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        if existing.is_symlink():
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise _output_error(where, "is under a regular file, not a folder", str(existing), fix)
    try:
        fd, probe = tempfile.mkstemp(prefix=".fabricplan-probe.", dir=existing)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _output_error(where, "the folder cannot be written", reason, fix) from None
    os.close(fd)
    os.unlink(probe)


def check_output_folder(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """A folder a command will write a set of files into, checked before any work starts."""
    text = os.fspath(path)
    fix = f"give {option} a folder you can write"
    if text in {"", "."}:  # typer reads an empty option as "."
        raise _output_error(option, "no folder name given", None, "name a folder, e.g. out")
    target = Path(text)
    if any(len(os.fsencode(p)) > NAME_MAX_BYTES for p in target.parts):
        raise _output_error(option, "a folder name is longer than 255 bytes", None, fix)
    absolute = Path(os.path.abspath(text))
    if any(
        absolute == Path(root) or Path(root) in absolute.parents for root in KERNEL_FILE_SYSTEMS
    ):
        raise _output_error(text, "is in a kernel file system", None, fix)
    if target.exists() and not target.is_dir():
        raise _output_error(text, "exists and is not a folder", None, fix)
    _check_folder(target if target.exists() else target.parent, text, fix)
    return target


def check_output_format(path: Path, fmt: str, option: str = "--format") -> None:
    """Refuse a file name whose extension belongs to another output format (FP1302).

    Examples
    --------
    >>> check_output_format(Path("out.html"), "html")
    >>> try:
    ...     check_output_format(Path("out.json"), "html")
    ... except OutputFileError as exc:
    ...     print(exc.code, exc.what)
    FP1302 the name says json but the format is html
    """
    suffix = path.suffix.lower()
    allowed = FORMAT_SUFFIXES.get(fmt, frozenset())
    if suffix in allowed or suffix == "":
        return
    named = next((name for name, ends in FORMAT_SUFFIXES.items() if suffix in ends), None)
    if named is None:
        return
    endings = " or ".join(sorted(e for e in allowed if e)) or "with no extension"
    raise _output_error(
        str(path),
        f"the name says {named} but the format is {fmt}",
        None,
        f"pass {option} {named} or name the file {endings}",
        code="FP1302",
    )


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the few renames that publish a result."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _plain_mode(path: str) -> None:
    # mkstemp makes the file private (0600); give it the mode a plain open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def _write_error(target: Path, exc: OSError) -> OutputFileError:
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on the device"
    return _output_error(  # type: ignore[no-any-return]
        str(target), "cannot write the file", reason, "choose another path", code="FP1303"
    )


def write_atomic(path: str | os.PathLike[str], content: str | bytes) -> None:
    """Write a whole file or nothing: into a temporary file beside it, then rename.

    An error, Ctrl-C or SIGTERM while writing removes the temporary file; the rename itself runs
    with those signals held, so no hidden temporary file is left behind.
    """
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(target, exc) from None
    tmp: str | None = None
    handle: BinaryIO | None = None
    try:
        # Signals are held while the temporary file is created and named, so an interrupt
        # arrives only once ``tmp`` is known and can be removed.
        with _signals_held():
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", dir=target.parent)
            handle = os.fdopen(fd, "wb")
        with handle:
            handle.write(data)
        _plain_mode(tmp)
        with _signals_held():
            os.replace(tmp, target)
            tmp = None
    except BaseException as exc:
        if handle is not None:
            handle.close()
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_error(target, exc) from None
        raise


def write_atomic_set(folder: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> None:
    """Write a set of files into ``folder``, all of them or none.

    The files are written into a temporary folder beside ``folder``; a new folder is then
    renamed into place in one step, files into an existing folder one rename each, with Ctrl-C
    and SIGTERM held until the last one. On any error the temporary folder is removed.
    """
    target = Path(folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(target, exc) from None
    tmp: Path | None = None
    try:
        with _signals_held():
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name[:200]}.", dir=target.parent))
        for name, content in files.items():
            part = tmp / name
            part.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
            _plain_mode(str(part))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        with _signals_held():
            if not target.exists():
                os.replace(tmp, target)
            else:
                for name in files:
                    os.replace(tmp / name, target / name)
    except OSError as exc:
        raise _write_error(target, exc) from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
