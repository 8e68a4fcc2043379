"""Every code of docs/errors.md has an example that reaches it, and the doc shows what it printed.

The examples are ``tests/data/error_examples/FPnnn.yaml`` (see ``tests/error_examples.py``); a
code added to the source or the doc without one fails here, naming it.
"""

from __future__ import annotations

import functools

import pytest

from error_examples import (
    BEGIN,
    DOC,
    SHAPE,
    SRC,
    Example,
    code_order,
    examples,
    run,
    written,
)
from test_error_codes import listed_codes, raised_codes

FOUND = examples()
LIVE = sorted((c for c, e in FOUND.items() if e.kind != "retired"), key=code_order)


@functools.cache
def _raise_sites() -> dict[str, frozenset[str]]:
    """Source files (relative to src/fabricplan) that raise each code."""
    sites: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for code in raised_codes(path.read_text(encoding="utf-8")):
            sites.setdefault(code, set()).add(str(path.relative_to(SRC)))
    return {code: frozenset(files) for code, files in sites.items()}


def _sources_raising(code: str) -> frozenset[str]:
    return _raise_sites().get(code, frozenset())


def test_every_code_of_the_doc_has_an_example_and_every_example_a_code_of_the_doc() -> None:
    listed = listed_codes(DOC.read_text(encoding="utf-8").split(BEGIN)[0])
    missing = sorted(listed - set(FOUND), key=code_order)
    assert not missing, (
        f"codes in docs/errors.md without an example: {missing}; add"
        " tests/data/error_examples/CODE.yaml (see tests/error_examples.py), then run"
        " `python tests/error_examples.py --write`"
    )
    unlisted = sorted(set(FOUND) - listed, key=code_order)
    assert not unlisted, f"examples of codes docs/errors.md does not list: {unlisted}"


@pytest.mark.parametrize("code", LIVE)
def test_the_example_reaches_its_code_in_one_line(code: str) -> None:
    example = FOUND[code]
    outcome = run(example)
    assert not outcome.problem, f"{code}: {outcome.problem}"
    message = outcome.message(code)
    assert message and "\n" not in message
    if example.kind == "cli":
        assert outcome.exit == example.exit and outcome.lines == (message,)
    if example.kind != "finding":
        assert SHAPE.match(message.removeprefix("error: ")), (
            f"{code}: {message!r} is not 'where: what (value); fix [CODE]'"
        )


@pytest.mark.parametrize("code", sorted((c for c in LIVE if FOUND[c].guard), key=code_order))
def test_a_code_no_input_reaches_is_raised_only_behind_its_guard(code: str) -> None:
    example = FOUND[code]
    assert example.kind == "call" and example.raised_in, f"{code}: a guard names its sources"
    assert _sources_raising(code) == set(example.raised_in)


def test_a_retired_code_is_raised_nowhere_and_a_live_one_somewhere() -> None:
    retired = [c for c, e in FOUND.items() if e.kind == "retired"]
    assert retired and all(FOUND[c].reason for c in retired)
    raised = {c for c in LIVE if _sources_raising(c)}
    assert not [c for c in retired if _sources_raising(c)]
    assert sorted(set(LIVE) - raised, key=code_order) == []


def test_the_doc_shows_every_example_as_it_ran() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert BEGIN in doc
    expected = written(doc, FOUND)
    if doc != expected:
        changed = [line for line in expected.splitlines() if line and line not in doc.splitlines()]
        pytest.fail(
            "docs/errors.md differs from what its examples print; run"
            f" `python tests/error_examples.py --write` (first new line: {changed[:1]})"
        )


def test_the_harness_refuses_an_example_that_misses_its_code() -> None:
    answered = Example(
        code="FP101",
        kind="cli",
        args=("design", "spec.yaml"),
        files={"spec.yaml": "cluster: {gpus: 64}\n"},
    )
    other = Example(
        code="FP102",
        kind="cli",
        args=("design", "spec.yaml"),
        files={"spec.yaml": "cluster: {gpus: 1020}\n"},
    )
    quiet = Example(code="FP570", kind="call", python="x = 1\n")
    assert "exit 0, not 2" in run(answered).problem
    assert "no line ends in [FP102]" in run(other).problem
    assert run(quiet).problem == "raised nothing"


def test_the_shape_sees_a_missing_fix() -> None:
    assert SHAPE.match("spec.yaml: cluster.gpus: is required; add it to the spec [FP103]")
    assert not SHAPE.match("leaf.cfg: binary file, not configuration text [FP401]")
    assert not SHAPE.match("--roce-dscp: must be 0-63 (64) [FP409]")
