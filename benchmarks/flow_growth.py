"""How the flow solver's time grows with flows and hosts, and where it goes.

For each series of cases (the textbook k=16 fat tree of 16-port 100 Gb/s switches, one NIC per
host, ECMP), runs the flow level once per size in this process after a warm-up, and splits the
simulation time into the max-min rate solves (``maxmin_rates``, numba) and the rest of the
epoch loop (routing new flows, completions, byte accounting: numpy), in CPU seconds of this
process (wall time on a shared machine counts the other jobs). Prints per case: hosts,
flows, flow-hops, epochs (rate solves), simulation seconds, the solver's share, microseconds
per epoch and nanoseconds per flow-hop per epoch; then the growth exponent of each series
between its first and last size (``log(t2/t1) / log(x2/x1)`` against flows and against hosts)
and of the epoch count.

    .venv/bin/python benchmarks/flow_growth.py [--all-to-all 64 128 256 512]
        [--permutation 128 256 512 1024] [--flows-per-host 1 4 16]
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from fat_tree_fabric import fat_tree_graph

import fabricplan.sim.flow.fluid as fluid
from fabricplan.sim.flow.routing import flow_paths
from fabricplan.sim.flow.transport import transport_for
from fabricplan.sim.pattern import pattern_traffic
from fabricplan.sim.traffic import GpuLayout, StepSpec, Traffic
from fabricplan.topology.graph import FabricGraph

SIZE_BYTES = 2**24
"""Bytes per rank (all_to_all) or per flow (permutation, random peers)."""
SPEED_GBPS = 100


def k16(hosts: int) -> tuple[FabricGraph, Any]:
    """The k=16 fat tree (2 tiers up to 128 hosts, 3 beyond) with RoCEv2 and ECMP."""
    graph, valid = fat_tree_graph(hosts, 16, SPEED_GBPS)
    return graph, transport_for(valid.technologies["roce_v2"], valid.switches["roce_v2"])


def random_peers(hosts: int, per_host: int, seed: int = 1) -> Traffic:
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(hosts, dtype=np.int64), per_host)
    dst = (src + rng.integers(1, hosts, src.size)) % hosts
    return Traffic(
        src,
        dst.astype(np.int64),
        np.full(src.size, float(SIZE_BYTES)),
        np.zeros(src.size, dtype=np.int64),
        np.zeros(src.size),
        (StepSpec("random peers", "custom"),),
    )


class SolveTimer:
    """Wraps ``maxmin_rates`` to add up the time spent in it."""

    def __init__(self, solve: Callable[..., Any]) -> None:
        self.solve = solve
        self.seconds = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        out = self.solve(*args, **kwargs)
        self.seconds += time.process_time() - start
        return out


def run(graph: FabricGraph, transport: Any, traffic: Traffic) -> dict[str, float]:
    timer = SolveTimer(fluid.maxmin_rates)
    fluid.maxmin_rates = timer  # type: ignore[assignment]
    try:
        start = time.process_time()
        result = fluid.simulate(graph, traffic, transport)
        seconds = time.process_time() - start
    finally:
        fluid.maxmin_rates = timer.solve  # type: ignore[assignment]
    sample = np.arange(min(traffic.flows, 20_000))
    _, links = flow_paths(graph, "static", traffic.src[sample], traffic.dst[sample], sample, 0)
    hops = float((links >= 0).sum(axis=1).mean()) if sample.size else 0.0
    return {
        "flows": traffic.flows,
        "flow_hops": traffic.flows * hops,
        "epochs": result.epochs,
        "seconds": seconds,
        "solve": timer.seconds,
    }


def exponent(a: float, b: float, x1: float, x2: float) -> float:
    return math.log(b / a) / math.log(x2 / x1) if a > 0 and b > 0 and x2 != x1 else math.nan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-to-all", type=int, nargs="*", default=[64, 128, 256, 512])
    parser.add_argument("--permutation", type=int, nargs="*", default=[128, 256, 512, 1024])
    parser.add_argument("--flows-per-host", type=int, nargs="*", default=[1, 4, 16])
    parser.add_argument("--peers-hosts", type=int, default=1024)
    args = parser.parse_args(argv)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    graph, transport = k16(16)
    fluid.simulate(graph, random_peers(16, 1), transport)  # load the compiled solver
    series: dict[str, list[tuple[int, dict[str, float]]]] = {}
    cases: list[tuple[str, int, Callable[[], tuple[FabricGraph, Any, Traffic]]]] = []
    for hosts in args.all_to_all:

        def a2a(h: int = hosts) -> tuple[FabricGraph, Any, Traffic]:
            g, t = k16(h)
            return g, t, pattern_traffic("all_to_all", GpuLayout(h, 1, 1), SIZE_BYTES, 0)

        cases.append(("all_to_all", hosts, a2a))
    for hosts in args.permutation:

        def perm(h: int = hosts) -> tuple[FabricGraph, Any, Traffic]:
            g, t = k16(h)
            return g, t, pattern_traffic("permutation", GpuLayout(h, 1, 1), SIZE_BYTES, 0)

        cases.append(("permutation", hosts, perm))
    for per_host in args.flows_per_host:

        def peers(n: int = per_host) -> tuple[FabricGraph, Any, Traffic]:
            g, t = k16(args.peers_hosts)
            return g, t, random_peers(args.peers_hosts, n)

        cases.append((f"random peers ({args.peers_hosts:,} hosts)", per_host, peers))
    print(
        "| series | hosts | flows | flow-hops | epochs | sim s | solver share | µs per epoch"
        " | ns per flow-hop per epoch |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, _, build in cases:
        graph, transport, traffic = build()
        r = run(graph, transport, traffic)
        series.setdefault(name, []).append((graph.hosts, r))
        per_epoch = r["seconds"] / max(r["epochs"], 1)
        print(
            f"| {name} | {graph.hosts:,} | {int(r['flows']):,} | {r['flow_hops']:,.0f}"
            f" | {int(r['epochs']):,} | {r['seconds']:.2f} | {r['solve'] / r['seconds']:.0%}"
            f" | {per_epoch * 1e6:,.0f}"
            f" | {r['seconds'] * 1e9 / max(r['flow_hops'] * r['epochs'], 1):.1f} |",
            flush=True,
        )
    print()
    print("| series | from → to | time vs flows | time vs hosts | epochs vs flows |")
    print("|---|---|---:|---:|---:|")
    for name, points in series.items():
        if len(points) < 2:
            continue
        (h1, a), (h2, b) = points[0], points[-1]
        print(
            f"| {name} | {int(a['flows']):,} → {int(b['flows']):,} flows"
            f" | {exponent(a['seconds'], b['seconds'], a['flows'], b['flows']):.2f}"
            f" | {exponent(a['seconds'], b['seconds'], h1, h2):.2f}"
            f" | {exponent(a['epochs'], b['epochs'], a['flows'], b['flows']):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
