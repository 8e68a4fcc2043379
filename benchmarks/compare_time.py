"""CPU time of the flow level's performance call, the basis of ``compare``'s time estimate.

For each technology and GPU count, one process designs the default fabric and times one
``flow_performance`` call with the request ``compare`` makes (all_reduce, all_gather and
all_to_all at the default sizes, the level's default seeds), after a warm-up that loads numba's
compiled kernels. Prints a Markdown table: GPUs, flow-runs (flows x simulated sizes x seeds,
as ``fabricplan.sim.flow.duration`` counts them), CPU seconds, µs per flow-run, and the estimate.

    .venv/bin/python benchmarks/compare_time.py                  # the table in docs/performance.md
    .venv/bin/python benchmarks/compare_time.py --gpus 256 1024 --tech roce_v2
    .venv/bin/python benchmarks/compare_time.py --compare 1024  # a whole compare, timed
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CALL = """
import json, sys, time
from fabricplan.model.results import PerfRequest
from fabricplan.sim.flow.performance import FLOW_MAX_FLOWS, flow_performance
from fabricplan.sim.flow.transport import transport_for
from fabricplan.sim.flow.duration import collective_flows, flow_call_seconds
from fabricplan.sim.run import compile_kernels
from fabricplan.sim.performance import simulated_sizes
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
gpus, tech = int(sys.argv[1]), sys.argv[2]
compile_kernels("flow")
valid = parse_spec({"cluster": {"gpus": gpus}, "fabric": {"technologies": [tech]}})
design = design_fabric(valid, tech)
request = PerfRequest()
seeds = 3 if transport_for(valid.technologies[tech], valid.switches[tech]).routing == "ecmp" else 1
sizes = len(simulated_sizes(request.sizes_bytes, 3))
flows = sum(collective_flows(op, gpus, 8, 1, FLOW_MAX_FLOWS) for op in request.collectives)
started = time.process_time()
flow_performance(valid, design, request)
cpu = time.process_time() - started
estimate = flow_call_seconds(
    gpus, request.collectives, sizes, seeds, 1, FLOW_MAX_FLOWS, 8, ecmp=seeds == 3
)
print(json.dumps({"runs": flows * sizes * seeds, "cpu": cpu, "estimate": estimate}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[256, 512, 1024, 2048])
    parser.add_argument("--tech", nargs="+", default=["infiniband", "roce_v2"])
    parser.add_argument("--compare", type=int, help="time a whole compare at this many GPUs")
    args = parser.parse_args()
    if args.compare:
        _whole_compare(args.compare)
        return
    print("| technology | GPUs | flow-runs | CPU s | µs per flow-run | estimate s |")
    print("|---|---|---|---|---|---|")
    for tech in args.tech:
        for gpus in args.gpus:
            out = subprocess.run(
                [sys.executable, "-c", CALL, str(gpus), tech],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(
                f"| {tech} | {gpus:,} | {row['runs']:,} | {row['cpu']:.1f}"
                f" | {row['cpu'] / row['runs'] * 1e6:.2f} | {row['estimate']:.1f} |",
                flush=True,
            )


def _whole_compare(gpus: int) -> None:
    """A whole ``compare --backend flow --no-cache`` in its own process: CPU and wall seconds
    against the estimate the command makes before it starts."""
    import resource
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.yaml"
        spec.write_text(f"cluster: {{gpus: {gpus}}}\n")
        command = [sys.executable, "-m", "fabricplan", "compare", str(spec), "--backend", "flow"]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "--no-cache", "--allow-long", "-f", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    from fabricplan.model.results import PerfRequest
    from fabricplan.recommend.decision import CLUSTER_SIZE_STEPS
    from fabricplan.sim.flow.duration import estimated_compare_seconds
    from fabricplan.spec import parse_spec

    valid = parse_spec({"cluster": {"gpus": gpus}})
    estimate = estimated_compare_seconds(valid, PerfRequest(), CLUSTER_SIZE_STEPS)
    print(
        f"compare --backend flow at {gpus:,} GPUs: exit {done.returncode}, wall {wall:.0f} s,"
        f" CPU {usage.ru_utime + usage.ru_stime:.0f} s, estimated {estimate:.0f} s of CPU"
    )


if __name__ == "__main__":
    main()
