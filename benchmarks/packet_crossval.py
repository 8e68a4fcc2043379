"""Cross-validation: the flow-level model against the packet-level simulator, scenario by scenario.

Both levels run the same traffic objects on the same designed fabric with the same mechanisms
(routing and its ECMP seed, link-level flow control, congestion control). The table gives each
scenario's completion time at both levels and the flow level's error against the packet level
(the target is 10 %). Regenerate:

    .venv/bin/python benchmarks/packet_crossval.py --write-doc

writes docs/cross_validation.md (a file of its own: docs/validation.md is generated whole by
benchmarks/validation.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from fabricplan.cli.guard import write_atomic
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.transport import (
    CongestionControl,
    LinkFlowControl,
    RoutingName,
    TransportSpec,
)
from fabricplan.sim.packet.compiled import drop_stale_cache
from fabricplan.sim.packet.performance import network_for_graph
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import (
    PacketCongestionControl,
    PacketFlowControl,
    PacketRouting,
    packet_spec,
)
from fabricplan.sim.pattern import scenario_traffic
from fabricplan.sim.traffic import (
    GpuLayout,
    StepSpec,
    Traffic,
    all_to_all,
    combine,
    incast,
    permutation,
    ring,
)
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import FabricGraph, fabric_graph

ROOT = Path(__file__).resolve().parents[1]
INTRO = """\
Each scenario runs at both levels on the same designed fabric (a k = 8 three-tier fat tree of
8-port 100 Gb/s switches, one GPU per node, 128 host ports; the oversubscribed case is a
two-tier fabric of 16-port switches at 3:1), with the same traffic objects
(`fabricplan.sim.traffic`), the same ECMP seed and the same mechanisms. Variants: RoCEv2
with ECMP, PFC and DCQCN (ConnectX defaults); RoCEv2 with ECMP and PFC only; InfiniBand with
adaptive routing, credits and IB CC. Completion is the last byte at its receiver; the flow
error is (flow - packet) / packet; the target is 10 %."""
DOC = ROOT / "docs" / "cross_validation.md"
ANALYSIS = """\
## Where the levels differ by more than 10 %, and why

- **DCQCN with ConnectX defaults** (permutation, oversubscribed leaf, two jobs; lossy incast).
  The flow level assumes DCQCN settles at the max-min fair share after a few decrease periods.
  Packet by packet, a congested flow is halved every 4 µs while alpha is near 1 and recovers on
  its byte counter (every 32,767 B: fast for a fast flow, slow for a slow one) or the 300 µs
  timer: flows overshoot below their share and come back late. The PFC-only rows of the same
  scenarios agree within 2 % (except the permutation below): the gap is the DCQCN dynamics, not
  the fabric. A flow-level model of DCQCN's overshoot and recovery is needed (sim/flow).
- **Adaptive routing** (InfiniBand permutation and all_to_all; its two-jobs row now agrees,
  -0.8 %). The flow level treats adaptive routing as an ideal split over every equal-cost
  path (a trunk is one pooled link).
  A switch choosing the least-loaded output per packet sees only its own queues, and the way
  down from the chosen top switch is fixed, so packets still collide on the way down, queue,
  and under credits back-pressure: the packet level reaches about 83 % of the ideal on the
  permutation and 60 % on the all_to_all. The flow level is optimistic by that much. These
  rows run the flow level's ideal split on purpose; by default it now lets the implementation
  win back its measured share of what hashed placement would lose on each trunk
  (`sim/flow/adaptive.py`, `model/load_balancing.py`: 63 % for switch-local AR from Geoffray
  and Hoefler's 38 % static and 77 % adaptive, docs/models.md). On the permutation that is
  close to what the packet level reaches; on an all_to_all, whose many flows hash evenly, it
  is close to the ideal, so the packet level's 60 % there is a gap the flow level does not
  reproduce (found below to be credit stalls, not the routing). The earlier flat
  0.77 on every loaded trunk matched this all_to_all row but made InfiniBand's large
  all_to_all slower than ECMP's (1.27 against 1.09 on the k = 16 fat tree of
  docs/findings.md): a tax measured on a permutation, applied where hashing had already
  balanced the load. The flow level now never puts adaptive routing below the hashed
  placement it corrects. Where the all_to_all row's gap lies (benchmarks/adaptive_all_to_all.py,
  congestion control off, the routing and the credit buffer changed one at a time): it is not
  the adaptive model's parameter. With a receive buffer per VL that no flow mix fills, the
  packet level's per-packet adaptive routing takes 1,371.0 µs at 16 MB per rank against the
  flow level's 1,337.0 µs (2.5 %; ECMP 1,549.3 against 1,512.9); with the default buffer (two
  credit round trips per VL, a model choice: NVIDIA publishes no Quantum buffer) it takes
  1,553.9 µs with 363,054 credit stalls: each of the 127 flows through a port holds credits,
  a full ingress VL blocks every flow behind it, and the flow level has no such head-of-line
  loss in an all_to_all. At 4 MB per rank (8 packets a flow) the start of the exchange weighs
  too: 526.6 µs with the default buffer, 405.0 with an ample one, 336.8 at the flow level.
  tests/test_levels_agree.py holds flow and packet within 10 % where no buffer binds (k = 4,
  and the 128-host case as a slow test).
