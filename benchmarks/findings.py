"""What the flow-level model finds: regenerates docs/findings.md, docs/claims.md and the figures.

    .venv/bin/python benchmarks/findings.py            # about ten minutes on 2 shared cores

Four questions (all-to-all and permutation at scale, incast, a victim beside an incast, two
jobs). Each is asked twice:

- of the *mechanisms*, on one fabric: the RoCEv2 design of the question (or the textbook
  k=16 fat tree) with the routing, flow control and congestion control the question varies,
  so that the mechanism, not the technology's name, makes the difference;
- of the *technologies*, each on **its own designed fabric** for the same cluster (the
  designer's pick for ``fabric.technologies: [tech]``: QM9700 InfiniBand, the Tomahawk 6
  class RoCEv2 box, SN5600 Spectrum-X, the Jericho3-AI leaf and Ramon3 fabric elements for
  DDC, SN5600 with trimming for UEC) with its catalog mechanisms
  (``transport_for(technology, switch)``).

Sizes are chosen to keep the run to minutes here and are stated in docs/findings.md: the
technologies' all-to-all on 1,024 H100 (about a million flows), their permutation on 4,096
(where every design's rails cross its spines), the two jobs on 512 H100 (two 256-GPU jobs),
ECMP over 8 seeds for permutations and 3 for all-to-all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fabricplan.catalog.loader import load_catalog
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.model.scenario import TechnologyName
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.result import FlowSimResult
from fabricplan.sim.flow.routing import bytes_per_us
from fabricplan.sim.flow.transport import (
    CongestionControl,
    LinkFlowControl,
    LossRecovery,
    RoutingName,
    TransportSpec,
    transport_for,
)
from fabricplan.sim.traffic import (
    GpuLayout,
    StepSpec,
    Traffic,
    all_to_all,
    combine,
    for_job,
    gpu_flows,
    incast,
    permutation,
    place_jobs,
)
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import FabricGraph, fabric_graph

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
ECMP_SEEDS = 8
"""Seeds of every ECMP permutation (hash seeds and QP source ports)."""
ECMP_SEEDS_ALL_TO_ALL = 3
"""Seeds of an ECMP all-to-all (a million flows each; hashing averages, so the range is small)."""
MIB = 2**20
SCALE_GPUS = 1024
"""Cluster of the technologies' all-to-all, incast and victim runs."""
PERMUTATION_GPUS = 4096
"""Cluster of the technologies' permutation: large enough that every design's rails cross its
spines (a 256 x 400G leaf holds a whole rail of 128 nodes of 1,024 H100)."""
JOBS_GPUS = 512
"""Cluster of the two-jobs question (two jobs of half of it each)."""
FAN_IN = (2, 4, 8, 16, 32, 63)
"""Incast fan-ins: rail-0 GPUs of the first N nodes (63 of the 128 nodes of 1,024 H100)."""


@dataclass(frozen=True)
class Fabric:
    name: str
    short: str
    graph: FabricGraph
    layout: GpuLayout
    transport: TransportSpec
    nic_bytes_per_us: float
    """The NIC's line rate at RoCEv2's payload share: the common yardstick of every table."""
    switch: SwitchSpec
    tech: TechnologySpec
    design: FabricDesign


def _roce_v2_payload_share() -> float:
    tech = load_catalog().get_typed("roce_v2", TechnologySpec)
    return tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)


def fabric(name: str, short: str, spec: dict[str, Any], tech: TechnologyName) -> Fabric:
    valid = parse_spec(spec)
    design = design_fabric(valid, tech)
    graph = fabric_graph(design, valid)
    cluster = valid.spec.cluster
    transport = transport_for(valid.technologies[tech], valid.switches[tech])
    rate = float(bytes_per_us(cluster.nic_speed_gbps)) * _roce_v2_payload_share()
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    return Fabric(
        name,
        short,
        graph,
        layout,
        transport,
        rate,
        valid.switches[tech],
        valid.technologies[tech],
        design,
    )


TECHNOLOGIES: tuple[tuple[str, TechnologyName], ...] = (
    ("RoCEv2", "roce_v2"),
    ("InfiniBand", "infiniband"),
    ("Spectrum-X", "spectrum_x"),
    ("DDC", "ddc"),
    ("UEC", "uec"),
)
"""The technologies, each run on its own designed fabric with its catalog mechanisms."""


def variant(fab: Fabric, **switch_fields: Any) -> TransportSpec:
    """``fab``'s technology on its own switch with some switch fields changed (trimming off,
    a smaller buffer), everything else as designed."""
    return transport_for(fab.tech, fab.switch.model_copy(update=switch_fields))


def design_summary(fab: Fabric) -> str:
    """The designed fabric in a few words: switches per tier and what they are."""
    d = fab.design
    tiers = ", ".join(f"{t.switches} {t.name}" for t in d.tier_designs)
    element = next((line.item for line in d.bom if "fabric element" in line.role), None)
    parts = f"{d.switch_id}" + (f" + {element}" if element else "")
    return f"{parts}: {tiers}, {d.topology.replace('_', '-')}"


def with_mechanisms(
    fab: Fabric,
    routing: RoutingName | None = None,
    cc: CongestionControl | None = None,
    lfc: LinkFlowControl | None = None,
    recovery: LossRecovery = "ideal",
) -> TransportSpec:
    t = fab.transport
    return TransportSpec(
        routing or t.routing,
        lfc or t.link_flow_control,
        cc or t.congestion_control,
        t.payload_share,
        loss_recovery=recovery,
    )


def run(fab: Fabric, traffic: Traffic, transport: TransportSpec, seed: int = 0) -> FlowSimResult:
    return simulate(fab.graph, traffic, transport, seed=seed)


