"""How fast `fabricplan sweep` runs: points per second of a 1,000-point analytic sweep with one
worker, every core and Ray local mode; the overhead per point; a flow sweep's scaling with
workers. Prints tables; docs/performance.md records them.

    PYTHONPATH=src .venv/bin/python benchmarks/sweep_speed.py [--skip-ray] [--skip-flow] [--small]
        [--ray-address ADDRESS]

``--ray-address`` adds a row for the same sweep on a running Ray cluster joined by its address
(``sweep --ray ADDRESS``). To measure that on one machine with nothing listening beyond loopback,
run the script under ``tests/ray_head.py``, which starts a head in private namespaces::

    FABRICPLAN_RAY_HEAD_TIMEOUT_S=5400 PYTHONPATH=src .venv/bin/python tests/ray_head.py \
        --cpus 2 bench-ray -- .venv/bin/python -u benchmarks/sweep_speed.py --skip-flow \
        --ray-address {address}

(the table is then in ``bench-ray/command.out``).

``--small`` sweeps the first two keys of the analytic grid only (40 points), for a machine too
busy for 1,000.

The overhead per point is the sweep's wall time times its workers, divided by the points, minus
the time :func:`~fabricplan.sweep.point.evaluate_point` alone takes per point (measured on the
same tasks in one loop): what validation, seeding, shipping tasks to workers and writing the
Parquet file add. The in-process run also prints its CPU seconds (``getrusage``) and *cores busy*
= CPU / wall (the pool's workers are children of the forkserver and Ray's of the raylet, not of
this process, so their CPU cannot be read here: ``-``), and every run the load average when it
started: on a shared machine a pool of 2 gets 2 cores only when the others leave them free.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fabricplan.sweep.grid import point_tasks, sweep_definition
from fabricplan.sweep.point import evaluate_point
from fabricplan.sweep.runner import InProcessExecutor, ProcessPoolExecutor, run_sweep

BASE: dict[str, Any] = {
    "name": "bench-sweep",
    "cluster": {"gpus": 1024, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {"technologies": ["infiniband", "roce_v2"], "topology": "rail_optimized"},
}
ANALYTIC_GRID = [  # 8 x 5 x 5 x 5 = 1,000 points
    "cluster.gpus=512..65536x2",
    "fabric.oversubscription=1..5",
    "cost.years=3..7",
    "cost.energy_usd_per_kwh=0.08..0.16+0.02",
]
FLOW_GRID = ["cluster.gpus=128..1024x2", "fabric.oversubscription=1,2"]  # 8 points
FLOW_SEEDS = 2


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run(definition: Any, executor: Any) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (this process and its children) and the 1-minute load average
    at the start."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        cpu, start = _cpu_s(), time.perf_counter()
        summary = run_sweep(definition, Path(tmp) / "r.parquet", executor)
        wall, cpu = time.perf_counter() - start, _cpu_s() - cpu
    assert summary.failed == 0, summary
    return wall, cpu, load


def _evaluate_only(definition: Any) -> float:
    tasks, _ = point_tasks(definition)
    start = time.perf_counter()
    for task in tasks:
        evaluate_point(task)
    return (time.perf_counter() - start) / len(tasks)


def main() -> None:
    cores = os.cpu_count() or 1
    print(
        f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()};"
        f" load average {os.getloadavg()[0]:.1f} at the start"
    )
    grid = ANALYTIC_GRID[:2] if "--small" in sys.argv else ANALYTIC_GRID
    definition = sweep_definition(BASE, grid)
    points = 1
    for dimension in definition.dimensions:
        points *= len(dimension.points)
    start = time.perf_counter()
    point_tasks(definition)
    validate_s = (time.perf_counter() - start) / points
    evaluate_s = _evaluate_only(definition)
    print(f"\n{points:,}-point analytic sweep (2 technologies per point)")
    print(
        f"validation {validate_s * 1e3:.2f} ms/point,"
        f" evaluate_point alone {evaluate_s * 1e3:.2f} ms/point"
    )
    print(
        f"{'executor':<22} {'workers':>7} {'wall (s)':>9} {'points/s':>9}"
        f" {'overhead (ms/point)':>20} {'CPU (s)':>8} {'cores busy':>10} {'load':>5}"
    )
    runs: list[tuple[str, int, Any]] = [
        ("in process", 1, InProcessExecutor()),
        ("process pool", cores, ProcessPoolExecutor(cores)),
    ]
    if "--skip-ray" not in sys.argv or "--ray-address" in sys.argv:
        from fabricplan.sweep.ray_runner import RayExecutor

        if "--skip-ray" not in sys.argv:
            runs.append(("Ray local", cores, RayExecutor(cpus=cores)))
        if "--ray-address" in sys.argv:
            address = sys.argv[sys.argv.index("--ray-address") + 1]
            runs.append(("Ray joined", 0, RayExecutor(address=address)))
    for name, workers, executor in runs:
        wall, cpu, load = _run(definition, executor)
        workers = workers or executor.workers  # a joined cluster's CPUs, known once joined
        overhead_ms = (wall * workers / points - evaluate_s) * 1e3
        busy = f"{cpu:>8.1f} {cpu / wall:>10.2f}" if workers == 1 else f"{'-':>8} {'-':>10}"
        print(
            f"{name:<22} {workers:>7} {wall:>9.2f} {points / wall:>9.1f} {overhead_ms:>20.2f}"
            f" {busy} {load:>5.1f}"
        )
    if "--skip-flow" in sys.argv:
        return
    flow = sweep_definition(BASE, FLOW_GRID, backend="flow", seeds=FLOW_SEEDS)
    print(
        f"\nflow sweep: {' x '.join(FLOW_GRID)}, {FLOW_SEEDS} seeds"
        " (8 points, 16 runs per technology)"
    )
    _run(
        flow.model_copy(update={"dimensions": flow.dimensions[:1]}), InProcessExecutor()
    )  # compile
    print(
        f"{'workers':>7} {'wall (s)':>9} {'points/s':>9} {'speed-up':>9} {'CPU (s)':>8}"
        f" {'cores busy':>10} {'load':>5}"
    )
    base_wall = 0.0
    for workers in sorted({1, 2, cores}):
        executor = InProcessExecutor() if workers == 1 else ProcessPoolExecutor(workers)
        wall, cpu, load = _run(flow, executor)
        base_wall = base_wall or wall
        busy = f"{cpu:>8.1f} {cpu / wall:>10.2f}" if workers == 1 else f"{'-':>8} {'-':>10}"
        speed = f"{8 / wall:>9.2f} {base_wall / wall:>9.2f}"
        print(f"{workers:>7} {wall:>9.2f} {speed} {busy} {load:>5.1f}")


if __name__ == "__main__":
    main()
