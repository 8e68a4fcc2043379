"""The packet simulator's yardstick: a k=16 fat tree, 1,024 hosts, permutation of 2 MB each.

The scenario of the packet-level issue: 100 Gb/s links, 1 µs per link (switch latency 0,
store-and-forward as the reference simulators), every host sends 2 MB to one other host, all
starting at once, 4,000-byte payloads, ECMP, PFC, and HPCC (Alibaba's settings). Prints wall
time, peak memory, events per second and the flow-completion-time percentiles, beside the
reference numbers of the HPCC simulator (ns-3 HPCC: p50 453 µs, p99 891 µs) and, when given
``--htsim BINARY``, beside a run of csg-htsim's ``htsim_hpcc`` on the same machine (built by
hand outside this repository; nothing of it is kept here).

    .venv/bin/python benchmarks/packet_yardstick.py [--tm PERM.cm] [--htsim PATH] [--seeds N]

``--tm`` reads the permutation from a connection-matrix file (``a->b id i start t size s``
lines, the format csg-htsim's experiments use), so both simulators run the same pairs.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from fat_tree_fabric import fat_tree_network

from fabricplan.sim.packet.compiled import drop_stale_cache
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.traffic import GpuLayout, StepSpec, Traffic, permutation

HOSTS = 1024
SPEED_GBPS = 100.0
LINK_DELAY_NS = 1000.0
FLOW_BYTES = 2_000_000
PAYLOAD_BYTES = 4000
ROCE_HEADER_BYTES = 82
SWITCH_BUFFER_BYTES = 32 * 2**20
"""The HPCC simulator's buffer at 100 Gb/s (run.py: 16 MB per 50 Gb/s)."""
NS3_P50_US, NS3_P99_US, NS3_WALL_S, NS3_RSS_MB = 453.0, 891.0, 95.0, 3900.0
HTSIM_ISSUE_WALL_S, HTSIM_ISSUE_RSS_MB = 12.8, 121.0
"""Reference runs of the same scenario on one machine: ns-3 HPCC (alibaba-edu/High-Precision-
Congestion-Control) with HPCC, and csg-htsim's ``htsim_hpcc`` (docs/performance.md)."""
ISSUE_P50_TOLERANCE, ISSUE_P99_TOLERANCE = 0.05, 0.10


def yardstick_network() -> PacketNetwork:
    """The k=16 fat tree of 16-port 100G switches, 1 µs on every link, no NIC latency."""
    return fat_tree_network(HOSTS, 16, SWITCH_BUFFER_BYTES, LINK_DELAY_NS, SPEED_GBPS, tiers=3)


def matrix_traffic(path: Path) -> Traffic:
    """Flows of a connection-matrix file (``src->dst ... size bytes`` lines)."""
    src, dst, size = [], [], []
    for line in path.read_text().splitlines():
        match = re.match(r"\s*(\d+)->(\d+).*size\s+(\d+)", line)
        if match:
            src.append(int(match.group(1)))
            dst.append(int(match.group(2)))
            size.append(float(match.group(3)))
    n = len(src)
    return Traffic(
        np.array(src),
        np.array(dst),
        np.array(size),
        np.zeros(n, dtype=np.int64),
        np.zeros(n),
        (StepSpec("permutation", "permutation"),),
    )