def ideal_us(fab: Fabric, traffic: Traffic) -> float:
    """The host-link bound: the busiest NIC port's bytes at RoCEv2's payload rate."""
    sent = np.bincount(traffic.src, weights=traffic.size_bytes, minlength=fab.graph.hosts)
    received = np.bincount(traffic.dst, weights=traffic.size_bytes, minlength=fab.graph.hosts)
    return float(max(sent.max(), received.max()) / fab.nic_bytes_per_us)


def k16() -> Fabric:
    return fabric(
        "k=16 fat tree (1,024 x 100G hosts, 3 tiers)",
        "k=16 fat tree",
        {
            "cluster": {
                "gpus": 1024,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "fat_tree",
                "management_ports": 0,
                "switch": {"roce_v2": {"ports": 16, "port_speed_gbps": 100}},
            },
        },
        "roce_v2",
    )


def h100(gpus: int, tech: TechnologyName, **fabric_fields: Any) -> Fabric:
    spec = {"cluster": {"gpus": gpus}, "fabric": {"technologies": [tech], **fabric_fields}}
    extra = ", ".join(f"{k} {v}" for k, v in fabric_fields.items())
    name = f"{gpus} H100, 8 x 400G, {tech}" + (f", {extra}" if extra else "")
    return fabric(name, f"{gpus} H100 " + (extra or "designer default"), spec, tech)


def own_designs(gpus: int, **fabric_fields: Any) -> dict[str, Fabric]:
    """Every technology on its own design of the same cluster."""
    return {label: h100(gpus, tech, **fabric_fields) for label, tech in TECHNOLOGIES}


def _mechanisms(t: TransportSpec) -> str:
    extra = ", trimming" if t.loss_recovery == "trim_nack" and not t.lossless else ""
    return f"{t.routing}, {t.link_flow_control}, {t.congestion_control}{extra}"


# ---------------------------------------------------------------------------------- question 1
def _seeds(pattern: str) -> int:
    return ECMP_SEEDS_ALL_TO_ALL if pattern == "all_to_all" else ECMP_SEEDS


def _patterns(gpus_scale: float) -> list[tuple[str, Any]]:
    size = 64 * MIB * gpus_scale
    return [
        ("all_to_all", lambda f: all_to_all(f.layout, size)),
        ("permutation", lambda f: permutation(f.layout, size, seed=0)),
    ]


def routing_at_scale() -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    fab = k16()
    for pattern, build in _patterns(1):
        traffic = build(fab)
        bound = ideal_us(fab, traffic)
        row: dict[str, Any] = {
            "fabric": fab.name,
            "short": fab.short,
            "pattern": pattern,
            "flows": traffic.flows,
        }
        for routing in ("static", "adaptive", "spray"):
            result = run(fab, traffic, with_mechanisms(fab, routing))
            row[routing] = result.transfer_us / bound
        row["ecmp"] = [
            run(fab, traffic, with_mechanisms(fab, "ecmp"), seed).transfer_us / bound
            for seed in range(_seeds(pattern))
        ]
        rows.append(row)
    tech_rows: list[dict[str, Any]] = []
    scales = {"all_to_all": own_designs(SCALE_GPUS), "permutation": own_designs(PERMUTATION_GPUS)}
    for label, fab in scales["all_to_all"].items():
        leaf = fab.design.tier("leaf")
        row = {
            "tech": label,
            "design": design_summary(fab),
            "mechanisms": _mechanisms(fab.transport),
            "payload_share": fab.transport.payload_share,
            "fabric_share": fab.transport.fabric_share,
            "up_ports": leaf.up_ports if leaf else 0,
            "down_ports": leaf.down_ports if leaf else 0,
            "recovery": fab.transport.adaptive_recovery,
        }
        row["design_permutation"] = design_summary(scales["permutation"][label])
        for pattern, build in _patterns(4):
            fab = scales[pattern][label]
            traffic = build(fab)
            bound = ideal_us(fab, traffic)
            hashed = fab.transport.routing == "ecmp" or (
                fab.transport.routing == "adaptive" and pattern == "permutation"
            )
            seeds = _seeds(pattern) if hashed else 1
            results = [run(fab, traffic, fab.transport, seed) for seed in range(seeds)]
            values = [r.transfer_us / bound for r in results]
            row[pattern] = values
            row[f"{pattern}_ms"] = float(np.median([r.transfer_us for r in results])) / 1e3
            if pattern == "all_to_all":
                row["latency_us"] = float(results[0].latency_us.max())
            row[f"{pattern}_flows"] = traffic.flows
            print(label, pattern, [round(v, 3) for v in values], flush=True)
        tech_rows.append(row)
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.2))
    labels = [f"{r['pattern']}\n{r['short']}" for r in rows]
    x = np.arange(len(rows))
    width = 0.2
    for i, routing in enumerate(("static", "adaptive", "spray")):
        ax.bar(x + (i - 1.5) * width, [r[routing] for r in rows], width, label=routing)
    med = [float(np.median(r["ecmp"])) for r in rows]
    lo = [med[i] - min(r["ecmp"]) for i, r in enumerate(rows)]
    hi = [max(r["ecmp"]) - med[i] for i, r in enumerate(rows)]
    ax.bar(x + 1.5 * width, med, width, yerr=[lo, hi], capsize=3, label="ecmp (median, range)")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("completion / host-link bound")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_title("Routing mechanisms on one fabric")
    ax.legend(fontsize=8)
    tx = np.arange(len(tech_rows))
    for i, pattern in enumerate(("all_to_all", "permutation")):
        values = [float(np.median(r[pattern])) for r in tech_rows]
        bx.bar(tx + (i - 0.5) * 0.35, values, 0.35, label=pattern)
    bx.set_xticks(tx, [r["tech"] for r in tech_rows], fontsize=8)
    bx.set_yscale("log")
    bx.axhline(1.0, color="grey", lw=0.8)
    bx.set_title("Each technology on its own design")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "flow_routing.png", dpi=120)
    plt.close(fig)
    return {"rows": rows, "tech_rows": tech_rows}


