"""How long `compare` takes (parse, design, cost, analytic performance, operations and the decision
with its re-evaluations) as the cluster grows. Prints a table; docs/performance.md records it.

    .venv/bin/python benchmarks/compare_speed.py
"""

from __future__ import annotations

import platform
import statistics
import time
from typing import Any

from fabricplan.evaluate import evaluate
from fabricplan.recommend.decision import recommend
from fabricplan.spec import parse_spec

GPU_COUNTS = (1_024, 8_192, 32_768, 100_000)
REPEATS = 5


def spec_for(gpus: int) -> dict[str, Any]:
    """A 400G, 8-rail H100 cluster with every design choice left to the search (switch model,
    topology, tiers, planes): the search finds the two planes that keep 64-port NDR switches
    within 3 tiers at 100k GPUs."""
    return {
        "name": f"bench-{gpus}",
        "cluster": {"gpus": gpus, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
        "fabric": {"technologies": ["infiniband", "roce_v2"]},
    }


def time_once(gpus: int) -> tuple[float, float, int]:
    """Seconds for (evaluate only, the whole compare with the decision), and the designs the
    search considered over both technologies."""
    start = time.perf_counter()
    valid = parse_spec(spec_for(gpus))
    evals = evaluate(valid)
    middle = time.perf_counter()
    recommend(valid, evals)
    end = time.perf_counter()
    designs = sum(len(e.design.alternatives) + 1 for e in evals)
    return middle - start, end - start, designs


def main() -> None:
    time_once(GPU_COUNTS[0])  # warm the imports and the catalog once
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(
        f"{'GPUs':>8} {'designs':>8} {'evaluate (s)':>14} {'compare (s)':>13}   median of {REPEATS}"
    )
    for gpus in GPU_COUNTS:
        runs = [time_once(gpus) for _ in range(REPEATS)]
        evaluate_s = statistics.median(r[0] for r in runs)
        compare_s = statistics.median(r[1] for r in runs)
        print(f"{gpus:>8,} {runs[0][2]:>8} {evaluate_s:>14.3f} {compare_s:>13.3f}")


if __name__ == "__main__":
    main()
