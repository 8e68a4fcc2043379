"""Sweeps: the grid, its seeds, the rows, the results file, resuming and failing points."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from fabricplan.errors import OutputFileError, SpecError, SweepError
from fabricplan.evaluate import evaluate_feasible
from fabricplan.model.results import PerfRequest
from fabricplan.recommend.decision import recommend
from fabricplan.spec import parse_spec
from fabricplan.sweep.grid import (
    PointTask,
    check_spec_path,
    point_seed,
    point_tasks,
    seed_entropy,
    sweep_definition,
    sweep_points,
    with_setting,
)
from fabricplan.sweep.point import PointResult, evaluate_point
from fabricplan.sweep.runner import InProcessExecutor, ProcessPoolExecutor, run_sweep
from fabricplan.sweep.store import METADATA_KEY, read_metadata

BASE: dict[str, Any] = {
    "cluster": {"gpus": 1024},
    "fabric": {"technologies": ["infiniband", "roce_v2"]},
}
GRID = ["cluster.gpus=512..2048x2", "fabric.oversubscription=1,2"]


def _table(path: Path) -> list[dict[str, Any]]:
    return pq.read_table(path).to_pylist()  # type: ignore[no-any-return]


def test_the_grid_is_the_product_in_order() -> None:
    points = sweep_points(sweep_definition(BASE, GRID))
    assert [p.settings for p in points][:3] == [
        {"cluster.gpus": 512, "fabric.oversubscription": 1},
        {"cluster.gpus": 512, "fabric.oversubscription": 2},
        {"cluster.gpus": 1024, "fabric.oversubscription": 1},
    ]
    assert len(points) == 3 * 2
    assert points[5].data == {
        "cluster": {"gpus": 2048},
        "fabric": {"technologies": ["infiniband", "roce_v2"], "oversubscription": 2},
    }


def test_paths_resolve_against_the_spec_structure() -> None:
    for path in (
        "cluster.gpus",
        "fabric.switch.roce_v2",
        "fabric.switch.roce_v2.ports",
        "priorities",
        "decision.worth_usd.roce_v2",
        "growth.target_gpus",
        "fabric.lossless.pfc",
        "cost.prices.qm9700",
        "workload.tp",
    ):
        check_spec_path(path, "--vary")
    for path, fix in (
        ("cluster.gpu_count", "did you mean gpu"),
        ("fabric.switch.ethernet", "use one of infiniband, roce_v2, roce_v1"),
        ("cluster.gpus.max", "cluster.gpus holds a single value"),
    ):
        with pytest.raises(SweepError, match=fix) as info:
            check_spec_path(path, "--vary")
        assert info.value.code == "FP1002"


def test_a_key_the_spec_gains_works_without_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    # The resolver walks ScenarioSpec's own fields: give the model a new section and it is a path.
    from pydantic import create_model

    from fabricplan.model import scenario
    from fabricplan.model.base import Frozen

    lossless = create_model("LosslessSpec", __base__=Frozen, pfc=(bool, True))
    grown = create_model(
        "GrownFabric", __base__=scenario.FabricSpec, lossless=(lossless, lossless())
    )
    spec = create_model("GrownSpec", __base__=scenario.ScenarioSpec, fabric=(grown, grown()))
    monkeypatch.setattr("fabricplan.sweep.grid.ScenarioSpec", spec)
    check_spec_path("fabric.lossless.pfc", "--vary")
    with pytest.raises(SweepError, match="did you mean pfc"):
        check_spec_path("fabric.lossless.pcf", "--vary")


def test_with_setting_replaces_a_preset_by_a_mapping() -> None:
    data = {"priorities": "balanced", "cluster": {"gpus": 8}}
    assert with_setting(data, "priorities.tco", 2) == {
        "priorities": {"tco": 2},
        "cluster": {"gpus": 8},
    }
    assert data["priorities"] == "balanced"  # the base is not touched


def test_every_point_is_validated_before_any_work_naming_point_and_field() -> None:
    definition = sweep_definition(BASE, ["cluster.gpus=1024,1020"])
    with pytest.raises(SpecError) as info:
        point_tasks(definition)
    message = str(info.value)
    assert message.startswith("sweep point 1 (cluster.gpus=1020): cluster.gpus:")
    assert info.value.code == "FP101"
    wrong_type = sweep_definition(BASE, ["fabric.oversubscription=1,lots"])
    with pytest.raises(
        SpecError, match=r"sweep point 1 \(fabric.oversubscription=lots\): fabric.oversubscription"
    ):
        point_tasks(wrong_type)


def test_seeds_come_from_seed_sequence_per_point_and_index() -> None:
    spec = parse_spec(BASE).spec
    other = parse_spec({**BASE, "cluster": {"gpus": 2048}}).spec
    seeds = [point_seed(spec, 7, i) for i in range(5)]
    # spawn(n)[i] is SeedSequence(entropy, spawn_key=(i,)): the same seed whatever n is.
    assert len(set(seeds)) == 5
    assert seeds[:3] == [point_seed(spec, 7, i) for i in range(3)]
    assert point_seed(other, 7, 0) != seeds[0]
    assert point_seed(spec, 8, 0) != seeds[0]
    # Against numpy directly: the entropy is the point's hash, the child the seed index.
    tasks, _ = point_tasks(sweep_definition(BASE, ["cost.years=5"], seeds=3, base_seed=7))
    children = np.random.SeedSequence(seed_entropy(tasks[0].valid.spec, 7)).spawn(3)
    assert list(tasks[0].sim_seeds) == [
        int(c.generate_state(1, dtype=np.uint32)[0]) for c in children
    ]


def test_a_row_matches_compare_on_the_same_spec() -> None:
    tasks, _ = point_tasks(sweep_definition(BASE, ["cluster.gpus=2048"]))
    result = evaluate_point(tasks[0])
    valid = parse_spec({**BASE, "cluster": {"gpus": 2048}})
    request = PerfRequest(collectives=("all_reduce", "all_to_all"), sizes_bytes=(2**30,), p2p=False)
    evals, infeasible = evaluate_feasible(valid, "analytic", request)
    winner = recommend(valid, evals, "analytic", request, infeasible).technology
    assert [r["technology"] for r in result.rows] == ["infiniband", "roce_v2"]
    for row, evaluation in zip(result.rows, evals, strict=True):
        assert row["capex_usd"] == evaluation.cost.capex_usd
        assert row["tco_usd"] == evaluation.cost.tco_usd
        assert row["step_s"] == evaluation.performance.step.step_s  # type: ignore[union-attr]
        assert row["tiers"] == evaluation.design.tiers
        assert row["switches_total"] == sum(evaluation.design.switches.values())
        assert row["recommended"] is (row["technology"] == winner)
        assert row["error"] == ""
        all_reduce = next(
            p for p in evaluation.performance.collectives if p.collective == "all_reduce"
        )
        assert row["all_reduce_busbw_GBps"] == all_reduce.busbw_GBps
    assert sum(r["recommended"] for r in result.rows) == 1


def _sweep(tmp_path: Path, name: str, executor: Any, **kwargs: Any) -> Path:
    path = tmp_path / name
    run_sweep(sweep_definition(BASE, GRID, **kwargs), path, executor)
    return path


def test_one_worker_and_two_workers_write_the_same_file(tmp_path: Path) -> None:
    one = _sweep(tmp_path, "one.parquet", InProcessExecutor())
    two = _sweep(tmp_path, "two.parquet", ProcessPoolExecutor(2))
    assert pq.read_table(one).equals(pq.read_table(two), check_metadata=True)
    rows = _table(one)
    assert len(rows) == 6 * 2
    assert [(r["point"], r["technology"]) for r in rows[:3]] == [
        (0, "infiniband"),
        (0, "roce_v2"),
        (1, "infiniband"),
    ]
    assert list(rows[0])[:4] == ["point", "point_key", "cluster.gpus", "fabric.oversubscription"]


def test_the_file_carries_spec_sweep_and_version(tmp_path: Path) -> None:
    import fabricplan

    path = _sweep(tmp_path, "r.parquet", InProcessExecutor())
    meta = read_metadata(path)
    assert meta["version"] == fabricplan.__version__
    assert meta["keys"] == ["cluster.gpus", "fabric.oversubscription"]
    assert meta["definition"]["spec"] == BASE
    assert [d["source"] for d in meta["definition"]["dimensions"]] == GRID
    assert METADATA_KEY in pq.read_schema(path).metadata


class StopAfter:
    """A progress sink that interrupts the sweep like Ctrl-C after some points."""

    def __init__(self, points: int) -> None:
        self.left = points

    def start(self, points: int, done: int) -> None:
        pass

    def advance(self, failed: bool) -> None:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_after_an_interruption_gives_the_uninterrupted_rows(
    tmp_path: Path, workers: int
) -> None:
    whole = _sweep(tmp_path, "whole.parquet", InProcessExecutor())
    definition = sweep_definition(BASE, GRID)
    path = tmp_path / "resumed.parquet"
    executor = InProcessExecutor() if workers == 1 else ProcessPoolExecutor(workers)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(definition, path, executor, StopAfter(2), write_every_points=1000)
    kept = _table(path)
    assert len({r["point"] for r in kept}) == 2  # what finished was written, nothing else
    summary = run_sweep(definition, path, InProcessExecutor())
    assert (summary.skipped, summary.ran) == (2, 4)
    assert pq.read_table(path).equals(pq.read_table(whole), check_metadata=True)
    again = run_sweep(definition, path, InProcessExecutor())
    assert (again.skipped, again.ran) == (6, 0)


def test_more_seeds_later_run_only_the_new_ones(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    run_sweep(
        sweep_definition(BASE, ["cost.years=3,5"], backend="fake", seeds=2),
        path,
        InProcessExecutor(),
    )
    summary = run_sweep(
        sweep_definition(BASE, ["cost.years=3,5"], backend="fake", seeds=3),
        path,
        InProcessExecutor(),
    )
    assert summary.ran == 2 and summary.rows == 2 * 3 * 2
    fresh = tmp_path / "fresh.parquet"
    run_sweep(
        sweep_definition(BASE, ["cost.years=3,5"], backend="fake", seeds=3),
        fresh,
        InProcessExecutor(),
    )
    assert pq.read_table(path).equals(pq.read_table(fresh))


def test_another_sweep_in_the_same_file_is_refused(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "r.parquet", InProcessExecutor())
    with pytest.raises(SweepError) as info:
        run_sweep(sweep_definition(BASE, ["cluster.gpus=512,1024"]), path, InProcessExecutor())
    assert info.value.code == "FP1009"
    summary = run_sweep(
        sweep_definition(BASE, ["cluster.gpus=512,1024"]), path, InProcessExecutor(), fresh=True
    )
    assert summary.rows == 4


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    base = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband"], "planes": 1}}
    path = tmp_path / "r.parquet"
    # 131,072 GPUs exceed one plane of a three-tier fat tree of 64-port switches (k^3/4 = 65,536
    # ports): with the plane count pinned, the designer refuses.
    summary = run_sweep(
        sweep_definition(base, ["cluster.gpus=1024,131072,2048"]), path, InProcessExecutor()
    )
    assert (summary.ran, summary.failed) == (3, 1)
    rows = _table(path)
    assert [r["cluster.gpus"] for r in rows] == [1024, 131072, 2048]
    assert "FP302" in rows[1]["error"] and rows[1]["capex_usd"] is None
    assert rows[1]["recommended"] is False
    assert rows[0]["error"] == rows[2]["error"] == ""
    assert rows[2]["capex_usd"] > rows[0]["capex_usd"] > 0


def test_an_infeasible_technology_keeps_its_row_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    run_sweep(
        sweep_definition(BASE, ["cluster.gpus=65536", "fabric.tiers=2"]), path, InProcessExecutor()
    )
    rows = {r["technology"]: r for r in _table(path)}
    # No switch, topology or plane count fits 65,536 NDR ports in two tiers of 64-port switches.
    assert "FP301" in rows["infiniband"]["error"] and rows["infiniband"]["step_s"] is None
    assert rows["roce_v2"]["error"] == "" and rows["roce_v2"]["recommended"] is True


def _crash_on_point_one(task: PointTask) -> PointResult:
    if task.index == 1:
        os._exit(3)  # a worker killed under a point (out of memory, a crash in compiled code)
    return evaluate_point(task)


def test_a_killed_worker_loses_no_finished_point(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    # 20 points: the pool sends them two per call, so the crash takes a whole call with it.
    definition = sweep_definition(BASE, ["cost.years=1..20"], backend="fake")
    summary = run_sweep(definition, path, ProcessPoolExecutor(1, work=_crash_on_point_one))
    rows = _table(path)
    assert summary.failed == 1 and len(rows) == 20 * 2
    assert {r["point"] for r in rows if r["error"]} == {1}
    assert "worker process died" in rows[2]["error"]
    assert all(r["capex_usd"] > 0 for r in rows if r["point"] != 1)
    clean = tmp_path / "clean.parquet"
    run_sweep(definition, clean, InProcessExecutor())
    assert [r for r in rows if r["point"] != 1] == [r for r in _table(clean) if r["point"] != 1]


def test_mixed_values_keep_a_readable_column(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    run_sweep(
        sweep_definition(BASE, ["fabric.tiers=auto,3"], backend="fake"), path, InProcessExecutor()
    )
    assert [r["fabric.tiers"] for r in _table(path)][::2] == ["auto", "3"]
    resumed = run_sweep(
        sweep_definition(BASE, ["fabric.tiers=auto,3"], backend="fake"), path, InProcessExecutor()
    )
    assert resumed.ran == 0


def test_the_file_is_never_left_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _sweep(tmp_path, "r.parquet", InProcessExecutor())
    before = path.read_bytes()

    real_fdopen = os.fdopen

    class DiskFills:
        """A file whose disk fills half way through the write."""

        def __init__(self, fd: int, *args: Any, **kwargs: Any) -> None:
            self.handle = real_fdopen(fd, *args, **kwargs)

        def write(self, data: bytes) -> int:
            self.handle.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self) -> None:
            self.handle.close()

        def __enter__(self) -> DiskFills:
            return self

        def __exit__(self, *exc: object) -> None:
            self.close()

    # the results file is written through the one output layer: its temporary file fills the disk
    monkeypatch.setattr("fabricplan.output_file.os.fdopen", DiskFills)
    with pytest.raises(OutputFileError, match="no space left on the device") as caught:
        run_sweep(sweep_definition(BASE, GRID), path, InProcessExecutor(), fresh=True)
    assert caught.value.code == "FP1303"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]


def test_a_points_file_in_a_grid(tmp_path: Path) -> None:
    points = tmp_path / "points.yaml"
    points.write_text(
        "- {cluster.gpus: 2048, fabric.switch.roce_v2: sn5600}\n- {cluster.gpus: 4096}\n"
    )
    definition = sweep_definition(BASE, [str(points), "cost.years=3,5"], backend="fake")
    path = tmp_path / "r.parquet"
    summary = run_sweep(definition, path, InProcessExecutor())
    assert (summary.points, summary.failed) == (4, 0)
    rows = _table(path)
    assert [r["cluster.gpus"] for r in rows[::2]] == [2048, 2048, 4096, 4096]
    assert [r["fabric.switch.roce_v2"] for r in rows[::2]] == ["sn5600", "sn5600", None, None]
    assert [r["cost.years"] for r in rows[::2]] == [3, 5, 3, 5]
    assert run_sweep(definition, path, InProcessExecutor()).ran == 0


def test_a_grid_too_large_is_refused_before_any_validation() -> None:
    with pytest.raises(SweepError) as info:
        sweep_definition(BASE, ["cost.years=1..400", "workload.tp=1..400"])  # 160,000 points
    assert info.value.code == "FP1005" and "160000" in str(info.value)
    with pytest.raises(SweepError) as twice:
        sweep_definition(BASE, ["cost.years=3,5", "cost.years=7"])
    assert twice.value.code == "FP1008"


def test_the_sweep_api_is_pinned() -> None:
    # What the CLI and the web app call: renaming one of these is a breaking change.
    from fabricplan.report import sweep as report
    from fabricplan.sweep import grid, ray_runner, runner, vary

    assert callable(vary.parse_vary) and callable(grid.sweep_definition)
    assert callable(runner.run_sweep) and callable(grid.point_tasks)
    assert {"InProcessExecutor", "ProcessPoolExecutor"} <= set(dir(runner))
    assert callable(ray_runner.RayExecutor)
    for name in ("load_sweep", "sweep_html", "sweep_markdown", "sweep_tables", "figure_files"):
        assert callable(getattr(report, name))


def test_a_signal_inside_the_pool_loop_waits_for_the_loop_to_check_it() -> None:
    """Ctrl-C and SIGTERM while the pool's loop runs are recorded and raised where the loop
    checks, never inside a lock of concurrent.futures; the handlers before it come back."""
    import signal

    from fabricplan.sweep.runner import _DeferredInterrupts

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with _DeferredInterrupts() as stop:
        signal.raise_signal(signal.SIGTERM)  # would end the test process if not deferred
        signal.raise_signal(signal.SIGINT)  # would raise KeyboardInterrupt here
        assert stop.received
        with pytest.raises(KeyboardInterrupt):
            stop.check()
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