# ---------------------------------------------------------------------------------- question 2/3
def incast_case(fab: Fabric, senders: int, victim: bool) -> Traffic:
    """``senders`` rail-0 GPUs of the first nodes send 16 MiB to rail 0 of the last node; the
    victim runs from the next node's rail 0 to another node's rail 0 (a different receiver),
    sharing the senders' leaf."""
    gpn = fab.layout.gpus_per_node
    receiver = (fab.layout.nodes - 1) * gpn
    culprits = incast(fab.layout, senders, 16 * MIB, receiver=receiver)
    if not victim:
        return culprits
    src = np.array([senders * gpn])
    dst = np.array([(fab.layout.nodes - 2) * gpn])
    return combine(
        [culprits, gpu_flows(fab.layout, src, dst, 16 * MIB, StepSpec("victim", "victim"))]
    )


def incast_and_victims() -> dict[str, Any]:
    # SN5600 leaves (64 x 400G) split each rail of 128 nodes over two leaves, so the incast from
    # the first SU to the last node crosses the spines and the victim shares the senders'
    # uplinks (a 256 x 400G leaf would hold the whole rail and nothing would meet).
    fab = h100(SCALE_GPUS, "roce_v2", switch={"roce_v2": "sn5600"})
    fan_in = list(FAN_IN)
    modes: list[tuple[str, LinkFlowControl, CongestionControl, LossRecovery]] = [
        ("lossy, no CC", "none", "none", "timeout"),
        ("lossy, no CC, trimming", "none", "none", "trim_nack"),
        ("lossless, no CC", "pfc", "none", "ideal"),
        ("lossless + DCQCN", "pfc", "dcqcn", "ideal"),
        ("lossless + IB CC", "credit", "ib_cc", "ideal"),
    ]
    paused: dict[str, list[float]] = {m[0]: [] for m in modes}
    victim: dict[str, list[float]] = {}
    worst: dict[str, list[float]] = {}
    incast_time: dict[str, list[float]] = {m[0]: [] for m in modes}
    line = 16 * MIB / fab.nic_bytes_per_us
    for routing, seeds in (("adaptive", 1), ("ecmp", ECMP_SEEDS)):
        for name, lfc, cc, recovery in modes:
            key = f"{name} ({routing})"
            victim[key], worst[key] = [], []
            for n in fan_in:
                shares = []
                for seed in range(seeds):
                    transport = with_mechanisms(fab, routing, cc, lfc, recovery)
                    result = run(fab, incast_case(fab, n, True), transport, seed)
                    transfer = result.finish_us - result.latency_us
                    shares.append(line / float(transfer[-1]))
                    if routing == "adaptive":
                        paused[name].append(float(result.link_paused_us.sum()) / 1e3)
                        incast_time[name].append(float(transfer[:-1].max()) / (n * line))
                victim[key].append(float(np.median(shares)))
                worst[key].append(min(shares))
    designs = own_designs(SCALE_GPUS)
    uec = designs["UEC"]
    small = (
        uec.switch.buffer_bytes.model_copy(update={"value": 16e6})
        if uec.switch.buffer_bytes
        else None
    )
    runs: list[tuple[str, Fabric, TransportSpec]] = [
        (label, f, f.transport) for label, f in designs.items()
    ] + [
        ("UEC without trimming", uec, variant(uec, packet_trimming=False)),
        ("UEC, 16 MB buffer", uec, variant(uec, buffer_bytes=small)),
        (
            "UEC without trimming, 16 MB buffer",
            uec,
            variant(uec, packet_trimming=False, buffer_bytes=small),
        ),
    ]
    for label, own, transport in runs:
        key = f"{label}: {_mechanisms(transport)}"
        victim[key], paused[key], incast_time[key] = [], [], []
        own_line = 16 * MIB / own.nic_bytes_per_us
        for n in fan_in:
            result = run(own, incast_case(own, n, True), transport)
            transfer = result.finish_us - result.latency_us
            victim[key].append(own_line / float(transfer[-1]))
            paused[key].append(float(result.link_paused_us.sum()) / 1e3)
            incast_time[key].append(float(transfer[:-1].max()) / (n * own_line))
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for i, (name, values) in enumerate(paused.items()):
        if max(values) > 0:  # a lossy fabric never pauses: nothing to draw on a log axis
            a.plot(fan_in, values, marker="o", color=f"C{i}", label=name)
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("incast fan-in N (16 MiB each)")
    a.set_ylabel("paused link time (link-ms; lossy: 0)")
    a.set_title("N-to-1 incast: pause with and without CC")
    a.legend(fontsize=8)
    for i, key in enumerate(victim):
        color = f"C{i % 4}"
        if not key.endswith(")"):  # a technology with its own mechanisms
            b.plot(fan_in, victim[key], marker="s", ls=":", color=f"C{4 + i % 6}", label=key)
        elif "adaptive" in key:
            b.plot(fan_in, victim[key], marker="o", color=color, label=key)
        else:
            b.plot(
                fan_in,
                victim[key],
                marker="x",
                ls="--",
                color=color,
                label=key.replace("(ecmp)", f"(ecmp, median and worst of {ECMP_SEEDS})"),
            )
            b.fill_between(fan_in, worst[key], victim[key], color=color, alpha=0.12)
    b.set_xscale("log", base=2)
    b.set_xlabel("incast fan-in N")
    b.set_ylabel("victim throughput / line rate")
    b.set_title("A victim flow sharing the senders' leaf")
    b.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(FIGURES / "flow_incast_victim.png", dpi=120)
    plt.close(fig)
    return {
        "fabric": fab.name,
        "designs": {label: design_summary(f) for label, f in designs.items()},
        "rail_under_one_leaf": [
            label for label, f in designs.items() if f.graph.hosts_per_leaf >= f.layout.nodes
        ],
        "uec_switch": uec.switch.id,
        "uec_buffer_mb": (uec.switch.buffer_bytes.value if uec.switch.buffer_bytes else 0.0) / 1e6,
        "fan_in": fan_in,
        "paused_link_ms": paused,
        "victim": victim,
        "victim_worst": worst,
        "incast_over_bound": incast_time,
        "switch": fab.switch.id,
        "buffer_mb": (fab.switch.buffer_bytes.value if fab.switch.buffer_bytes else 0.0) / 1e6,
    }


