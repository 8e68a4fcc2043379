"""How every command turns a user error into one line on stderr and exit code 2."""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import typer

from fabricplan.errors import FabricPlanError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_INPUT = 2


def fail(message: str) -> typer.Exit:
    """Print one error line and return the exit to raise."""
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(EXIT_INPUT)


def guarded(func: Callable[P, R]) -> Callable[P, R]:
    """Run a command; a :class:`FabricPlanError` becomes one line on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except FabricPlanError as exc:
            raise fail(str(exc)) from None

    return wrapper


def write_atomic(path: str | os.PathLike[str], content: str | bytes) -> None:
    """Write a whole file or nothing: into a temporary file beside it, then rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
