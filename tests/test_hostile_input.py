"""The input layer: every file a user names is refused in one line when it is not a regular file,
too large, not text, or YAML/JSON built to hurt (duplicate keys, deep nesting, alias bombs,
overlong numbers) — through the reader and through every command that reads files."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricplan.errors import FabricPlanError, SpecError
from fabricplan.input_file import (
    MAX_YAML_DEPTH,
    FileKind,
    iter_lines,
    load_json,
    load_yaml,
    read_text,
)
from hostile_run import run

KIND = FileKind("spec", SpecError, "FP108", yaml_code="FP106", max_bytes=1000)
ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "training-2k" / "spec.yaml"
SMALL = ROOT / "examples" / "enterprise-256" / "spec.yaml"
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
)
"""478 bytes that expand to 10**9 nodes (the "billion laughs")."""


def _spec_with_book(book: Path) -> Path:
    spec = book.parent / f"spec-for-{book.name}.yaml"
    spec.write_text(f"cluster: {{gpus: 256}}\ncost: {{price_book: '{book}'}}\n")
    return spec


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.yaml"
    os.mkfifo(path)
    return path


def test_special_files_are_refused_before_opening(tmp_path: Path) -> None:
    for path in (_fifo(tmp_path), Path("/dev/zero"), tmp_path):
        with pytest.raises(SpecError) as info:
            read_text(path, KIND)
        assert info.value.code == "FP108"
        assert "regular file" in info.value.what or "directory" in info.value.what


def test_size_cap_and_decoding(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 1001)
    with pytest.raises(SpecError, match="too large"):
        read_text(big, KIND)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(SpecError, match=r"not UTF-8 text.*byte 9"):
        read_text(latin, KIND)
    fallback = FileKind("log", SpecError, "FP108", decode_fallback=True)
    assert read_text(latin, fallback) == "name: caf\ufffd\n"


def test_yaml_limits() -> None:
    with pytest.raises(SpecError, match="expands to too many YAML nodes"):
        load_yaml(ALIAS_BOMB, "bomb.yaml", KIND)
    with pytest.raises(SpecError, match="nest"):  # libyaml stops at 1000 levels itself
        load_yaml("[" * 10_000 + "]" * 10_000, "deep.yaml", KIND)
    with pytest.raises(SpecError, match="nests too deep"):
        load_yaml("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 200)), "deep.yaml", KIND)
    with pytest.raises(SpecError, match="refers to itself"):
        load_yaml("a: &a [*a]\n", "loop.yaml", KIND)
    with pytest.raises(SpecError, match="number too long"):
        load_yaml(f"gpus: {'9' * 400}\n", "long.yaml", KIND)
    with pytest.raises(SpecError, match=r"s.yaml:3: duplicate key \('gpus'\)"):
        load_yaml("cluster:\n  gpus: 1\n  gpus: 2\n", "s.yaml", KIND)
    nested = "[" * MAX_YAML_DEPTH + "]" * MAX_YAML_DEPTH
    assert load_yaml(nested, "ok.yaml", KIND) is not None
    assert load_yaml("a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n", "merge.yaml", KIND) == {
        "a": {"b": 1},
        "c": {"b": 1, "d": 2},
    }


def test_json_limits() -> None:
    for text in ('{"a": NaN}', '{"a": Infinity}', '{"a": ' + "9" * 400 + "}", "[" * 100_000):
        with pytest.raises(SpecError):
            load_json(text, "c.json", KIND)


def test_lines_stream_in_bounded_chunks(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"x" * 10 + b"\n" + "é".encode() * 600_000 + b"\r\nlast")
    kind = FileKind("log", SpecError, "FP108", max_bytes=10**7)
    lines = list(iter_lines(path, kind))
    assert [len(line) for line in lines] == [11, 600_002, 4]


@given(st.binary(max_size=400))
def test_any_bytes_as_a_spec_are_an_answer_or_one_clean_error(data: bytes) -> None:
    from fabricplan.input_file import load_yaml as load

    text = data.decode("utf-8", errors="replace")
    try:
        load(text, "fuzz.yaml", KIND)
    except FabricPlanError as exc:
        assert exc.code == "FP106"
        assert len(str(exc)) < 400


READERS = {
    "spec": lambda p: ["design", str(p)],
    "price book": lambda p: ["cost", str(_spec_with_book(p))],
    "lint": lambda p: ["lint", str(p)],
    "check-bench": lambda p: ["check-bench", str(p)],
    "calibration": lambda p: ["compare", str(SPEC), "--calibration", str(p)],
    "compare --config": lambda p: ["compare", str(SPEC), "--config", str(p)],
    "sweep-report": lambda p: ["sweep-report", str(p)],
    "sweep points file": lambda p: ["sweep", str(SMALL), "--vary", str(p), "-o", f"{p}.parquet"],
    "sweep resume": lambda p: ["sweep", str(SMALL), "--vary", "cluster.gpus=64", "-o", str(p)],
    "perf --config": lambda p: ["perf", str(SMALL), "--config", str(p)],
    "verify-cabling": lambda p: ["verify-cabling", str(p), str(p)],
    "export --layout": lambda p: [
        "export",
        str(SPEC),
        "-t",
        "infiniband",
        "-f",
        "cutsheet",
        "--layout",
        str(p),
    ],
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reading_command_refuses_hostile_files(
    reader: str, tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    bad = {
        "fifo": _fifo(tmp_path),
        "device": Path("/dev/zero"),
        "directory": tmp_path,
        "latin1": tmp_path / "latin1.yaml",
        "binary": tmp_path / "binary.yaml",
        "alias bomb": tmp_path / "bomb.yaml",
        "deep": tmp_path / "deep.yaml",
        "duplicate": tmp_path / "dup.yaml",
        "long number": tmp_path / "long.yaml",
        "missing": tmp_path / "missing.yaml",
    }
    bad["latin1"].write_bytes(b"cluster:\n  gpus: 1024 # caf\xe9\n")
    bad["binary"].write_bytes(bytes(range(256)) * 4)
    bad["alias bomb"].write_text(ALIAS_BOMB)
    bad["deep"].write_text("[" * 10_000 + "]" * 10_000)
    bad["duplicate"].write_text("cluster:\n  gpus: 1024\n  gpus: 2048\n")
    bad["long number"].write_text(f"cluster:\n  gpus: {'9' * 100_000}\n")
    for name, path in bad.items():
        result = run(READERS[reader](path), fuzz_counts)
        refused = {"fifo", "device", "directory", "missing", "alias bomb", "deep"}
        if reader == "sweep resume":  # a results file not there yet is a new sweep
            refused.discard("missing")
        if name in refused:
            assert result.exit_code == 2, (reader, name, result.stdout[-300:])
