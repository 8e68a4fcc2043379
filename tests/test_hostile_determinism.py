"""The same spec and seed give byte-identical output: compare (JSON and HTML) and flow / packet
simulate, run twice in one process and in two processes at once (numba cache included); a sweep's
Parquet file and its report (Markdown, HTML), run twice and with 1 or 2 workers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hostile_run import run

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "training-2k" / "spec.yaml"
SMALL = ROOT / "examples" / "enterprise-256" / "spec.yaml"


def _without_wall_time(text: str) -> str:
    """The output with the simulators' own speed (``wall_s``, the packet level's
    ``events_per_s``) blanked: measurements of this machine, not results."""
    return re.sub(r'"(wall_s|events_per_s)": [0-9.e+-]+', r'"\1": 0', text)


RUNS = {
    "compare json": ["compare", str(SPEC), "-f", "json"],
    "compare html": ["compare", str(SPEC), "-f", "html"],
    "simulate flow": [
        "simulate",
        str(SMALL),
        "-p",
        "all_to_all",
        "-s",
        "1M",
        "--seed",
        "7",
        "-f",
        "json",
    ],
    "simulate packet": [
        "simulate",
        str(SMALL),
        "--backend",
        "packet",
        "-p",
        "ring_all_reduce",
        "-s",
        "64K",
        "--seed",
        "7",
        "-f",
        "json",
    ],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_twice_in_one_process_is_byte_identical(name: str) -> None:
    first, second = run(RUNS[name]), run(RUNS[name])
    assert first.exit_code == second.exit_code == 0, first.stderr
    assert _without_wall_time(first.stdout) == _without_wall_time(second.stdout)


@pytest.mark.parametrize(
    ("name", "fresh_cache"),
    [("simulate flow", True), ("simulate packet", False), ("compare json", False)],
)
def test_two_processes_at_once_agree(name: str, fresh_cache: bool, tmp_path: Path) -> None:
    """Two processes started together give the same bytes; with ``fresh_cache`` both compile
    the flow kernels into one empty numba cache at once (the race of two first runs)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    if fresh_cache:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    env["FABRICPLAN_CACHE_DIR"] = str(tmp_path / "results")  # no shared result cache either
    command = [sys.executable, "-m", "fabricplan.cli.app", *RUNS[name]]
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    try:  # the first packet run of a fresh clone compiles its kernels: minutes on a busy CI
        outputs = [p.communicate(timeout=1200) for p in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert [p.returncode for p in procs] == [0, 0], outputs[0][1][-500:]
    assert _without_wall_time(outputs[0][0].decode()) == _without_wall_time(outputs[1][0].decode())
    if fresh_cache:
        assert any((tmp_path / "numba").rglob("*.nbi")), "the kernels were not cached"
        again = subprocess.run(command, env=env, capture_output=True, timeout=600, check=True)
        assert _without_wall_time(again.stdout.decode()) == _without_wall_time(
            outputs[0][0].decode()
        )


SWEEP_SPEC = "cluster: {gpus: 64}\nfabric: {technologies: [infiniband, roce_v2]}\n"
SWEEPS = {
    "analytic": ["--vary", "cluster.gpus=64..256x2", "--vary", "fabric.oversubscription=1,2"],
    "flow": ["--backend", "flow", "--seeds", "2", "--size", "16M", "--vary", "cluster.gpus=32,64"],
}


def _sweep_bytes(folder: Path, backend: str, workers: int, name: str) -> tuple[bytes, str, str]:
    """The results file a sweep writes, and its report as Markdown and HTML."""
    spec = folder / "spec.yaml"
    spec.write_text(SWEEP_SPEC)
    out = folder / f"{name}.parquet"
    args = ["sweep", str(spec), *SWEEPS[backend], "-o", str(out), "--workers", str(workers)]
    assert run(args).exit_code == 0
    md, html = folder / f"{name}.md", folder / f"{name}.html"
    assert run(["sweep-report", str(out), "-o", str(md)]).exit_code == 0
    assert run(["sweep-report", str(out), "-o", str(html)]).exit_code == 0
    return out.read_bytes(), md.read_text(), html.read_text()


@pytest.mark.parametrize("backend", sorted(SWEEPS))
def test_a_sweep_is_byte_identical_across_runs_and_worker_counts(
    backend: str, tmp_path: Path
) -> None:
    first = _sweep_bytes(tmp_path, backend, 1, "one")
    again = _sweep_bytes(tmp_path, backend, 1, "again")
    pooled = _sweep_bytes(tmp_path, backend, 2, "two")
    assert first[0] == again[0] == pooled[0]  # the Parquet file, metadata included
    assert first[1] == again[1] == pooled[1]  # the report's tables
    assert first[2] == again[2] == pooled[2]  # the report's HTML with its figures