# ---------------------------------------------------------------------------------- question 4
def _oversubscription(fab: Fabric) -> str:
    leaf = fab.design.tier("leaf")
    if leaf is None or not leaf.up_ports:
        return "one leaf"
    ratio = leaf.down_ports / leaf.up_ports
    return f"{ratio:.2g}:1"


def two_jobs() -> dict[str, Any]:
    designs = own_designs(JOBS_GPUS, topology="fat_tree", oversubscription=2)
    roce = designs["RoCEv2"]
    fab = roce
    gpus = fab.layout.gpus // 2
    rows: list[dict[str, Any]] = []
    variants: list[tuple[str, Fabric, TransportSpec]] = [
        ("RoCEv2 (ecmp)", roce, roce.transport),
        ("RoCEv2, adaptive (ideal split)", roce, with_mechanisms(roce, "adaptive")),
    ] + [(label, f, f.transport) for label, f in designs.items() if label != "RoCEv2"]
    for routing, fab, transport in variants:
        for placement in ("packed", "fragmented"):
            ranks = place_jobs(fab.layout, [gpus, gpus], placement, seed=1)  # type: ignore[arg-type]
            jobs = [
                for_job(all_to_all(fab.layout, 64 * MIB, r), i, f"job{i} ")
                for i, r in enumerate(ranks)
            ]
            alone = run(fab, jobs[0], transport).completion_us
            shared = run(fab, combine(jobs), transport)
            times = {name: f - s for (_, name), (s, f) in shared.collective_times().items()}
            rows.append(
                {
                    "routing": routing,
                    "fabric": _oversubscription(fab),
                    "design": design_summary(fab),
                    "placement": placement,
                    "alone_us": alone,
                    "job0_us": times["job0 all_to_all"],
                    "job1_us": times["job1 all_to_all"],
                }
            )
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 4))
    labels = [f"{r['routing']}\n{r['placement']}" for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.25, [r["alone_us"] / 1e3 for r in rows], 0.25, label="job 0 alone")
    ax.bar(x, [r["job0_us"] / 1e3 for r in rows], 0.25, label="job 0 shared")
    ax.bar(x + 0.25, [r["job1_us"] / 1e3 for r in rows], 0.25, label="job 1 shared")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("all_to_all completion (ms)")
    ax.set_title(f"Two {gpus}-GPU all_to_all jobs, each technology on its own 2:1 design")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "flow_two_jobs.png", dpi=120)
    plt.close(fig)
    return {"fabric": roce.name, "gpus": gpus, "rows": rows}


def _two_jobs_text(rows: list[dict[str, Any]]) -> list[str]:
    by = {(r["routing"], r["placement"]): r for r in rows}
    out = ["What it shows, per routing or technology:", ""]
    for routing in dict.fromkeys(r["routing"] for r in rows):
        packed, frag = by[(routing, "packed")], by[(routing, "fragmented")]
        out.append(
            f"- {routing} ({packed['fabric']}): alone, the fragmented job takes"
            f" {frag['alone_us'] / packed['alone_us']:.2f}x the packed one's time; sharing the"
            f" fabric stretches the packed job by {packed['job0_us'] / packed['alone_us']:.2f}x"
            f" and the fragmented one by {frag['job0_us'] / frag['alone_us']:.2f}x."
        )
    out += [
        "",
        "Fragmented jobs put both jobs' hosts under every leaf, so their cross-leaf traffic",
        "meets on the same uplinks; packed jobs keep most of their traffic under their own",
        "leaves. Where the designer builds 2:1, the uplinks are the shared bottleneck and the",
        "stretch is the mechanism's to win or lose: hashing loses to collisions, adaptive",
        "routing and spraying pool the trunk. The scheduled fabric (DDC) is built",
        "non-blocking whatever is asked (FP627: its leaves have fixed fabric ports), so its",
        "rows are not the same contention and say what the extra fabric ports buy.",
    ]
    return out


def _uec_header_bytes() -> float:
    return load_catalog().get_typed("uec", TechnologySpec).header_bytes.value


