"""Where the packet level's InfiniBand all_to_all on 128 hosts loses against the flow level.

docs/cross_validation.md's all_to_all row (k = 8 three-tier fat tree of 8-port 100G switches,
4 MB per rank, adaptive routing, credits) reaches about 65 % of the ideal split at the packet
level while the flow level's adaptive model (``model/load_balancing.py``: the switch-local
implementation wins back 0.63 of what hashing loses) is near the ideal there. This script runs
the same traffic with the routing and the credit buffer changed one at a time, congestion
control off, and prints each completion with the flow level's. Run:

    PYTHONPATH=src .venv/bin/python benchmarks/adaptive_all_to_all.py [bytes per rank ...]

(about two minutes on 2 cores for 4 MB and 16 MB per rank).
"""

from __future__ import annotations

import dataclasses
import sys
import time

from packet_crossval import SEED, fabric

from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.transport import transport_for
from fabricplan.sim.packet.credit import CreditSpec
from fabricplan.sim.packet.performance import network_for_graph, packet_spec_for_design
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.traffic import GpuLayout, all_to_all

AMPLE_VL_BUFFER_BYTES = 4_000_000
"""A receive buffer per VL and link far above what any flow mix here fills: credits never stall."""


def main(argv: list[str]) -> int:
    sizes = [float(a) for a in argv] or [4e6, 16e6]
    graph, valid = fabric("infiniband")
    net = network_for_graph(graph, valid, "infiniband")
    tech, switch = valid.technologies["infiniband"], valid.switches["infiniband"]
    print("| bytes per rank | routing | VL buffer | flow us | packet us | packet / flow | stalls |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for size in sizes:
        traffic = all_to_all(GpuLayout(graph.hosts, 1, 1), size)
        for routing in ("adaptive", "ecmp"):
            transport = transport_for(tech, switch, routing=routing, congestion_control="none")
            flow_us = simulate(graph, traffic, transport, seed=SEED).completion_us
            spec = packet_spec_for_design(valid, "infiniband", routing, "none")
            for label, credit in (
                ("2 credit round trips", spec.credit),
                ("ample", CreditSpec(vl_buffer_bytes=AMPLE_VL_BUFFER_BYTES)),
            ):
                started = time.perf_counter()
                run = simulate_packet(net, traffic, dataclasses.replace(spec, credit=credit), SEED)
                print(
                    f"| {size:,.0f} | {routing} | {label} | {flow_us:,.1f} |"
                    f" {run.completion_us:,.1f} | {run.completion_us / flow_us:.3f} |"
                    f" {run.counters['stalls']:,} |",
                    f"<!-- {time.perf_counter() - started:.1f} s -->",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
