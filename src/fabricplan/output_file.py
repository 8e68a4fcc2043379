"""The one output layer: every file a command writes is checked before any work and written
whole or not at all (the twin of :mod:`fabricplan.input_file`).

- :func:`check_output_path` checks a path a command will write *before* any work starts,
  :func:`check_output_folder` a folder of several files, and :func:`check_output_format` that a
  file name's extension fits the format written (FP1301, FP1302).
- :func:`write_atomic` writes a whole file or nothing, :func:`write_atomic_set` a whole set of
  files or none of them (a temporary folder beside the target, then moved); SIGINT and SIGTERM
  are held while a temporary file is made and renamed, so none is left behind (FP1303).

It sits low (layer 1) so that every writer uses it: the CLI (through :mod:`fabricplan.cli.guard`),
``sweep`` for its results file, ``export`` for its sets of files.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from fabricplan.errors import OutputFileError

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
    """Hold Ctrl-C and SIGTERM for the steps that publish a result, and deliver them after.

    The Python handlers are swapped for one that only notes the signal, then restored, and a
    noted signal is raised again (so the command's own handler ends the run). Swapping the
    handler, not the thread's signal mask, also holds a signal that another thread received
    and one already pending when the block began: Python runs whichever handler is set when it
    gets to it. Outside the main thread (a web worker) Python delivers no signal: nothing to do.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: Any) -> None:
        noted.append(signum)

    previous = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if noted:
            signal.raise_signal(noted[0])


def _is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C's KeyboardInterrupt, or the exception a SIGTERM handler raises (a BaseException
    that is neither an error nor an exit)."""
    return not isinstance(exc, Exception | SystemExit | GeneratorExit)


MAX_STEP_TRIES = 100
"""Times a publishing step is run again after interrupts before the interrupt wins."""


def _finish(*steps: Callable[[], None]) -> None:
    """Run every step to its end, with signals held, even when an interrupt was already pending
    as a step began (Python raises it at the next bytecode, inside the held block): the step
    runs again, so each must do nothing the second time; the first interrupt is raised after
    the last step."""
    caught: BaseException | None = None
    for step in steps:
        for _ in range(MAX_STEP_TRIES):
            try:
                with _signals_held():
                    step()
                break
            except BaseException as exc:
                if not _is_interrupt(exc):
                    raise
                caught = caught or exc
    if caught is not None:
        raise caught


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
            fd = -1
            while fd < 0:  # the name is known before the file exists: an interrupt between
                tmp = _temporary_name(target)  # the two still lets the clean-up remove it
                try:
                    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
                except FileExistsError:
                    tmp = None
            handle = os.fdopen(fd, "wb")
        with handle:
            handle.write(data)
        written = tmp
        assert written is not None  # the loop above ends only once the file is made
        _plain_mode(written)
        with _signals_held():
            os.replace(written, target)
            tmp = None
    except BaseException as exc:
        if handle is not None:
            handle.close()
        if tmp is not None:
            _finish(functools.partial(Path(tmp).unlink, missing_ok=True))
        if isinstance(exc, OSError):
            raise _write_error(target, exc) from None
        raise


def _temporary_name(target: Path) -> str:
    """A hidden name beside ``target`` for its temporary file or folder."""
    return str(target.parent / f".{target.name[:200]}.{secrets.token_hex(6)}")


def _replace_if_there(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target``; nothing when ``source`` is gone (renamed already)."""
    if os.path.lexists(source):
        os.replace(source, target)


def write_atomic_set(folder: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> None:
    """Write a set of files into ``folder``, all of them or none.

    The files are written into a temporary folder beside ``folder``; a new folder is then
    renamed into place in one step, files into an existing folder one rename each. Ctrl-C and
    SIGTERM are held for the whole call and take effect when it returns: the folder then holds
    the old files or the new ones. On any error the temporary folder is removed.
    """
    target = Path(folder)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(target, exc) from None
    # Signals are held from the first byte to the last rename or the clean-up (a set of
    # configuration files takes milliseconds): Python would raise a pending interrupt at any
    # bytecode, the first line of a ``finally`` included, and leave the temporary folder.
    with _signals_held():
        tmp: Path | None = None
        try:
            with _signals_held():
                created = False
                while not created:  # named first, as in write_atomic
                    tmp = Path(_temporary_name(target))
                    try:
                        os.mkdir(tmp, 0o700)
                        created = True
                    except FileExistsError:
                        tmp = None
            staged = tmp
            assert staged is not None  # the loop above ends only once the folder is made
            for name, content in files.items():
                part = staged / name
                part.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
                _plain_mode(str(part))
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(staged, 0o777 & ~umask)
            if not target.exists():
                _finish(functools.partial(_replace_if_there, staged, target))
            else:  # one rename a file, all of them even if Ctrl-C comes between two
                _finish(
                    *(functools.partial(_replace_if_there, staged / n, target / n) for n in files)
                )
        except OSError as exc:
            raise _write_error(target, exc) from None
        finally:
            if tmp is not None:  # a Ctrl-C now would leave half the temporary folder
                _finish(functools.partial(shutil.rmtree, tmp, ignore_errors=True))


__all__ = [
    "FORMAT_SUFFIXES",
    "KERNEL_FILE_SYSTEMS",
    "NAME_MAX_BYTES",
    "check_output_folder",
    "check_output_format",
    "check_output_path",
    "write_atomic",
    "write_atomic_set",
]