def _victim_text(q23: dict[str, Any]) -> list[str]:
    """What the victim rows show, from their numbers."""
    victim, n = q23["victim"], q23["fan_in"][-1]

    def worst(start: str) -> float:
        return min(victim[next(k for k in victim if k.startswith(start))])

    techs = [k for k in victim if not k.endswith(")")]
    listed = ", ".join(f"{k.split(':')[0]} {min(victim[k]):.2f}" for k in techs)
    return [
        "What it shows, at the worst fan-in: a lossless fabric without congestion control keeps"
        f" the victim at {worst('lossless, no CC (adaptive)'):.2f} of line rate with adaptive"
        f" routing (the incast flows' share is 1/{n} = {1 / n:.3f}) and"
        f" {worst('lossless, no CC (ecmp)'):.2f} with ECMP (median of the seeds): once it"
        " shares a paused link with the incast it waits behind it, which adaptive routing"
        " makes certain (it spreads the incast over every uplink) and ECMP a matter of the"
        " hash. With DCQCN the victim keeps"
        f" {worst('lossless + DCQCN (adaptive)'):.2f}, with IB CC"
        f" {worst('lossless + IB CC (adaptive)'):.2f}: it loses only the settling time, a"
        " share of a 16 MiB transfer.",
        "",
        f"Each technology on its own design, the victim's worst share: {listed}. Egress"
        " scheduling (DDC) pauses nothing and never holds a flow behind another egress port's,",
        "so its victim keeps line rate by mechanism; the lossless technologies keep what their",
        "congestion control leaves during its settling time, on their own designs' paths; the",
        "lossy ones (UEC) lose only their larger headers unless a queue overflows.",
    ] + (
        [
            "",
            f"On {' and '.join(q23['rail_under_one_leaf'])}'s own design one leaf holds a whole"
            " rail, so the incast never crosses a spine and the victim shares no link with it:",
            "its 1.00 is the design's, not its congestion control's.",
        ]
        if q23["rail_under_one_leaf"]
        else []
    )


def _lossy_text(q23: dict[str, Any]) -> list[str]:
    """What the lossy rows show, from their numbers."""
    fan_in, over, victim = q23["fan_in"], q23["incast_over_bound"], q23["victim"]

    def key(table: dict[str, list[float]], start: str) -> list[float]:
        return table[next(k for k in table if k.startswith(start))]

    def overflowed(trimmed: str, dropped: str) -> list[int]:
        a, b = key(over, trimmed), key(over, dropped)
        return [n for n, x, y in zip(fan_in, a, b, strict=True) if y > x * 1.001]

    design = overflowed("UEC:", "UEC without trimming:")
    shallow = overflowed("UEC, 16 MB", "UEC without trimming, 16 MB")

    def at(ns: list[int]) -> str:
        return "no fan-in up to 63" if not ns else "fan-in " + ", ".join(map(str, ns))

    drop_victim = min(key(victim, "lossy, no CC (adaptive)"))
    trim_victim = min(key(victim, "lossy, no CC, trimming (adaptive)"))
    return [
        "Lossy rows: without congestion control every overload overflows, so every flow",
        "through an overflowing queue pays one recovery. Dropped, the incast of N = 2 takes"
        f" {key(over, 'lossy, no CC')[0]:.2f} x N S / B (the 1 ms timeout on a"
        " 0.7 ms transfer); trimmed,"
        f" {key(over, 'lossy, no CC, trimming')[0]:.2f} x."
        + (
            f" A victim that shares an overflowing queue keeps {drop_victim:.2f} of line rate"
            f" at the worst fan-in with drops and {trim_victim:.2f} with trimming."
            if drop_victim < 0.99
            else " The victim (adaptive routing) shares no overflowing queue."
        )
        + " UEC (NSCC settles in two round trips), on its own design: with its switch's buffer",
        f"({q23['uec_switch']}, {q23['uec_buffer_mb']:.0f} MB, half per congested port)"
        f" {at(design)} overflows before NSCC settles"
        + (", so trimming changes nothing there" if not design else "")
        + "; with a 16 MB buffer"
        f" {at(shallow)} overflows, and there trimming keeps the incast at"
        f" {max(key(over, 'UEC, 16 MB')):.2f} x N S / B against"
        f" {max(key(over, 'UEC without trimming, 16 MB')):.2f} x dropped. The victim of a UEC",
        "fabric never shares an overflowing queue here and keeps line rate less the larger",
        "headers.",
    ]


def _fmt_row(values: list[float]) -> str:
    return " | ".join(f"{v:.2f}" for v in values)


def _med(values: list[float]) -> float:
    return float(np.median(values))


