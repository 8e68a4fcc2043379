"""What the flow-level model finds: regenerates docs/findings.md and its figures.

    .venv/bin/python benchmarks/findings.py            # a few minutes on 2 cores

Four questions, each on a fabric from the designer (or the textbook k=16 fat tree) with the
technologies' own mechanisms, plus the routing and congestion-control overrides the question
asks about. The text states what the model finds; it is not a verdict on a technology.

The technologies without a design of their own yet (Spectrum-X, DDC, UEC; the spec cannot name
them until the designer learns them) run on the RoCEv2 design of each question: the same
topology, links and latencies, with the catalog technology's mechanisms
(``transport_for(technology, switch)``) on the switch each needs (Spectrum-X: the Spectrum-4
SN5600, whose adaptive-routing implementation it names; InfiniBand: the Quantum-2 QM9700; DDC:
the design's switch, since Jericho3-AI is not in the catalog yet; UEC: the design's switch
with packet trimming on, as UEC's profile requires).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fabricplan.catalog.loader import load_catalog
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
MIB = 2**20


@dataclass(frozen=True)
class Fabric:
    name: str
    short: str
    graph: FabricGraph
    layout: GpuLayout
    transport: TransportSpec
    nic_bytes_per_us: float
    switch: SwitchSpec


def fabric(name: str, short: str, spec: dict[str, Any], tech: TechnologyName) -> Fabric:
    valid = parse_spec(spec)
    graph = fabric_graph(design_fabric(valid, tech), valid)
    cluster = valid.spec.cluster
    transport = transport_for(valid.technologies[tech], valid.switches[tech])
    rate = float(bytes_per_us(cluster.nic_speed_gbps)) * transport.payload_share
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    return Fabric(name, short, graph, layout, transport, rate, valid.switches[tech])


TECHNOLOGIES: tuple[tuple[str, str, str | None, bool], ...] = (
    # (label, catalog technology, catalog switch or None for the design's, trimming switch)
    ("InfiniBand", "infiniband", "qm9700", False),
    ("Spectrum-X", "spectrum_x", "sn5600", False),
    ("DDC", "ddc", None, False),
    ("UEC", "uec", None, True),
)
"""The technologies run with their own mechanisms on each question's RoCEv2 design."""


def tech_transport(fab: Fabric, tech_id: str, switch_id: str | None, trims: bool) -> TransportSpec:
    """``tech_id``'s catalog mechanisms on ``fab``'s topology (see the module docstring)."""
    catalog = load_catalog()
    tech = catalog.get_typed(tech_id, TechnologySpec)
    switch = fab.switch if switch_id is None else catalog.get_typed(switch_id, SwitchSpec)
    if trims:
        switch = switch.model_copy(update={"packet_trimming": True})
    return transport_for(tech, switch)


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
    """The host-link bound: the busiest NIC port's bytes at its payload rate."""
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


def _mechanisms(t: TransportSpec) -> str:
    extra = ", trimming" if t.loss_recovery == "trim_nack" and not t.lossless else ""
    return f"{t.routing}, {t.link_flow_control}, {t.congestion_control}{extra}"


