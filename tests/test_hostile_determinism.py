"""The same spec and seed give byte-identical output: compare (JSON and HTML) and flow / packet
simulate, run twice in one process and in two processes at once (numba cache included)."""

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


def test_two_processes_at_once_agree() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "fabricplan.cli.app", *RUNS["simulate flow"]]
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs[0][1][-500:]
    assert _without_wall_time(outputs[0][0].decode()) == _without_wall_time(outputs[1][0].decode())