def _technology_section(rows: list[dict[str, Any]]) -> list[str]:
    """The technologies on their own designs, and what each mechanism buys, from the numbers."""
    by = {r["tech"]: r for r in rows}
    out = [
        f"### Each technology on its own design (H100, 8 x 400G: all-to-all on {SCALE_GPUS:,},"
        f" permutation on {PERMUTATION_GPUS:,})",
        "",
        "The designer's fabric for `fabric.technologies: [tech]` and the technology's catalog",
        "mechanisms (routing, flow control, congestion control, trimming). The permutation is",
        "rail-aligned (each NIC sends to one NIC of its own rail), so it needs a cluster whose",
        "rails do not fit under one leaf: at 1,024 H100 the Tomahawk 6 class leaf (256 x 400G)",
        "holds a whole rail and nothing would cross a spine. Each flow sends 256 MiB.",
        "The bound is the busiest NIC's bytes at RoCEv2's payload rate for all rows, so",
        "a technology with larger headers sits above 1.00 by its header tax. ECMP rows are the",
        f"median over {ECMP_SEEDS} seeds (permutation) or {ECMP_SEEDS_ALL_TO_ALL} (all-to-all),",
        "and so are adaptive permutations (the hashed placement adaptive routing corrects is",
        "seeded; a million all-to-all flows hash the same on any seed, so one is run).",
        "",
        "| technology | design (all_to_all) | design (permutation) | mechanisms |"
        " all_to_all / bound | permutation / bound | all_to_all (ms) | permutation (ms) |"
        f" longest path latency, {SCALE_GPUS:,} H100 (µs) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['tech']} | {r['design']} | {r['design_permutation']} | {r['mechanisms']} |"
            f" {_med(r['all_to_all']):.2f} | {_med(r['permutation']):.2f} |"
            f" {r['all_to_all_ms']:.1f} | {r['permutation_ms']:.1f} | {r['latency_us']:.2f} |"
        )
    roce, ib, sx, ddc, uec = (by[t] for t in ("RoCEv2", "InfiniBand", "Spectrum-X", "DDC", "UEC"))
    speed_up = ddc["up_ports"] / ddc["down_ports"] if ddc["down_ports"] else 1.0
    fabric_room = speed_up * ddc["fabric_share"] / ddc["payload_share"]
    out += [
        "",
        "What each mechanism buys, on these numbers:",
        "",
        f"- **Per-flow ECMP (RoCEv2)**: the permutation takes {_med(roce['permutation']):.2f} x"
        " the bound"
        + (" (hash collisions on the uplinks;" if _med(roce["permutation"]) > 1.05 else " (")
        + f" range {min(roce['permutation']):.2f}-{max(roce['permutation']):.2f} over the"
        f" seeds), all-to-all {_med(roce['all_to_all']):.2f} x.",
        f"- **Switch-local per-packet adaptive routing (InfiniBand)** wins back"
        f" {ib['recovery']:.0%} of what hashing loses on each trunk (Geoffray and Hoefler,"
        " HOTI 2008: 38 % static, 77 % adaptive; `sim/flow/adaptive.py`): permutation"
        f" {_med(ib['permutation']):.2f} x, all-to-all {_med(ib['all_to_all']):.2f} x. A trunk"
        " hashing already balances loses nothing to it, so all-to-all is never slower than",
        "  ECMP's.",
        f"- **Spectrum-X's adaptive routing with SuperNIC reordering** wins back"
        f" {sx['recovery']:.0%} (NVIDIA's own 95 % against 60 %, a vendor figure):"
        f" permutation {_med(sx['permutation']):.2f} x, all-to-all"
        f" {_med(sx['all_to_all']):.2f} x; its telemetry CC matters in questions 2 and 3.",
        f"- **Cell spraying with VOQ scheduling (DDC)**: every flow's cells go over all"
        f" {ddc['up_ports']} fabric links of its leaf, so no collision is left: permutation"
        f" {_med(ddc['permutation']):.2f} x, all-to-all {_med(ddc['all_to_all']):.2f} x. The"
        f" cells carry {ddc['fabric_share']:.1%} payload against {ddc['payload_share']:.1%} on"
        f" a host link, and the leaf's {ddc['up_ports']}:{ddc['down_ports']} fabric speed-up"
        f" ({speed_up:.2f}) leaves the fabric {fabric_room:.2f}x the host ports' payload"
        + (
            ", so the cell tax never reaches the hosts here."
            if fabric_room >= 1
            else ", so the cell tax, not the hosts, sets the pace."
        )
        + " The price is latency: the request/grant",
        "  round trip through a fabric element before a flow's first cell, and the leaves' deep-"
        f"buffer pipelines, {ddc['latency_us']:.2f} µs on the longest path against"
        f" {roce['latency_us']:.2f} µs (RoCEv2) and {ib['latency_us']:.2f} µs (InfiniBand);"
        " nothing at 256 MiB, a share of every small message.",
        f"- **Packet spraying with out-of-order delivery (UEC)**: no collision either"
        f" (permutation {_med(uec['permutation']):.2f} x, all-to-all"
        f" {_med(uec['all_to_all']):.2f} x); what it pays is its larger header"
        f" ({_uec_header_bytes():.0f} B per packet: {uec['payload_share']:.1%} payload against"
        f" RoCEv2's {roce['payload_share']:.1%}); trimming matters in questions 2 and 3.",
    ]
    return out


