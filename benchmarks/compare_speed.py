"""How long `compare` takes (parse, design, cost, analytic performance, operations and the decision
with its re-evaluations) as the cluster grows. Prints a table; docs/performance.md records it.

    PYTHONPATH=src .venv/bin/python benchmarks/compare_speed.py

Like the CLI, the evaluation and the decision share one ``SearchCache``: ``reused`` counts the
designs, step-model runs and whole searches the re-evaluations took from it, ``made`` those they
had to make.
Wall and process CPU seconds are both printed: on a shared machine the CPU time is the steadier.
Each timed run starts with the layout and cable memos emptied (``forget_layout_runs``,
``forget_cable_choosers``), so that it measures
one cold ``compare``, as the command runs it, not a repeat of the warm-up.

A second table times the whole command, ``fabricplan compare SPEC`` in a fresh process (table
output, and ``--format json``), against a process that only imports what compare imports: the
difference is the compare with its rendering, the import line is start-up.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fabricplan.evaluate import evaluate_feasible
from fabricplan.recommend.decision import recommend
from fabricplan.search_cache import SearchCache
from fabricplan.spec import parse_spec
from fabricplan.topology.cable import forget_cable_choosers
from fabricplan.topology.layout import forget_layout_runs

GPU_COUNTS = (1_024, 8_192, 32_768, 100_000)
REPEATS = 5
PROCESS_REPEATS = 5
IMPORTS = (
    "import fabricplan.cli.app, fabricplan.cli.plan_cmd, fabricplan.evaluate,"
    " fabricplan.recommend.decision, fabricplan.report.table"
)


def spec_for(gpus: int) -> dict[str, Any]:
    """A 400G, 8-rail H100 cluster with every design choice left to the search (switch model,
    topology, tiers, planes): the search finds the two planes that keep 64-port NDR switches
    within 3 tiers at 100k GPUs."""
    return {
        "name": f"bench-{gpus}",
        "cluster": {"gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
        "fabric": {"technologies": ["infiniband", "roce_v2"]},
    }


def time_once(gpus: int) -> tuple[float, float, float, int, SearchCache]:
    """Wall seconds of (evaluate only, the whole compare with the decision), process CPU seconds
    of the whole compare, the designs the search kept in the output over both technologies, and
    the cache."""
    forget_layout_runs()
    forget_cable_choosers()
    start, cpu_start = time.perf_counter(), time.process_time()
    valid = parse_spec(spec_for(gpus))
    cache = SearchCache()
    evals, infeasible = evaluate_feasible(valid, cache=cache)
    middle = time.perf_counter()
    recommend(valid, evals, infeasible=infeasible, cache=cache)
    end, cpu_end = time.perf_counter(), time.process_time()
    designs = sum(len(e.design.alternatives) + 1 for e in evals)
    return middle - start, end - start, cpu_end - cpu_start, designs, cache


def cpu_model() -> str:
    """The processor's model name as the kernel reports it (``lscpu``'s "Model name")."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def main() -> None:
    time_once(GPU_COUNTS[0])  # warm the imports and the catalog once
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()} {cpu_model()}, {os.cpu_count()} CPUs, Python"
        f" {platform.python_version()}; load average {load:.1f} at the start"
    )
    print(
        f"{'GPUs':>8} {'designs':>8} {'evaluate (s)':>13} {'compare (s)':>12} {'CPU (s)':>8}"
        f" {'reused':>7} {'made':>5}   median of {REPEATS}"
    )
    for gpus in GPU_COUNTS:
        runs = [time_once(gpus) for _ in range(REPEATS)]
        evaluate_s = statistics.median(r[0] for r in runs)
        compare_s = statistics.median(r[1] for r in runs)
        cpu_s = statistics.median(r[2] for r in runs)
        cache = runs[0][4]
        reused = cache.design_hits + cache.performance_hits + cache.search_hits
        made = cache.design_misses + cache.performance_misses + cache.search_misses
        print(
            f"{gpus:>8,} {runs[0][3]:>8} {evaluate_s:>13.3f} {compare_s:>12.3f} {cpu_s:>8.3f}"
            f" {reused:>7} {made:>5}"
        )


def child_cpu_s(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def whole_process() -> None:
    print()
    print(
        f"{'GPUs':>8} {'command':<32} {'wall (s)':>9} {'CPU (s)':>8}"
        f"   median of {PROCESS_REPEATS}, fresh process each"
    )
    with tempfile.TemporaryDirectory() as tmp:
        gpus = GPU_COUNTS[-1]
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(spec_for(gpus)))
        commands = {
            "imports only": [sys.executable, "-c", IMPORTS],
            "fabricplan compare (table)": [
                sys.executable, "-m", "fabricplan.cli.app", "compare", str(spec),
            ],
            "fabricplan compare -f json": [
                sys.executable, "-m", "fabricplan.cli.app", "compare", str(spec), "-f", "json",
            ],
        }  # fmt: skip
        for label, args in commands.items():
            runs = [child_cpu_s(args) for _ in range(PROCESS_REPEATS)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            print(f"{gpus:>8,} {label:<32} {wall:>9.3f} {cpu:>8.3f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} at the end")


if __name__ == "__main__":
    main()
    whole_process()
