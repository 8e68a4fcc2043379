"""Run a command in-process as a hostile input would, and judge the outcome the same way for every
test: an exit code in the documented set, no traceback, at most a few lines on stderr."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from typer.testing import CliRunner, Result

from fabricplan.cli.app import create_app

EXIT_CODES = {0, 1, 2}
"""0 answer, 1 findings / below threshold (lint, check-bench), 2 input error."""
MAX_STDERR_LINES = 3
OUTCOMES = {
    0: "answers",
    1: "answers with lint/bench findings (exit 1)",
    2: "clean errors",
}
"""How a run that passed the checks ended. Exit 1 is an answer: lint found rule violations in the
(mutated) configuration, or check-bench found a run below the model's band; it is not a fault of
fabricplan. A fault (traceback, undocumented exit code, a long stderr, a file left behind)
fails the test and is counted as a failure."""


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} in JSON output")


_COMPILING = re.compile(r"fabricplan: compil(ing|ed) ")
"""The compile notice's two lines."""


def run(args: Sequence[str], counts: Counter[str] | None = None) -> Result:
    """Invoke ``fabricplan ARGS``; assert the outcome is one of the documented ones."""
    result = CliRunner().invoke(create_app(), list(args))
    shown = f"fabricplan {' '.join(args)[:300]}\nstdout: {result.stdout[-600:]}\n"
    shown += f"stderr: {result.stderr[-600:]}\nexception: {result.exception!r}"
    assert result.exit_code in EXIT_CODES, shown
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), shown
    assert "Traceback" not in result.output, shown
    # the numba compile notice (once after an install, cli/notice.py) is progress, not an answer
    said = "\n".join(
        line for line in result.stderr.strip().splitlines() if not _COMPILING.match(line)
    ).strip()
    assert len(said.splitlines()) <= MAX_STDERR_LINES, shown
    if result.exit_code == 2:
        assert said.startswith("error: "), shown
        assert "[FP" in said, shown
    if result.exit_code == 0 and "-f" in args and "json" in args and result.stdout.strip():
        json.loads(result.stdout, parse_constant=_no_constant)  # valid JSON: no NaN/Infinity
    if result.exit_code == 1 and args[0] == "lint" and "-f" not in args:
        # exit 1 is lint's answer "this configuration breaks rules": the rules must be listed
        assert re.search(r"\b\d+ (errors?|warnings?)\b", result.stdout), shown
    if counts is not None:
        outcome = OUTCOMES[result.exit_code]
        counts[outcome] += 1
    return result


def leftovers(folder: Path, before: set[Path]) -> set[Path]:
    """Files in ``folder`` that were not there before (temporary files included)."""
    return {p for p in folder.rglob("*")} - before
