"""The same sweep on Ray's local mode, and a join that cannot happen.

Ray's servers bind every interface whatever node address they are given, so the local runtime runs
inside private user, network and PID namespaces (tests/ray_head.py ``--no-head``), where the only
interface is loopback and nothing outlives the run; skipped where those namespaces are not allowed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

import ray_head
from fabricplan.cli.app import create_app
from fabricplan.cli.sweep_cmd import bare_ray_as_local

pytest.importorskip("ray")

BASE = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband", "roce_v2"]}}
GRID = ["--vary", "cluster.gpus=512..2048x2", "--vary", "fabric.oversubscription=1,2"]


@pytest.mark.slow  # 30 s to minutes: a Ray runtime starts, on a 2-core machine
@pytest.mark.skipif(not ray_head.namespaces_work(), reason="no unprivileged user namespaces")
def test_ray_local_mode_writes_what_one_and_two_workers_write(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(yaml.safe_dump(BASE))
    files = {name: tmp_path / f"{name}.parquet" for name in ("one", "two", "ray")}
    for name, workers in (("one", "1"), ("two", "2")):
        args = ["sweep", str(spec), *GRID, "-o", str(files[name]), "--workers", workers]
        result = CliRunner().invoke(create_app(), args)
        assert result.exit_code == 0, result.output
    work = tmp_path / "w"
    command = [sys.executable, "-m", "fabricplan.cli.app", "sweep", str(spec), *GRID]
    command += ["-o", str(files["ray"]), "--ray"]  # bare: a local runtime, started and stopped
    subprocess.run(
        [sys.executable, ray_head.__file__, "--no-head", str(work), "--", *command],
        capture_output=True,
        timeout=900,
        env=dict(os.environ),
    )
    report = json.loads((work / "report.json").read_text())
    assert report["command_rc"] == 0, report["stderr"]
    assert re.search(r"6 run now on a local Ray runtime \(\d+ CPUs\), 0 already", report["stdout"])
    assert report["listening"] and all(map(ray_head.is_loopback, report["listening"]))
    assert report["left_running"] == []  # the runtime it started is shut down
    one = pq.read_table(files["one"])
    assert one.num_rows == 12
    assert one.equals(pq.read_table(files["two"]), check_metadata=True)
    assert one.equals(pq.read_table(files["ray"]), check_metadata=True)


def test_an_address_where_nothing_answers_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(yaml.safe_dump(BASE))
    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
        out = tmp_path / "r.parquet"
        args = ["sweep", str(spec), "--vary", "cluster.gpus=512,1024", "-o", str(out)]
        result = CliRunner().invoke(create_app(), bare_ray_as_local([*args, "--ray", address]))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "FP1013" in lines[0] and "nothing answers at 127.0.0.1:" in lines[0]
    assert not out.exists()  # no file for a sweep that never started
