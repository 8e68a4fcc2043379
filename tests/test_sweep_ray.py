"""The same sweep on Ray (a small local runtime: 2 CPUs, no dashboard, loopback only)."""

from __future__ import annotations

import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from fabricplan.cli.app import create_app
from fabricplan.cli.sweep_cmd import bare_ray_as_local
from fabricplan.sweep.grid import sweep_definition
from fabricplan.sweep.runner import InProcessExecutor, ProcessPoolExecutor, run_sweep

ray = pytest.importorskip("ray")

BASE = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband", "roce_v2"]}}
GRID = ["cluster.gpus=512..2048x2", "fabric.oversubscription=1,2"]


def test_ray_local_mode_writes_what_one_and_two_workers_write(tmp_path: Path) -> None:
    from fabricplan.sweep.ray_runner import RayExecutor

    definition = sweep_definition(BASE, GRID)
    files = {}
    for name, executor in (
        ("one", InProcessExecutor()),
        ("two", ProcessPoolExecutor(2)),
        ("ray", RayExecutor(cpus=2)),
    ):
        files[name] = tmp_path / f"{name}.parquet"
        summary = run_sweep(definition, files[name], executor)
        assert (summary.ran, summary.failed, summary.rows) == (6, 0, 12)
    one = pq.read_table(files["one"])
    assert one.equals(pq.read_table(files["two"]), check_metadata=True)
    assert one.equals(pq.read_table(files["ray"]), check_metadata=True)
    assert not ray.is_initialized()  # the runtime it started is shut down


def test_an_address_where_nothing_answers_is_one_line_and_exit_2(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(yaml.safe_dump(BASE))
    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
        out = tmp_path / "r.parquet"
        args = bare_ray_as_local(
            [
                "sweep",
                str(spec),
                "--vary",
                "cluster.gpus=512,1024",
                "-o",
                str(out),
                "--ray",
                address,
            ]
        )
        result = CliRunner().invoke(create_app(), args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "FP1013" in lines[0] and "nothing answers at 127.0.0.1:" in lines[0]
    assert not out.exists()  # no file for a sweep that never started
