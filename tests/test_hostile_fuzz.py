"""Mutations of the real-format fixtures (tests/data) through the commands that read them:
truncated, bytes flipped, columns swapped, NaN and giant numbers, lines repeated. A fixed
budget of derandomized examples; every outcome is an answer, findings or one clean line. And
one log of a million lines (generated, never committed), real nccl-tests and perftest logs each
mutated among NCCL INFO lines, read in one pass in memory that follows the rows kept."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile_run import run

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FIXTURES = sorted([*(DATA / "lint").iterdir(), *(DATA / "measure").iterdir()])
BUDGET = settings(
    max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)


def _command(fixture: Path, path: Path) -> list[str]:
    return ["lint", str(path)] if fixture.parent.name == "lint" else ["check-bench", str(path)]


def _mutate(data: bytes, how: str, where: float, byte: int) -> bytes:
    cut = int(len(data) * where)
    if how == "truncate":
        return data[:cut]
    if how == "flip":
        return data[:cut] + bytes([byte]) + data[cut + 1 :]
    if how == "nan":
        return data.replace(b"1", b"nan", 3)
    if how == "giant":
        return data.replace(b"0", b"9" * 400, 2)
    if how == "swap columns":
        lines = data.split(b"\n")
        swapped = [
            b" ".join(reversed(line.split())) if i % 2 else line for i, line in enumerate(lines)
        ]
        return b"\n".join(swapped)
    return data * 50  # repeated: many runs in one file


MUTATIONS = st.sampled_from(["truncate", "flip", "nan", "giant", "swap columns", "repeat"])


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
@BUDGET
@given(how=MUTATIONS, where=st.floats(0, 1), byte=st.integers(0, 255))
def test_mutated_fixtures_end_in_an_answer_or_one_line(
    fixture: Path, how: str, where: float, byte: int, tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    path = tmp_path / fixture.name
    path.write_bytes(_mutate(fixture.read_bytes(), how, where, byte))
    run(_command(fixture, path), fuzz_counts)


MILLION_LINES = 1_000_000
TEXT_LOGS = sorted((DATA / "measure").glob("*.log"))
INFO_LINE = "node{0}:1234:1234 [{1}] NCCL INFO Channel {2:02d}/32 : 0 1 2 3 4 5 6 7 via P2P/IPC\n"
INFO_PER_BLOCK = 400
"""NCCL INFO lines between two logs of the mixture: a debug run prints hundreds per table."""
KEPT_ROW_BYTES = 2048
"""Memory a kept table row may take while a file is read (bytes, an allowance): 1.3-1.7 KiB
measured by ``benchmarks/measure_speed.py`` (peak RSS over 100,000 rows, docs/performance.md)."""
FIXED_BYTES = 48 * 2**20
"""Memory a read may take whatever the file's length (an allowance): the 1 MiB read chunk and
its lines, the warnings (at most ``MAX_WARNINGS``), the allocator's slack."""
READ_AND_MEASURE = """
import resource, sys
from fabricplan.errors import FabricPlanError
from fabricplan.measure.reader import read_bench_file
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:
    record = read_bench_file(sys.argv[1])
    kept, formats = len(record.measurements), record.format
except FabricPlanError as exc:
    kept, formats = -1, "-"
    print(exc, file=sys.stderr)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(kept, after - before, formats.replace(" ", "_"))
"""


def _mutated_block(text: str, rng: random.Random) -> str:
    """One real log, mutated as :func:`_mutate` does (the whole-file repeat left out)."""
    how = rng.choice(["truncate", "flip", "nan", "giant", "swap columns", "none"])
    if how == "none":
        return text
    data = _mutate(text.encode(), how, rng.random(), rng.randrange(256))
    return data.decode("utf-8", errors="replace")


def _million_line_log(path: Path, seed: int) -> int:
    """Write real nccl-tests and perftest logs, each mutated, between NCCL INFO lines, to
    ``path`` until it holds a million lines; the last line cut in its middle. Returns the lines."""
    rng = random.Random(seed)
    logs = [log.read_text(encoding="utf-8") for log in TEXT_LOGS]
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        while lines < MILLION_LINES:
            block = _mutated_block(rng.choice(logs), rng)
            if not block.endswith("\n"):
                block += "\n"
            info = "".join(
                INFO_LINE.format(lines % 64, i % 8, i % 32) for i in range(INFO_PER_BLOCK)
            )
            out.write(block + info)
            lines += block.count("\n") + INFO_PER_BLOCK
        out.write("  1048576  262144  float  sum  -1  60.1  17.4")  # cut mid-row, no newline
    return lines + 1


def test_a_million_mutated_lines_are_read_in_memory_that_follows_the_rows_kept(
    tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    """About 2,300 real nccl-tests and perftest logs, each truncated, bytes flipped, columns
    swapped, NaN or 400-digit numbers put in (or left whole), among 10^6 NCCL INFO lines: one
    pass, an answer or one clean line, and peak memory that follows the rows kept (about
    :data:`KEPT_ROW_BYTES` each) plus a fixed allowance, not the file's ~80 MB."""
    log = tmp_path / "million.log"
    lines = _million_line_log(log, seed=18)
    assert lines >= MILLION_LINES
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", READ_AND_MEASURE, str(log)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 1, stderr[-600:]
    kept_text, grew_text, formats = stdout.split()
    kept, grew = int(kept_text), int(grew_text)
    fuzz_counts["answers" if kept >= 0 else "clean errors"] += 1
    assert kept > 1000, "the whole logs among the mutated ones must be read"
    assert "-tests_text" in formats and "perftest" in formats, formats  # both readers kept rows
    assert grew < FIXED_BYTES + kept * KEPT_ROW_BYTES, (lines, kept, grew / 2**20)
    assert grew < log.stat().st_size, (grew / 2**20, log.stat().st_size / 2**20)
