"""Peak memory of flow and packet all_to_all runs, per GPU pair: the basis of the estimates in
``fabricplan.sim.memory`` (FLOW_BYTES_PER_PAIR, PACKET_BYTES_PER_PAIR).

Each run is its own process; its peak RSS less the RSS before the run, over the GPU pairs the
pattern builds (``gpus²``), is the figure. Run: ``python benchmarks/run_memory.py [--quick]``.
"""

from __future__ import annotations

import subprocess
import sys

from fabricplan.sim.memory import estimated_run_bytes

ONE_RUN = """
import resource, sys, time
from fabricplan.spec import parse_spec
from fabricplan.sim.run import RunOptions, run_pattern
level, gpus = sys.argv[1], int(sys.argv[2])
valid = parse_spec({"cluster": {"gpus": gpus}, "fabric": {"technologies": ["roce_v2"]}})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
run_pattern(valid, "roce_v2", level, RunOptions(pattern="all_to_all", size_bytes=2**24))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((peak - before) * 1024, time.perf_counter() - started)
"""

RUNS = {"flow": (512, 1024, 2048), "packet": (256, 512)}
QUICK = {"flow": (512,), "packet": (256,)}


def main() -> None:
    runs = QUICK if "--quick" in sys.argv else RUNS
    print("| level | GPUs | GPU pairs | peak RSS above start (MiB) | per pair (B) |", end="")
    print(" estimate (MiB) | s |")
    print("|---|---|---|---|---|---|---|")
    for level, sizes in runs.items():
        for gpus in sizes:
            out = subprocess.run(
                [sys.executable, "-c", ONE_RUN, level, str(gpus)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            grown, seconds = int(out[0]), float(out[1])
            pairs = gpus * gpus
            estimate = estimated_run_bytes(level, "all_to_all", gpus, qps=1, ep=1)
            print(
                f"| {level} | {gpus:,} | {pairs:,} | {grown / 2**20:,.0f} | {grown / pairs:,.0f}"
                f" | {estimate / 2**20:,.0f} | {seconds:.1f} |"
            )


if __name__ == "__main__":
    main()
