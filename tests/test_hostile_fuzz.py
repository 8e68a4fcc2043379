"""Mutations of the real-format fixtures (tests/data) through the commands that read them:
truncated, bytes flipped, columns swapped, NaN and giant numbers, lines repeated. A fixed
budget of derandomized examples; every outcome is an answer, findings or one clean line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile_run import run

DATA = Path(__file__).resolve().parent / "data"
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