- **ECMP permutation, PFC only** (-21 %). Both levels use the same hashed paths, so the same
  collisions; the packet level finishes later. Not explained yet: the flow level's head-of-line
  back-pressure appears to under-count how far PFC pauses spread through three tiers.
- **Lossy RoCE** (no PFC). The flow level has no drops: the packet level's tail drops and
  go-back-N retransmissions (every packet behind a loss is sent again) cost 11-16 %.

Agreement within 2 % where the physics is the same at both levels: a single bottleneck (incast,
victim beside an incast, with PFC or credits), the ring all_reduce (one flow per NIC), the
oversubscribed leaf with PFC only."""
TARGET = 0.10
"""Largest flow-level error the cross-validation accepts, relative to the packet level."""
SEED = 1
HOSTS = 128
"""k = 8 three-tier fat tree of 8-port 100G switches, one GPU per node (128 host ports)."""

VARIANTS: dict[str, tuple[TechnologyName, str, str, str]] = {
    # label: (technology, routing, link flow control, congestion control)
    "roce_v2 dcqcn": ("roce_v2", "ecmp", "pfc", "dcqcn"),
    "roce_v2 pfc only": ("roce_v2", "ecmp", "pfc", "none"),
    "infiniband": ("infiniband", "adaptive", "credit", "ib_cc"),
}


def fabric(
    tech: TechnologyName, oversubscription: float = 1.0, tiers: int = 3
) -> tuple[FabricGraph, ValidScenario]:
    valid = parse_spec(
        {
            "cluster": {
                "gpus": HOSTS,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": [tech],
                "topology": "fat_tree",
                "tiers": tiers,
                "oversubscription": oversubscription,
                "management_ports": 0,
                "switch": {tech: {"ports": 8 if tiers == 3 else 16, "port_speed_gbps": 100}},
            },
        }
    )
    return fabric_graph(design_fabric(valid, tech), valid), valid


def flows(src: list[int], dst: list[int], size: float, name: str) -> Traffic:
    n = len(src)
    return Traffic(
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        np.full(n, float(size)),
        np.zeros(n, dtype=np.int64),
        np.zeros(n),
        (StepSpec(name, name),),
    )


def victim(layout: GpuLayout) -> Traffic:
    """An 8-to-1 incast into host 0 plus a victim flow that shares the incast's first links
    (host 8 -> host 1, under the same leaf as the incast's receiver)."""
    congest = incast(layout, 8, 4_000_000)
    victim_flow = flows([int(congest.src[0]) + 1], [1], 4_000_000, "victim")
    return combine([congest, victim_flow])


@dataclass(frozen=True)
class Case:
    """One scenario: its traffic, and the fabric it runs on."""

    name: str
    build: Callable[[GpuLayout], Traffic]
    oversubscription: float = 1.0
    tiers: int = 3
    lossy: bool = False


@dataclass(frozen=True)
class Row:
    scenario: str
    variant: str
    mechanisms: str
    flows: int
    flow_us: float
    packet_us: float
    status: str
    events: int
    drops: int
    pauses: int
    packet_s: float
    fct_p99_flow: float
    fct_p99_packet: float

    @property
    def error(self) -> float:
        return (self.flow_us - self.packet_us) / self.packet_us


CASES: list[Case] = [
    Case("incast 16 -> 1, 2 MB", lambda lay: incast(lay, 16, 2_000_000)),
    Case("permutation, 4 MB", lambda lay: permutation(lay, 4_000_000, SEED)),
    Case("all_to_all, 4 MB per rank", lambda lay: all_to_all(lay, 4_000_000)),
    Case("ring all_reduce, 64 MB", lambda lay: ring(lay, "all_reduce", 64 * 2**20)),
    Case("victim flow beside an 8 -> 1 incast", victim),
    Case(
        "oversubscribed leaf 3:1, permutation 4 MB",
        lambda lay: permutation(lay, 4_000_000, SEED),
        oversubscription=3.0,
        tiers=2,
    ),
    Case(
        "two jobs (fragmented), ring all_reduce 32 MB",
        lambda lay: scenario_traffic(
            "ring_all_reduce", lay, 32 * 2**20, SEED, jobs=2, placement="fragmented"
        ),
    ),
    Case("lossy (no PFC) incast 16 -> 1, 2 MB", lambda lay: incast(lay, 16, 2_000_000), lossy=True),
]


def run_case(case: Case, variant: str) -> Row | None:
    tech, routing, fc, cc = VARIANTS[variant]
    if case.lossy and fc != "pfc":
        return None
    fc = "none" if case.lossy else fc
    graph, valid = fabric(tech, case.oversubscription, case.tiers)
    traffic = case.build(GpuLayout(graph.hosts, 1, 1))
    tech_spec = valid.technologies[tech]
    mtu, header = tech_spec.mtu_bytes, int(tech_spec.header_bytes.value)
    spec = packet_spec(
        cast(PacketFlowControl, fc),
        cast(PacketCongestionControl, cc),
        cast(PacketRouting, routing),
        mtu_bytes=mtu,
        header_bytes=header,
    )
    transport = TransportSpec(
        routing=cast(RoutingName, routing),
        link_flow_control=cast(LinkFlowControl, fc),
        congestion_control=cast(CongestionControl, cc),
        payload_share=mtu / (mtu + header),
    )
    fluid = simulate(graph, traffic, transport, seed=SEED)
    t0 = time.perf_counter()
    packet = simulate_packet(network_for_graph(graph, valid, tech), traffic, spec, seed=SEED)
    return Row(
        scenario=case.name,
        variant=variant,
        mechanisms=f"{routing}/{fc}/{cc}",
        flows=traffic.flows,
        flow_us=fluid.completion_us,
        packet_us=packet.completion_us,
        status=packet.status,
        events=packet.events,
        drops=packet.counters["drops"],
        pauses=packet.counters["pause_frames"] + packet.counters["stalls"],
        packet_s=time.perf_counter() - t0,
        fct_p99_flow=float(np.nanpercentile(fluid.fct_us, 99)),
        fct_p99_packet=float(np.nanpercentile(packet.fct_us, 99)),
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| scenario | variant (routing/flow control/cc) | flows | flow level us |"
        " packet level us | flow error | within 10 % | FCT p99 flow / packet us |"
        " packet events | drops | pauses or stalls |",
        "|---|---|---:|---:|---:|---:|:---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ok = "yes" if abs(r.error) <= TARGET else "**no**"
        lines.append(
            f"| {r.scenario} | {r.variant} ({r.mechanisms}) | {r.flows:,} | {r.flow_us:,.1f} |"
            f" {r.packet_us:,.1f} | {100 * r.error:+.1f} % | {ok} |"
            f" {r.fct_p99_flow:,.1f} / {r.fct_p99_packet:,.1f} | {r.events:,} | {r.drops} |"
            f" {r.pauses} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    drop_stale_cache()  # a source checkout: forget machine code of changed kernels
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-doc", action="store_true", help=f"write {DOC}")
    args = parser.parse_args(argv)
    rows = []
    for case in CASES:
        for variant in VARIANTS:
            row = run_case(case, variant)
            if row is not None:
                rows.append(row)
                print(
                    f"{case.name:48s} {variant:16s} flow {row.flow_us:10.1f} packet"
                    f" {row.packet_us:10.1f} error {100 * row.error:+6.1f} %"
                    f" ({row.status}, {row.packet_s:.1f} s)",
                    flush=True,
                )
    text = table(rows)
    print(text)
    if args.write_doc:
        write_atomic(DOC, doc_text(text, rows))
        print(f"wrote {DOC}")
    return 0


def doc_text(text: str, rows: list[Row]) -> str:
    within = sum(abs(r.error) <= TARGET for r in rows)
    return "\n".join(
        [
            "# Cross-validation: flow level against packet level",
            "",
            "<!-- owner: sim/packet; generated by benchmarks/packet_crossval.py --write-doc -->",
            "",
            INTRO,
            "",
            f"Within 10 %: {within} of {len(rows)} rows.",
            "",
            text,
            "",
            ANALYSIS,
            "",
            "Regenerate: `.venv/bin/python benchmarks/packet_crossval.py --write-doc`.",
            "",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