# ---------------------------------------------------------------------------------- question 1
def routing_at_scale() -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    cases = [
        (k16(), "all_to_all", lambda f: all_to_all(f.layout, 64 * MIB)),
        (k16(), "permutation", lambda f: permutation(f.layout, 64 * MIB, seed=0)),
        (
            h100(1024, "roce_v2", topology="fat_tree", tiers=3),
            "all_to_all",
            lambda f: all_to_all(f.layout, 256 * MIB),
        ),
        (
            h100(1024, "roce_v2", topology="fat_tree", tiers=3),
            "permutation",
            lambda f: permutation(f.layout, 256 * MIB, seed=0),
        ),
    ]
    for fab, pattern, build in cases:
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
        ecmp = [
            run(fab, traffic, with_mechanisms(fab, "ecmp"), seed).transfer_us / bound
            for seed in range(ECMP_SEEDS)
        ]
        row["ecmp"] = ecmp
        row["tech"] = {
            label: run(fab, traffic, tech_transport(fab, tech, switch, trims)).transfer_us / bound
            for label, tech, switch, trims in TECHNOLOGIES
        }
        rows.append(row)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    labels = [f"{r['pattern']}\n{r['short']}" for r in rows]
    x = np.arange(len(rows))
    width = 0.2
    for i, routing in enumerate(("static", "adaptive", "spray")):
        ax.bar(x + (i - 1.5) * width, [r[routing] for r in rows], width, label=routing)
    med = [float(np.median(r["ecmp"])) for r in rows]
    lo = [med[i] - min(r["ecmp"]) for i, r in enumerate(rows)]
    hi = [max(r["ecmp"]) - med[i] for i, r in enumerate(rows)]
    ax.bar(
        x + 1.5 * width,
        med,
        width,
        yerr=[lo, hi],
        capsize=3,
        label=f"ecmp (median, min-max of {ECMP_SEEDS} seeds)",
    )
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("completion / host-link bound")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_title("All-to-all and permutation: routing on the same fabric")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "flow_routing.png", dpi=120)
    plt.close(fig)
    return {"rows": rows}


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
    fab = h100(1024, "roce_v2")
    fan_in = [2, 4, 8, 16, 32, 63]
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
    technologies = [
        *TECHNOLOGIES,
        ("UEC without trimming", "uec", None, False),
        ("UEC, 16 MB buffer", "uec", "sn2700", True),
        ("UEC without trimming, 16 MB buffer", "uec", "sn2700", False),
    ]
    for label, tech, switch, trims in technologies:
        transport = tech_transport(fab, tech, switch, trims)
        key = f"{label}: {_mechanisms(transport)}"
        victim[key], paused[key], incast_time[key] = [], [], []
        for n in fan_in:
            result = run(fab, incast_case(fab, n, True), transport)
            transfer = result.finish_us - result.latency_us
            victim[key].append(line / float(transfer[-1]))
            paused[key].append(float(result.link_paused_us.sum()) / 1e3)
            incast_time[key].append(float(transfer[:-1].max()) / (n * line))
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
        "fan_in": fan_in,
        "paused_link_ms": paused,
        "victim": victim,
        "victim_worst": worst,
        "incast_over_bound": incast_time,
        "switch": fab.switch.id,
        "buffer_mb": (fab.switch.buffer_bytes.value if fab.switch.buffer_bytes else 0.0) / 1e6,
    }


# ---------------------------------------------------------------------------------- question 4
def two_jobs() -> dict[str, Any]:
    fab = h100(1024, "roce_v2", topology="fat_tree", oversubscription=2)
    gpus = fab.layout.gpus // 2
    rows: list[dict[str, Any]] = []
    variants = [(r, with_mechanisms(fab, r)) for r in ("ecmp", "adaptive")] + [
        (label, tech_transport(fab, tech, switch, trims))
        for label, tech, switch, trims in TECHNOLOGIES
    ]
    for routing, transport in variants:
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
    ax.set_xticks(x, labels)
    ax.set_ylabel("all_to_all completion (ms)")
    ax.set_title("Two 512-GPU all_to_all jobs on a 2:1 fabric")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(FIGURES / "flow_two_jobs.png", dpi=120)
    plt.close(fig)
    return {"fabric": fab.name, "rows": rows}


def _two_jobs_text(rows: list[dict[str, Any]]) -> list[str]:
    by = {(r["routing"], r["placement"]): r for r in rows}
    out = ["What it shows, per routing:", ""]
    for routing in dict.fromkeys(r["routing"] for r in rows):
        packed, frag = by[(routing, "packed")], by[(routing, "fragmented")]
        out.append(
            f"- {routing}: alone, the fragmented job takes"
            f" {frag['alone_us'] / packed['alone_us']:.2f}x the packed one's time (its nodes"
            " spread over more leaves, so fewer hosts share each leaf's uplinks); sharing the"
            f" fabric stretches the packed job by {packed['job0_us'] / packed['alone_us']:.2f}x"
            f" and the fragmented one by {frag['job0_us'] / frag['alone_us']:.2f}x, because"
            " fragmented jobs put both jobs' hosts under every leaf and their cross-leaf"
            " traffic meets on the same 2:1 uplinks."
        )
    return out