def write(q1: dict[str, Any], q23: dict[str, Any], q4: dict[str, Any], wall_s: float) -> None:
    lines = [
        "# What the flow-level model finds",
        "",
        "Generated by `benchmarks/findings.py` (do not edit by hand; rerun it). Every number is",
        'the flow-level model\'s (docs/models.md, "Flow-level simulator"), on fabrics from the',
        "designer or the textbook k=16 fat tree. The model states what its mechanisms give; the",
        "packet-level simulator is the yardstick for the deviations listed there. Each question",
        "is asked twice: of the mechanisms (routing, flow control and congestion control set per",
        "row on one fabric, so that the mechanism, not the technology's name, makes the",
        "difference) and of the technologies, each on its own designed fabric for the same",
        "cluster with its catalog mechanisms (the DDC rows run on the Jericho3-AI leaves and",
        "Ramon3 fabric elements the designer builds for it).",
        "",
        "Sizes are kept small enough to run here (`benchmarks/findings.py`, module docstring):",
        f"the technologies' all-to-all, incast and victim on {SCALE_GPUS:,} H100, their"
        f" permutation on {PERMUTATION_GPUS:,},",
        f"the two jobs on {JOBS_GPUS} H100.",
        "",
        "## 1. All-to-all and permutation at scale: static, ECMP, adaptive, spraying",
        "",
        "![routing](figures/flow_routing.png)",
        "",
        "Completion over the host-link bound (the busiest NIC's bytes at its payload rate; 1.00 =",
        f"line rate). ECMP: median and range over {ECMP_SEEDS} seeds for the permutation and"
        f" {ECMP_SEEDS_ALL_TO_ALL}",
        "for the all-to-all (hash seeds and QP source ports). `adaptive` here is the ideal split",
        "(no implementation's limit), the technologies' rows below use their own.",
        "",
        "| fabric | pattern | flows | static (D-mod-K) | adaptive | spray | ECMP median | ECMP min"
        " | ECMP max |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in q1["rows"]:
        ecmp = r["ecmp"]
        lines.append(
            f"| {r['fabric']} | {r['pattern']} | {r['flows']:,} | "
            + _fmt_row(
                [
                    r["static"],
                    r["adaptive"],
                    r["spray"],
                    float(np.median(ecmp)),
                    min(ecmp),
                    max(ecmp),
                ]
            )
            + " |"
        )
    lines += [
        "",
        "What it shows: with a million small flows (all-to-all), hashing averages out and every",
        "routing stays close to the host bound; with one large flow per NIC (permutation),",
        "per-flow ECMP collides (several flows on one uplink) and the collision, not the",
        "fabric's bisection, sets the completion time, and its size changes with the seed. Ideal",
        "adaptive routing and even spraying reach the bound on a non-blocking fat tree; static",
        "D-mod-K sits in between on a random permutation (it is collision-free only for shifts).",
        "",
        *_technology_section(q1["tech_rows"]),
    ]
    lines += [
        "",
        "## 2. Incast with and without congestion control",
        "",
        "![incast and victim](figures/flow_incast_victim.png)",
        "",
        f"Fabric of the mechanism rows: {q23['fabric']}. N rail-0 GPUs of SU 0 send 16 MiB each"
        " to rail 0 of the last",
        "node (another SU, so the incast crosses the spines). Left: link time spent paused",
        "(PFC) or credit-stalled, adaptive routing.",
        "",
        "| fan-in N | " + " | ".join(str(n) for n in q23["fan_in"]) + " |",
        "|---|" + "---:|" * len(q23["fan_in"]),
    ]
    for name, values in q23["paused_link_ms"].items():
        lines.append(f"| paused link-ms, {name} | " + _fmt_row(values) + " |")
    for name, values in q23["incast_over_bound"].items():
        lines.append(f"| incast time / (N S / B), {name} | " + _fmt_row(values) + " |")
    lines += [
        "",
        "What it shows: the incast itself always takes N S / B (the receiver's link is the",
        "bottleneck whatever the transport). Without congestion control a lossless fabric",
        "pauses every link up the congestion tree for the whole incast; with DCQCN or IB CC",
        "the pauses last only while the senders' rates come down (a few cuts of at most half",
        "each, one per 4 µs), so the paused time grows with log N, not with N x S.",
        "",
        "## 3. A victim flow next to an incast",
        "",
        "Right panel above: a flow from a node on the senders' leaf to a different receiver.",
        "Throughput over line rate:",
        "",
        "| fan-in N | " + " | ".join(str(n) for n in q23["fan_in"]) + " |",
        "|---|" + "---:|" * len(q23["fan_in"]),
    ]
    for key, values in q23["victim"].items():
        label = key.replace("(ecmp)", f"(ecmp, median of {ECMP_SEEDS} seeds)")
        lines.append(f"| {label} | " + _fmt_row(values) + " |")
    for key, values in q23["victim_worst"].items():
        if "ecmp" in key:
            lines.append(
                f"| {key.replace('(ecmp)', '(ecmp, worst seed)')} | " + _fmt_row(values) + " |"
            )
    lines += [
        "",
        "Rows named after a technology run its catalog mechanisms (routing, link flow",
        "control, congestion control, trimming) on its own design of the same cluster"
        f" ({', '.join(f'{k}: {v}' for k, v in q23['designs'].items())}). Lossy rows count the",
        "overflow's recovery: a retransmission timeout (1,048.576 µs) where switches drop, one",
        "round trip where they trim (`sim/flow/transport.py`).",
        "",
        *_victim_text(q23),
        "",
        *_lossy_text(q23),
        "",
        "## 4. Two jobs sharing a fabric",
        "",
        "![two jobs](figures/flow_two_jobs.png)",
        "",
        f"Fabrics: each technology's own design of {JOBS_GPUS} H100 (8 x 400G) asked for"
        " `topology: fat_tree, oversubscription: 2`",
        f"(the RoCEv2 one: {q4['fabric']}). Two {q4['gpus']}-GPU jobs each run an all_to_all of"
        " 64 MiB per rank, placed",
        "on whole nodes, packed (consecutive nodes) or fragmented (nodes drawn at random).",
        "",
        "| routing or technology | leaf down:up as built | design | placement |"
        " job 0 alone (ms) | job 0 shared (ms) | job 1 shared (ms) |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for r in q4["rows"]:
        lines.append(
            f"| {r['routing']} | {r['fabric']} | {r['design']} | {r['placement']} |"
            f" {r['alone_us'] / 1e3:.2f} |"
            f" {r['job0_us'] / 1e3:.2f} | {r['job1_us'] / 1e3:.2f} |"
        )
    lines += [
        "",
        *_two_jobs_text(q4["rows"]),
        "",
        f"All four questions: {wall_s:.0f} s of wall time on the machine of docs/performance.md.",
        "",
    ]
    (ROOT / "docs" / "findings.md").write_text("\n".join(lines), encoding="utf-8")


CLAIMS: tuple[tuple[str, str, str], ...] = (
    (
        "Spectrum-X",
        "1.6x AI networking performance over traditional Ethernet",
        "NVIDIA, Spectrum-X launch with Dell, HPE and Lenovo servers, 2023-11-21 (reported by"
        " Network World, 'Nvidia launches Spectrum-X Ethernet stack for AI workloads',"
        " 2023-11-21)",
    ),
    (
        "Spectrum-X",
        "95 % data throughput with Spectrum-X against 60 % for standard Ethernet (xAI Colossus,"
        " 100,000 Hopper GPUs)",
        "NVIDIA newsroom, 'NVIDIA Ethernet Networking Accelerates World's Largest AI"
        " Supercomputer, Built by xAI', 2024-10-28",
    ),
    (
        "DDC (Jericho3-AI)",
        "about 10 % better NCCL performance (job completion) than InfiniBand",
        "Broadcom Jericho3-AI launch chart, as reported by ServeTheHome, 'Broadcom Jericho3-AI"
        " Ethernet Switch Launched Saying NVIDIA Infiniband is Bad for AI', 2023-04-11",
    ),
    (
        "UEC",
        "packet trimming replaces a silent drop and its retransmission timeout with an explicit"
        " signal and a fast retransmission",
        "Ultra Ethernet Consortium, UE Specification 1.0, 2025-06-11 (packet trimming);"
        " demonstrated (not measured for speed) in the EANTC interop test report 2026",
    ),
)
"""Vendor claims, listed beside what the model gives; never an input to it (one exception,
said in the table: the Spectrum-X adaptive-routing efficiency of ``sim/mechanism.py`` is the
xAI figure)."""


def write_claims(q1: dict[str, Any], q23: dict[str, Any], q4: dict[str, Any]) -> None:
    tech = {r["tech"]: r for r in q1["tech_rows"]}
    where = (
        f"each on its own design of H100 (all_to_all {SCALE_GPUS:,},"
        f" permutation {PERMUTATION_GPUS:,})"
    )

    def ratio(a: str, b: str) -> str:
        return "; ".join(
            f"{pattern}: {_med(tech[a][pattern]) / _med(tech[b][pattern]):.2f}x"
            for pattern in ("all_to_all", "permutation")
        )

    throughput = "; ".join(
        f"{pattern}: {1 / _med(tech['Spectrum-X'][pattern]):.0%} against"
        f" {1 / _med(tech['RoCEv2'][pattern]):.0%}"
        for pattern in ("all_to_all", "permutation")
    )
    jobs = {(r["routing"], r["placement"]): r for r in q4["rows"]}
    ddc_jobs = "; ".join(
        f"two jobs {placement}, job 0 shared:"
        f" {jobs[('InfiniBand', placement)]['job0_us'] / jobs[('DDC', placement)]['job0_us']:.2f}x"
        for placement in ("packed", "fragmented")
    )
    over = q23["incast_over_bound"]

    def pair(trimmed: str, dropped: str) -> str:
        a_key = next(k for k in over if k.startswith(trimmed))
        b_key = next(k for k in over if k.startswith(dropped))
        return ", ".join(
            f"N={n}: {a:.3f} vs {b:.3f}"
            for n, a, b in zip(q23["fan_in"], over[a_key], over[b_key], strict=True)
        )

    trim = (
        f"UEC on its own design ({q23['uec_switch']}, {q23['uec_buffer_mb']:.0f} MB) "
        + pair("UEC:", "UEC without trimming:")
        + "; with a 16 MB buffer "
        + pair("UEC, 16 MB", "UEC without trimming, 16 MB")
        + "; a lossy RoCEv2 fabric without CC ("
        + q23["fabric"]
        + ") "
        + pair("lossy, no CC, trimming", "lossy, no CC")
    )
    model = [
        f"RoCEv2 (ECMP, median of seeds) over Spectrum-X completion, {where}: "
        + ratio("RoCEv2", "Spectrum-X"),
        f"Spectrum-X against RoCEv2 ECMP, completion bound over completion, {where}: "
        + throughput
        + ". Not an independent check: the model's Spectrum-X adaptive routing wins back"
        " (0.95 - 0.60) / (1 - 0.60) of what hashing loses, this very claim's figures"
        " (`model/load_balancing.py`, basis vendor)",
        f"InfiniBand over DDC completion, {where} (DDC on Jericho3-AI leaves and Ramon3"
        " fabric elements): "
        + ratio("InfiniBand", "DDC")
        + "; "
        + ddc_jobs
        + f" ({JOBS_GPUS} H100 asked 2:1; DDC is built non-blocking, FP627, so the two-jobs"
        " ratio is not the same contention). The InfiniBand side is its switch-local"
        " adaptive routing winning back 63 % of what hashing loses (Geoffray and Hoefler"
        " 2008, an estimate for Quantum), so the ratio measures that estimate as much as"
        " InfiniBand",
        "incast time over N S / B with trimming vs without (fan-in N): " + trim,
    ]
    lines = [
        "# Vendor claims beside the model",
        "",
        "Generated by `benchmarks/findings.py` with docs/findings.md (do not edit by hand;",
        "rerun it). Each claim is quoted as its source states it, with its date; the model's",
        "figure is what the flow-level model gives for the nearest setup docs/findings.md",
        "runs, each technology with its own mechanisms on its own designed fabric. The claims",
        "are never",
        "used to set a model constant, with the one exception the table says. A vendor's setup",
        "(workload, scale, the baseline's tuning) is rarely published, so a difference says",
        "where to look, not who is right.",
        "",
        "| technology | claim | source (date) | what the model gives |",
        "|---|---|---|---|",
    ]
    for (tech, claim, source), figure in zip(CLAIMS, model, strict=True):
        lines.append(f"| {tech} | {claim} | {source} | {figure} |")
    lines.append("")
    (ROOT / "docs" / "claims.md").write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    FIGURES.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    q1 = routing_at_scale()
    print("routing done", round(time.perf_counter() - t0), flush=True)
    q23 = incast_and_victims()
    print("incast done", round(time.perf_counter() - t0), flush=True)
    q4 = two_jobs()
    print("jobs done", round(time.perf_counter() - t0), flush=True)
    write(q1, q23, q4, time.perf_counter() - t0)
    write_claims(q1, q23, q4)


if __name__ == "__main__":
    main()
