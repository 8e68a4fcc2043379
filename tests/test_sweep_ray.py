"""The same sweep on Ray (a small local runtime: 2 CPUs, no dashboard, loopback only)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

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
