"""Wall time and peak memory of the flow-level simulator against GPU count.

Each case runs in its own process (so that its peak RSS is its own), after a tiny warm-up run
that loads numba's compiled kernels. Prints a Markdown table: GPUs, flows, links, flow-hops
(flows x path length, the size of the work), epochs (rate solves), wall seconds, peak RSS and
nanoseconds per flow-hop per epoch (flat when the cost grows no faster than flows x path
length).

    .venv/bin/python benchmarks/flow_scale.py                     # the table in docs/performance.md
    .venv/bin/python benchmarks/flow_scale.py --case all_to_all:1024:roce_v2:fat_tree:3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

K16 = "k16"
"""Topology name in a case for the k=16 fat tree of generic 16-port switches (1,024 hosts)."""
DEFAULT_CASES = (
    [f"ring_all_reduce:{g}:roce_v2" for g in (256, 512, 1024, 2048, 4096, 8192)]
    + [f"ring_all_reduce:{g}:infiniband" for g in (256, 1024, 8192)]
    + [f"all_to_all:{g}:roce_v2" for g in (256, 512, 1024, 2048)]
    + [f"all_to_all:{g}:infiniband" for g in (256, 512, 1024, 2048)]
    + [f"permutation:{g}:roce_v2" for g in (256, 1024, 8192)]
    + [f"all_to_all:{g}:roce_v2:fat_tree:3" for g in (256, 512, 1024, 2048)]
    + [f"permutation:{g}:roce_v2:fat_tree:3" for g in (1024, 8192)]
    + [f"ring_all_reduce:{g}:roce_v2:fat_tree:3" for g in (1024, 8192)]
    + [f"all_to_all:{g}:roce_v2:{K16}" for g in (256, 512, 1024)]
    + [f"all_to_all:1024:infiniband:{K16}", f"permutation:1024:roce_v2:{K16}"]
)
SIZE_BYTES = 2**30


def run_case(case: str) -> dict[str, float | int | str]:
    """Run one case in this process and return its figures."""
    import numpy as np

    from fabricplan.sim.flow.fluid import simulate
    from fabricplan.sim.flow.routing import flow_paths
    from fabricplan.sim.flow.transport import TransportSpec, transport_for
    from fabricplan.sim.pattern import pattern_traffic
    from fabricplan.sim.run_options import PATTERNS
    from fabricplan.sim.traffic import GpuLayout
    from fabricplan.spec import parse_spec
    from fabricplan.topology.designer import design_fabric
    from fabricplan.topology.graph import FabricGraph, fabric_graph

    pattern_text, gpus_text, tech, *shape = case.split(":")
    pattern = next(p for p in PATTERNS if p == pattern_text)
    gpus = int(gpus_text)
    fabric: dict[str, object] = {"technologies": [tech]}
    cluster: dict[str, object] = {}
    gpn = 8
    if shape and shape[0] == K16:
        # The textbook k=16 fat tree: 16-port 100G switches, one GPU and NIC per node.
        gpn = 1
        cluster = {
            "gpus_per_node": 1,
            "nics_per_node": 1,
            "nic_speed_gbps": 100,
            "nic": {"speed_gbps": 100},
        }
        fabric.update(
            {
                "topology": "fat_tree",
                "management_ports": 0,
                "switch": {tech: {"ports": 16, "port_speed_gbps": 100}},
            }
        )
    elif shape:
        fabric["topology"] = shape[0]
    if len(shape) > 1:
        fabric["tiers"] = int(shape[1])

    def setup(n: int) -> tuple[FabricGraph, TransportSpec, GpuLayout, int]:
        valid = parse_spec({"cluster": {"gpus": n, **cluster}, "fabric": fabric})
        name = next(t for t in valid.technologies if t == tech)
        design = design_fabric(valid, name)
        graph = fabric_graph(design, valid)
        transport = transport_for(valid.technologies[name], valid.switches[name])
        return graph, transport, GpuLayout(n, gpn, gpn), design.radix

    graph, transport, layout, _ = setup(16)
    simulate(graph, pattern_traffic(pattern, layout, 2**20, 0), transport)  # warm-up
    t0 = time.perf_counter()
    graph, transport, layout, radix = setup(gpus)
    traffic = pattern_traffic(pattern, layout, SIZE_BYTES, 0)
    t1 = time.perf_counter()
    result = simulate(graph, traffic, transport)
    t2 = time.perf_counter()
    sample = np.arange(min(traffic.flows, 20_000))
    _, links = flow_paths(graph, "static", traffic.src[sample], traffic.dst[sample], sample, 0)
    mean_hops = float((links >= 0).sum(axis=1).mean()) if sample.size else 0.0
    flow_hops = traffic.flows * mean_hops
    return {
        "case": case,
        "pattern": pattern,
        "technology": tech,
        "fabric": f"{graph.topology}, {graph.tiers} tiers, {radix}-port",
        "routing": transport.routing,
        "gpus": gpus,
        "flows": traffic.flows,
        "links": graph.links,
        "flow_hops": flow_hops,
        "epochs": result.epochs,
        "build_s": t1 - t0,
        "sim_s": t2 - t1,
        "wall_s": t2 - t0,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "ns_per_flow_hop_epoch": (t2 - t1) * 1e9 / max(flow_hops * result.epochs, 1),
        "completion_us": result.completion_us,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="PATTERN:GPUS:TECH[:TOPOLOGY[:TIERS]]")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one)))
        return
    print(
        "| pattern | fabric | technology (routing) | GPUs | flows | links | flow-hops | epochs "
        "| wall s | peak RSS MiB | ns per flow-hop per epoch |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in args.case or DEFAULT_CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--one", case], capture_output=True, text=True, check=True
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"| {r['pattern']} | {r['fabric']} | {r['technology']} ({r['routing']})"
            f" | {r['gpus']:,} "
            f"| {r['flows']:,} | {r['links']:,} | {r['flow_hops']:,.0f} | {r['epochs']} "
            f"| {r['wall_s']:.2f} | {r['rss_mib']:,.0f} | {r['ns_per_flow_hop_epoch']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
