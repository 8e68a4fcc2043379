"""Run a command in-process as a hostile input would, and judge the outcome the same way for every
test: an exit code in the documented set, no traceback, at most a few lines on stderr."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from typer.testing import CliRunner, Result

from fabricplan.cli.app import create_app

EXIT_CODES = {0, 1, 2}
"""0 answer, 1 findings / below threshold (lint, check-bench), 2 input error."""
MAX_STDERR_LINES = 3


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} in JSON output")


def run(args: Sequence[str], counts: Counter[str] | None = None) -> Result:
    """Invoke ``fabricplan ARGS``; assert the outcome is one of the documented ones."""
    result = CliRunner().invoke(create_app(), list(args))
    shown = f"fabricplan {' '.join(args)[:300]}\nstdout: {result.stdout[-600:]}\n"
    shown += f"stderr: {result.stderr[-600:]}\nexception: {result.exception!r}"
    assert result.exit_code in EXIT_CODES, shown
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), shown
    assert "Traceback" not in result.output, shown
    assert len(result.stderr.strip().splitlines()) <= MAX_STDERR_LINES, shown
    if result.exit_code == 2:
        assert result.stderr.strip().startswith("error: "), shown
        assert "[FP" in result.stderr, shown
    if result.exit_code == 0 and "-f" in args and "json" in args and result.stdout.strip():
        json.loads(result.stdout, parse_constant=_no_constant)  # valid JSON: no NaN/Infinity
    if counts is not None:
        outcome = {0: "answers", 1: "findings", 2: "clean errors"}[result.exit_code]
        counts[outcome] += 1
    return result


def leftovers(folder: Path, before: set[Path]) -> set[Path]:
    """Files in ``folder`` that were not there before (temporary files included)."""
    return {p for p in folder.rglob("*")} - before
