"""What the lossless Ethernet configuration costs a collective, measured packet by packet.

Runs the packet simulator on the cross-validation's small fabrics (``packet_crossval.fabric``:
generic 100G switches, one NIC per host) with RoCEv2's mechanisms as the catalog gives them
(PFC, ECN + DCQCN, ECMP) and with one setting changed at a time: PFC off (lossy: tail drops and
go-back-N), congestion control off (PFC alone: pauses spread), ECN off (DCQCN never hears of
congestion) and a fixed 2 KiB PFC headroom (too small for the bytes in flight after a pause).
Prints each traffic's completion time and its ratio to the catalog configuration; the ratios
are the constants of ``fabricplan.analytic.lossless`` (docs/models.md, "Lossless configuration").

    PYTHONPATH=src python benchmarks/lossless_effect.py          # about two minutes on 2 cores
    PYTHONPATH=src python benchmarks/lossless_effect.py "2:1"    # only the traffic named so
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from packet_crossval import SEED, fabric, victim

from fabricplan.sim.packet.ecn import EcnSpec
from fabricplan.sim.packet.performance import network_for_graph
from fabricplan.sim.packet.pfc import PfcSpec
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.traffic import GpuLayout, Traffic, all_to_all, incast, permutation

SMALL_HEADROOM_BYTES = 2048

CASES: list[tuple[str, Callable[[GpuLayout], Traffic], float, int]] = [
    ("all_to_all, 8 MB per rank", lambda lay: all_to_all(lay, 8_000_000), 1.0, 3),
    ("all_to_all 8 MB per rank, leaf 3:1", lambda lay: all_to_all(lay, 8_000_000), 3.0, 2),
    ("victim flow beside an 8 -> 1 incast", victim, 1.0, 3),
    ("permutation 4 MB, non-blocking ECMP", lambda lay: permutation(lay, 4_000_000, SEED), 1.0, 3),
    ("incast 16 -> 1, 2 MB", lambda lay: incast(lay, 16, 2_000_000), 1.0, 3),
    (
        "permutation 4 MB, leaf 3:1",
        lambda lay: permutation(lay, 4_000_000, SEED),
        3.0,
        2,
    ),
    ("all_to_all 8 MB per rank, leaf 2:1", lambda lay: all_to_all(lay, 8_000_000), 2.0, 2),
    ("permutation 4 MB, leaf 2:1", lambda lay: permutation(lay, 4_000_000, SEED), 2.0, 2),
]


def main() -> None:
    only = sys.argv[1] if len(sys.argv) > 1 else ""  # e.g. "2:1": only the traffic named so
    print("| traffic | configuration | completion (µs) | x catalog | drops | pauses | wall (s) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, build, oversubscription, tiers in CASES:
        if only not in name:
            continue
        graph, valid = fabric("roce_v2", oversubscription, tiers)
        tech = valid.technologies["roce_v2"]
        base = packet_spec(
            "pfc",
            "dcqcn",
            "ecmp",
            mtu_bytes=tech.mtu_bytes,
            header_bytes=int(tech.header_bytes.value),
        )
        variants = {
            "catalog (PFC, ECN, DCQCN)": base,
            "PFC off": dataclasses.replace(base, link_flow_control="none"),
            "congestion control off": dataclasses.replace(
                base, congestion_control="none", ecn=EcnSpec(enabled=False)
            ),
            "ECN off": dataclasses.replace(base, ecn=EcnSpec(enabled=False)),
            "PFC headroom 2 KiB": dataclasses.replace(
                base, pfc=PfcSpec(headroom_bytes=SMALL_HEADROOM_BYTES)
            ),
        }
        network = network_for_graph(graph, valid, "roce_v2")
        traffic = build(GpuLayout(graph.hosts, 1, 1))
        reference = None
        for label, spec in variants.items():
            start = time.perf_counter()
            result = simulate_packet(network, traffic, spec, seed=SEED)
            wall = time.perf_counter() - start
            span = result.completion_us
            reference = reference or span
            print(
                f"| {name} | {label} | {span:,.1f} | {span / reference:.3f} |"
                f" {result.counters['drops']} | {result.counters['pause_frames']} | {wall:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