def run_htsim(binary: Path, matrix: Path) -> dict[str, float]:
    """Run csg-htsim's HPCC permutation (same matrix) under /usr/bin/time; its FCTs and cost."""
    args = [
        "/usr/bin/time",
        "-v",
        str(binary),
        "-nodes",
        str(HOSTS),
        "-tm",
        str(matrix),
        "-strat",
        "ecmp_host",
        "-paths",
        "256",
        "-mtu",
        str(PAYLOAD_BYTES),
        "-hop_latency",
        "1",
        "-end",
        "5000",
        "-o",
        "/dev/null",
    ]
    done = subprocess.run(args, capture_output=True, text=True, check=True, cwd=str(binary.parent))
    fct = np.array([float(m) for m in re.findall(r"finished at ([0-9.]+)", done.stdout)])
    wall = re.search(r"Elapsed \(wall clock\) time .*: (?:(\d+):)?(\d+):([0-9.]+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    seconds = 0.0
    if wall:
        hours = float(wall.group(1) or 0)
        seconds = hours * 3600 + float(wall.group(2)) * 60 + float(wall.group(3))
    return {
        "wall_s": seconds,
        "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
        "flows": float(fct.size),
        "p50": float(np.percentile(fct, 50)),
        "p99": float(np.percentile(fct, 99)),
    }


def main(argv: list[str] | None = None) -> int:
    drop_stale_cache()  # a source checkout: forget machine code of changed kernels
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tm", type=Path, help="connection matrix (default: seeded permutation)")
    parser.add_argument("--htsim", type=Path, help="csg-htsim htsim_hpcc binary to run beside")
    parser.add_argument("--seeds", type=int, default=1, help="ECMP seeds to run (1, 2, ...)")
    args = parser.parse_args(argv)
    net = yardstick_network()
    spec = dataclasses.replace(
        packet_spec("pfc", "hpcc", "ecmp", mtu_bytes=PAYLOAD_BYTES, header_bytes=ROCE_HEADER_BYTES),
        cut_through=False,
        switch_buffer_bytes=SWITCH_BUFFER_BYTES,
    )
    rows = []
    for seed in range(1, args.seeds + 1):
        traffic = (
            matrix_traffic(args.tm)
            if args.tm
            else permutation(GpuLayout(HOSTS, 1, 1), FLOW_BYTES, seed=seed)
        )
        last = [0.0]

        def progress(done: float, last: list[float] = last, seed: int = seed) -> None:
            if done - last[0] >= 0.1 or done >= 1.0:
                last[0] = done
                print(f"  seed {seed}: {100 * done:5.1f} % delivered", file=sys.stderr, flush=True)

        t0 = time.perf_counter()
        result = simulate_packet(net, traffic, spec, seed=seed, progress=progress)
        wall = time.perf_counter() - t0
        # FCT as the reference simulators count it: start to the last ACK at the sender.
        fct = result.acked_us - result.start_us
        rows.append(
            {
                "seed": seed,
                "wall_s": wall,
                "events": result.events,
                "events_per_s": result.events / wall,
                "p50": float(np.percentile(fct, 50)),
                "p99": float(np.percentile(fct, 99)),
                "status": result.status,
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    print(f"fabricplan packet, k=16 fat tree, {HOSTS} hosts, HPCC, ECMP, PFC, 2 MB permutation")
    print("seed  status  wall s   events      events/s   FCT p50 us  p99 us   peak RSS MB")
    for r in rows:
        print(
            f"{r['seed']:4d}  {r['status']:6s} {r['wall_s']:7.2f} {r['events']:10,d}"
            f" {r['events_per_s']:12,.0f} {r['p50']:10.1f} {r['p99']:8.1f} {r['rss_mb']:10.0f}"
        )
    p50 = float(np.mean([r["p50"] for r in rows]))
    p99 = float(np.mean([r["p99"] for r in rows]))
    print(
        f"mean over seeds: p50 {p50:.1f} us ({100 * (p50 / NS3_P50_US - 1):+.1f} % vs ns-3"
        f" {NS3_P50_US}), p99 {p99:.1f} us ({100 * (p99 / NS3_P99_US - 1):+.1f} % vs ns-3"
        f" {NS3_P99_US})"
    )
    if args.htsim:
        matrix = args.tm
        if matrix is None:
            print("--htsim needs --tm (both must run the same pairs)", file=sys.stderr)
            return 2
        h = run_htsim(args.htsim, matrix)
        print(
            f"htsim_hpcc same machine: wall {h['wall_s']:.2f} s, peak RSS {h['rss_mb']:.0f} MB,"
            f" {h['flows']:.0f} flows, FCT p50 {h['p50']:.1f} us, p99 {h['p99']:.1f} us"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
