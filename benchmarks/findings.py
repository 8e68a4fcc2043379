"""What the flow-level model finds: regenerates docs/findings.md and its figures.

    .venv/bin/python benchmarks/findings.py            # a few minutes on 2 cores

Four questions, each on a fabric from the designer (or the textbook k=16 fat tree) with the
technologies' own mechanisms, plus the routing and congestion-control overrides the question
asks about. The text states what the model finds; it is not a verdict on a technology.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fabricplan.model.scenario import TechnologyName
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.result import FlowSimResult
from fabricplan.sim.flow.routing import bytes_per_us
from fabricplan.sim.flow.transport import (
    CongestionControl,
    LinkFlowControl,
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


def fabric(name: str, short: str, spec: dict[str, Any], tech: TechnologyName) -> Fabric:
    valid = parse_spec(spec)
    graph = fabric_graph(design_fabric(valid, tech), valid)
    cluster = valid.spec.cluster
    transport = transport_for(valid.technologies[tech], valid.switches[tech])
    rate = float(bytes_per_us(cluster.nic_speed_gbps)) * transport.payload_share
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    return Fabric(name, short, graph, layout, transport, rate)


def with_mechanisms(
    fab: Fabric,
    routing: RoutingName | None = None,
    cc: CongestionControl | None = None,
    lfc: LinkFlowControl | None = None,
) -> TransportSpec:
    t = fab.transport
    return TransportSpec(
        routing or t.routing,
        lfc or t.link_flow_control,
        cc or t.congestion_control,
        t.payload_share,
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
    modes: list[tuple[str, LinkFlowControl, CongestionControl]] = [
        ("lossy, no CC", "none", "none"),
        ("lossless, no CC", "pfc", "none"),
        ("lossless + DCQCN", "pfc", "dcqcn"),
        ("lossless + IB CC", "credit", "ib_cc"),
    ]
    paused: dict[str, list[float]] = {m[0]: [] for m in modes}
    victim: dict[str, list[float]] = {}
    worst: dict[str, list[float]] = {}
    incast_time: dict[str, list[float]] = {m[0]: [] for m in modes}
    line = 16 * MIB / fab.nic_bytes_per_us
    for routing, seeds in (("adaptive", 1), ("ecmp", ECMP_SEEDS)):
        for name, lfc, cc in modes:
            key = f"{name} ({routing})"
            victim[key], worst[key] = [], []
            for n in fan_in:
                shares = []
                for seed in range(seeds):
                    transport = with_mechanisms(fab, routing, cc, lfc)
                    result = run(fab, incast_case(fab, n, True), transport, seed)
                    transfer = result.finish_us - result.latency_us
                    shares.append(line / float(transfer[-1]))
                    if routing == "adaptive":
                        paused[name].append(float(result.link_paused_us.sum()) / 1e3)
                        incast_time[name].append(float(transfer[:-1].max()) / (n * line))
                victim[key].append(float(np.median(shares)))
                worst[key].append(min(shares))
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
        if "adaptive" in key:
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
    }


# ---------------------------------------------------------------------------------- question 4
def two_jobs() -> dict[str, Any]:
    fab = h100(1024, "roce_v2", topology="fat_tree", oversubscription=2)
    gpus = fab.layout.gpus // 2
    rows = []
    for routing in ("ecmp", "adaptive"):
        transport = with_mechanisms(fab, routing)
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

    fig, ax = plt.subplots(figsize=(8, 4))
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
        "What it shows: a lossy fabric leaves the victim alone; a lossless fabric without",
        "congestion control drags it down to the incast flows' share (1/N of line rate) once it",
        "shares a paused link with them, which adaptive routing makes certain (it spreads the",
        "incast over every uplink) and ECMP makes a matter of the hash; with congestion control",
        "the victim loses only the settling time, a small share of a 16 MiB transfer.",
        "",
        "## 4. Two jobs sharing a fabric",
        "",
        "![two jobs](figures/flow_two_jobs.png)",
        "",
        f"Fabric: {q4['fabric']}. Two 512-GPU jobs each run an all_to_all of 64 MiB per rank,",
        "placed on whole nodes, packed (consecutive nodes) or fragmented (nodes drawn at random).",
        "",
        "| routing | placement | job 0 alone (ms) | job 0 shared (ms) | job 1 shared (ms) |",
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


if __name__ == "__main__":
    main()
