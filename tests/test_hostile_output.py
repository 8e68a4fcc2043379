"""The output layer: a path a command writes is checked before any work, writes are whole or
absent, and the format fits the file name."""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from fabricplan.cli.guard import write_atomic, write_atomic_set
from fabricplan.errors import OutputFileError
from hostile_run import leftovers, run

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "training-2k" / "spec.yaml"


def _bad_paths(tmp_path: Path, suffix: str) -> dict[str, str]:
    regular = tmp_path / "regular.txt"
    regular.write_text("x")
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir(exist_ok=True)
    return {
        "directory": str(folder),
        "under a regular file": str(regular / f"out{suffix}"),
        "proc": f"/proc/out{suffix}",
        "empty": "",
        "long name": str(tmp_path / ("a" * 300 + suffix)),
        "device": "/dev/null",
    }


SUFFIX = {"design -o": ".json", "compare -o": ".md", "init": ".yaml", "calibrate -o": ".yaml"}
SUFFIX |= {"check-bench --plot": ".svg", "roce-config --out": ""}
SUFFIX |= {"export -o": ".csv", "sweep -o": ".parquet", "cost -o": ".json"}

WRITERS = {
    "design -o": lambda out: ["design", str(SPEC), "-f", "json", "-o", out],
    "compare -o": lambda out: ["compare", str(SPEC), "-f", "md", "-o", out],
    "init": lambda out: ["init", out, "--force"],
    "calibrate -o": lambda out: [
        "calibrate",
        str(ROOT / "tests" / "data" / "measure" / "nccl_2025_allreduce_cut.log"),
        "--spec",
        str(SPEC),
        "-o",
        out,
    ],
    "check-bench --plot": lambda out: [
        "check-bench",
        str(ROOT / "tests" / "data" / "measure" / "nccl_2025_allreduce_cut.log"),
        "--plot",
        out,
    ],
    "roce-config --out": lambda out: ["roce-config", str(SPEC), "--vendor", "sonic", "-o", out],
    "export -o": lambda out: ["export", str(SPEC), "-t", "infiniband", "-f", "cutsheet", "-o", out],
    "sweep -o": lambda out: ["sweep", str(SPEC), "--vary", "cluster.gpus=64", "-o", out],
    "cost -o": lambda out: ["cost", str(SPEC), "-f", "json", "-o", out],
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_bad_output_paths_fail_in_one_line_and_write_nothing(
    writer: str, tmp_path: Path, fuzz_counts: Counter[str]
) -> None:
    for name, out in _bad_paths(tmp_path, SUFFIX[writer]).items():
        if writer in {"roce-config --out", "export -o"} and name == "directory":
            continue  # a folder is what roce-config (and export, into it) writes into
        before = set(tmp_path.rglob("*"))
        result = run(WRITERS[writer](out), fuzz_counts)
        assert result.exit_code == 2, (writer, name, result.stdout[-300:])
        assert "FP13" in result.stderr or "FP465" in result.stderr, (writer, name)
        assert not leftovers(tmp_path, before), (writer, name)


def test_the_format_must_fit_the_name(tmp_path: Path) -> None:
    result = run(["design", str(SPEC), "-f", "html", "-o", str(tmp_path / "out.json")])
    assert result.exit_code == 2
    assert "the name says json but the format is html" in result.stderr
    assert not list(tmp_path.iterdir())
    assert run(["design", str(SPEC), "-f", "html", "-o", str(tmp_path / "out.html")]).exit_code == 0


def test_write_atomic_leaves_nothing_when_interrupted(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")

    def interrupt(*_: object) -> None:
        # A Ctrl-C at a random moment: SIGINT, which write_atomic may hold for a moment.
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGALRM, interrupt)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        with pytest.raises(KeyboardInterrupt):
            while True:
                write_atomic(target, b"x" * 2**20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    assert target.read_bytes() in {b"old", b"x" * 2**20}


def test_a_file_set_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    out = tmp_path / "cfg"
    with pytest.raises(OutputFileError, match="FP1303"):
        write_atomic_set(out, {"a.json": "{}", "sub/b.json": "{}"})  # no folder "sub"
    assert not list(tmp_path.iterdir())
    write_atomic_set(out, {"a.json": "{}", "b.json": "[]"})
    assert sorted(os.listdir(out)) == ["a.json", "b.json"]
    write_atomic_set(out, {"a.json": "1"})
    assert (out / "a.json").read_text() == "1" and (out / "b.json").read_text() == "[]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg"]


def test_a_file_set_interrupted_at_any_moment_is_the_old_set_or_the_new(tmp_path: Path) -> None:
    """Ctrl-C at random moments of writing a set of files (roce-config's, export's): the folder
    holds the old files or the new ones, never a mix, and no temporary file or folder."""
    out = tmp_path / "cfg"
    old = {"a.json": "old-a", "b.json": "old-b"}
    write_atomic_set(out, old)
    new = {"a.json": "new-a" * 50_000, "b.json": "new-b" * 50_000}

    def interrupt(*_: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGALRM, interrupt)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupted = 0
    try:
        for delay_s in (0.0005, 0.001, 0.002, 0.004, 0.008):
            signal.setitimer(signal.ITIMER_REAL, delay_s)
            try:
                while True:
                    write_atomic_set(out, new)
                    write_atomic_set(out, old)
            except KeyboardInterrupt:
                interrupted += 1
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            files = {p.name: p.read_text() for p in out.iterdir()}
            assert files in (old, new), sorted(files)
            assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg"]
    finally:
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)
    assert interrupted == 5