def _uec_header_bytes() -> float:
    return load_catalog().get_typed("uec", TechnologySpec).header_bytes.value


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
        + " UEC (NSCC settles in two round trips): with the design switch's buffer",
        f"({q23['switch']}, {q23['buffer_mb']:.0f} MB, half per congested port)"
        f" {at(design)} overflows before NSCC"
        " settles, so trimming changes nothing there; with a 16 MB buffer"
        f" {at(shallow)} overflows, and there trimming keeps the incast at"
        f" {max(key(over, 'UEC, 16 MB')):.2f} x N S / B against"
        f" {max(key(over, 'UEC without trimming, 16 MB')):.2f} x dropped. The victim of a UEC",
        "fabric never shares an overflowing queue here and keeps line rate less the larger",
        "headers.",
    ]


def _fmt_row(values: list[float]) -> str:
    return " | ".join(f"{v:.2f}" for v in values)


def write(q1: dict[str, Any], q23: dict[str, Any], q4: dict[str, Any], wall_s: float) -> None:
    lines = [
        "# What the flow-level model finds",
        "",
        "Generated by `benchmarks/findings.py` (do not edit by hand; rerun it). Every number is",
        'the flow-level model\'s (docs/models.md, "Flow-level simulator"), on fabrics from the',
        "designer or the textbook k=16 fat tree. The model states what its mechanisms give; the",
        "packet-level simulator is the yardstick for the deviations listed there. Routing and",
        "congestion control are set per question on one fabric, so that the mechanism, not the",
        "technology's name, makes the difference.",
        "",
        "## 1. All-to-all and permutation at scale: static, ECMP, adaptive, spraying",
        "",
        "![routing](figures/flow_routing.png)",
        "",
        "Completion over the host-link bound (the busiest NIC's bytes at its payload rate; 1.00 =",
        f"line rate). ECMP: median and range over {ECMP_SEEDS} seeds (hash seeds and QP source",
        "ports).",
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
    labels = [t[0] for t in TECHNOLOGIES]
    lines += [
        "",
        "The same fabrics with each technology's own mechanisms (module docstring of",
        "`benchmarks/findings.py`: the RoCEv2 design's topology, the technology's catalog",
        "transport; the bound stays RoCEv2's payload rate, so a technology with smaller headers",
        "can go below 1.00):",
        "",
        "| fabric | pattern | RoCEv2 (ECMP median) | " + " | ".join(labels) + " |",
        "|---|---|---:|" + "---:|" * len(labels),
    ]
    for r in q1["rows"]:
        lines.append(
            f"| {r['short']} | {r['pattern']} | {float(np.median(r['ecmp'])):.2f} | "
            + _fmt_row([r["tech"][label] for label in labels])
            + " |"
        )
    lines += [
        "",
        "What each mechanism buys here: per-packet adaptive routing with NIC reordering",
        "(Spectrum-X) turns the permutation's hash collisions into its ASIC's adaptive-routing",
        "efficiency (0.95 of a trunk: `sim/mechanism.py`, a vendor figure), InfiniBand's",
        "switch-local AR into 0.77 where a trunk is loaded past it; spraying cells (DDC) or",
        "packets (UEC) over every path reaches the host bound as ideal adaptive routing does,",
        "minus DDC's cell tax wherever the fabric links, not the host links, are the",
        "bottleneck (`cell_payload_share`: 4,096 B in 17 cells of 256 B + 16 B is 0.925 of a",
        "fabric link against 0.980 of a host link; the same topology has no fabric speed-up),",
        f"and minus UEC's larger headers ({_uec_header_bytes():.0f} B per packet, catalog)."
        " All-to-all has no collision to",
        "remove, so the technologies differ there only by their payload shares and, for",
        "InfiniBand, by the 0.77 its switch-local AR estimate takes from every loaded trunk: a",
        "permutation's figure applied to all-to-all, where per-flow ECMP already averages, so",
        "InfiniBand's all-to-all here is slower than RoCEv2's, an artefact of that estimate.",
    ]
    lines += [
        "",
        "What it shows: with a million small flows (all-to-all), hashing averages out and every",
        "routing stays close to the host bound; with one large flow per NIC (permutation),",
        "per-flow ECMP collides (several flows on one uplink) and the collision, not the",
        "fabric's bisection, sets the completion time, and its size changes with the seed. Ideal",
        "adaptive routing and even spraying reach the bound on a non-blocking fat tree; static",
        "D-mod-K sits in between on a random permutation (it is collision-free only for shifts).",
        "",
        "## 2. Incast with and without congestion control",
        "",
        "![incast and victim](figures/flow_incast_victim.png)",
        "",
        f"Fabric: {q23['fabric']}. N rail-0 GPUs of SU 0 send 16 MiB each to rail 0 of the last",
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
        "control, congestion control, trimming) on the same design. Lossy rows count the",
        "overflow's recovery: a retransmission timeout (1,048.576 µs) where switches drop, one",
        "round trip where they trim (`sim/flow/transport.py`).",
        "",
        "What it shows: a lossless fabric without congestion control drags the victim down",
        "to the incast flows' share (1/N of line rate) once it shares a paused link with them,",
        "which adaptive routing makes certain (it spreads the incast over every uplink) and",
        "ECMP makes a matter of the hash; with congestion control the victim loses only the",
        "settling time, a small share of a 16 MiB transfer. Egress scheduling (DDC) pauses",
        "nothing, so the victim keeps line rate at every fan-in and the incast takes N S / B;",
        "Spectrum-X's telemetry CC settles in two round trips, so its victim loses less than",
        "DCQCN's.",
        "",
        *_lossy_text(q23),
        "",
        "## 4. Two jobs sharing a fabric",
        "",
        "![two jobs](figures/flow_two_jobs.png)",
        "",
        f"Fabric: {q4['fabric']}. Two 512-GPU jobs each run an all_to_all of 64 MiB per rank,",
        "placed on whole nodes, packed (consecutive nodes) or fragmented (nodes drawn at random).",
        "",
        "| routing or technology | placement | job 0 alone (ms) | job 0 shared (ms) |"
        " job 1 shared (ms) |",
        "|---|---|---:|---:|---:|",
    ]
    for r in q4["rows"]:
        lines.append(
            f"| {r['routing']} | {r['placement']} | {r['alone_us'] / 1e3:.2f} |"
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
    by_case = {(r["short"], r["pattern"]): r for r in q1["rows"]}

    def ecmp(r: dict[str, Any]) -> float:
        return float(np.median(r["ecmp"]))

    speedup = "; ".join(
        f"{pattern} on {short}: {ecmp(r) / r['tech']['Spectrum-X']:.2f}x"
        for (short, pattern), r in by_case.items()
    )
    throughput = "; ".join(
        f"{pattern} on {short}: {1 / r['tech']['Spectrum-X']:.0%} against {1 / ecmp(r):.0%}"
        for (short, pattern), r in by_case.items()
    )
    ddc_vs_ib = "; ".join(
        f"{pattern} on {short}: {r['tech']['InfiniBand'] / r['tech']['DDC']:.2f}x"
        for (short, pattern), r in by_case.items()
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
        f"with the design switch's buffer ({q23['switch']}, {q23['buffer_mb']:.0f} MB) "
        + pair("UEC:", "UEC without trimming:")
        + "; with a 16 MB buffer "
        + pair("UEC, 16 MB", "UEC without trimming, 16 MB")
        + "; a lossy fabric without CC "
        + pair("lossy, no CC, trimming", "lossy, no CC")
    )
    model = [
        "RoCEv2 ECMP (median of seeds) over Spectrum-X completion, same topology: " + speedup,
        "Spectrum-X against RoCEv2 ECMP, completion bound over completion: "
        + throughput
        + ". Not an independent check: the model's Spectrum-X adaptive-routing efficiency"
        " (0.95) is this very claim's figure (`sim/mechanism.py`, basis vendor)",
        "InfiniBand over DDC completion, same topology: "
        + ddc_vs_ib
        + "; "
        + ddc_jobs
        + ". The InfiniBand side is set by its adaptive-routing efficiency, 0.77 on every"
        " loaded multi-link trunk (an estimate from Geoffray and Hoefler 2008,"
        " `sim/mechanism.py`), so the ratio measures that estimate more than InfiniBand",
        "incast time over N S / B with trimming vs without (fan-in N, "
        + q23["fabric"]
        + "): "
        + trim,
    ]
    lines = [
        "# Vendor claims beside the model",
        "",
        "Generated by `benchmarks/findings.py` with docs/findings.md (do not edit by hand;",
        "rerun it). Each claim is quoted as its source states it, with its date; the model's",
        "figure is what the flow-level model gives for the nearest setup docs/findings.md",
        "runs, with the technology's own mechanisms on the same topology. The claims are never",
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
