"""Ctrl-C and SIGTERM in a real process, inside the compiled flow solver: one line, exit 130 /
143, no traceback, no file (nor temporary file) left in the output folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_inside_the_flow_solver_ends_in_one_line(
    signum: int, code: int, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 16384}\n")
    out = tmp_path / "out" / "report.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = ["compare", str(spec), "--backend", "flow", "-f", "json", "-o", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabricplan.cli.app", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4.0)  # past start-up, inside the evaluation (which takes tens of seconds)
    if proc.poll() is not None:
        pytest.skip("the run ended before the signal was sent")
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines() == [
        f"interrupted ({signal.Signals(signum).name}); no partial file was left"
    ]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["spec.yaml"]
