"""Terminal tables (rich): one column per technology, one row per figure."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from fabricplan.model.results import (
    CollectivePoint,
    Evaluation,
    InfeasibleOption,
    Recommendation,
)
from fabricplan.model.scenario import ValidScenario
from fabricplan.report.quantity import money, percent, power_kw, size_label

HEADLINE_SIZES_BYTES = (2**20, 2**26, 2**33)
"""Message sizes shown in the side-by-side table: 1M, 64M, 8G."""

Row = tuple[str, list[str]]


def design_rows(evals: Sequence[Evaluation]) -> list[Row]:
    rows: list[Row] = [
        ("switch", [e.design.switch_id for e in evals]),
        (
            "radix @ port speed",
            [f"{e.design.radix} x {e.design.port_speed_gbps:g}G" for e in evals],
        ),
        ("tiers / planes", [f"{e.design.tiers} / {e.design.planes}" for e in evals]),
        (
            "switches leaf/spine/core",
            ["/".join(str(e.design.switches[t]) for t in ("leaf", "spine", "core")) for e in evals],
        ),
        ("links", [str(sum(e.design.links.values())) for e in evals]),
        ("bisection", [f"{e.design.bisection_tbps:,.1f} Tb/s" for e in evals]),
        ("worst-case switch hops", [str(e.design.worst_case_switch_hops) for e in evals]),
        ("growth headroom", [f"+{e.design.headroom_gpus:,} GPUs" for e in evals]),
        ("topology", [e.design.topology for e in evals]),
        ("designs searched", [str(len(e.design.alternatives) + 1) for e in evals]),
        ("next best design", [_next_best(e) for e in evals]),
    ]
    return rows


def _next_best(evaluation: Evaluation) -> str:
    """The search's runner-up and why it lost, in a few words (``-`` when nothing was searched)."""
    if not evaluation.design.alternatives:
        return "-"
    alt = evaluation.design.alternatives[0]
    shape = f"{alt.tiers}T x {alt.planes}P"
    if alt.more_usd is None:
        return f"{alt.switch} {alt.topology} {shape}: cannot be built"
    return f"{alt.switch} {alt.topology} {shape}: +{money(alt.more_usd)}"


def cost_rows(evals: Sequence[Evaluation]) -> list[Row]:
    years = evals[0].cost.years if evals else 0
    rows: list[Row] = [
        ("capex", [money(e.cost.capex_usd) for e in evals]),
        ("network power", [power_kw(e.cost.power_w) for e in evals]),
        ("opex / year", [money(e.cost.opex_usd_per_year) for e in evals]),
        (f"TCO ({years} y)", [money(e.cost.tco_usd) for e in evals]),
        ("TCO per GPU", [money(e.cost.per_gpu_usd) for e in evals]),
    ]
    if all(e.cost.gpu_idle_usd is not None for e in evals):
        rows += [
            (f"idle GPU time ({years} y)", [money(e.cost.gpu_idle_usd or 0.0) for e in evals]),
            ("TCO + idle GPU time", [money(e.cost.tco_with_gpu_idle_usd or 0.0) for e in evals]),
        ]
    return rows


def _busbw(points: Sequence[CollectivePoint], op: str, size: int) -> str:
    for p in points:
        if p.collective == op and p.size_bytes == size:
            return f"{p.busbw_GBps:.1f}"
    return "-"


def performance_rows(evals: Sequence[Evaluation]) -> list[Row]:
    rows: list[Row] = [
        ("latency (small msg)", [f"{e.performance.base_latency_us:.2f} us" for e in evals]),
    ]
    ops = sorted({p.collective for e in evals for p in e.performance.collectives})
    for op in ops:
        for size in HEADLINE_SIZES_BYTES:
            rows.append(
                (
                    f"{op} busbw @{size_label(size)} (GB/s)",
                    [_busbw(e.performance.collectives, op, size) for e in evals],
                )
            )
    if all(e.performance.step for e in evals):
        rows += [
            (
                "step time",
                [f"{e.performance.step.step_s:.3f} s" for e in evals if e.performance.step],
            ),
            (
                "exposed communication",
                [percent(e.performance.step.exposed_fraction) for e in evals if e.performance.step],
            ),
            (
                "GPU-hours lost / year",
                [
                    f"{e.performance.step.gpu_hours_lost_per_year:,.0f}"
                    for e in evals
                    if e.performance.step
                ],
            ),
        ]
    return rows


def ops_rows(evals: Sequence[Evaluation]) -> list[Row]:
    return [
        ("operations burden (0-1)", [f"{e.ops.burden:.2f}" for e in evals]),
        ("engineer-years / year", [f"{e.ops.engineer_years_per_year:.1f}" for e in evals]),
        ("vendors to choose from", [str(e.ops.vendors) for e in evals]),
    ]


def side_by_side(evals: Sequence[Evaluation], parts: Sequence[str], title: str) -> Table:
    """One table, a column per technology, sections for the requested parts."""
    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("")
    for e in evals:
        table.add_column(e.technology, justify="right")
    builders = {
        "design": design_rows,
        "cost": cost_rows,
        "performance": performance_rows,
        "ops": ops_rows,
    }
    for part in parts:
        table.add_row(Text(part, style="bold cyan"), *[""] * len(evals))
        for label, values in builders[part](evals):
            table.add_row(f"  {label}", *values)
    return table


def findings_panel(
    evals: Sequence[Evaluation], infeasible: Sequence[InfeasibleOption] = ()
) -> Panel | None:
    """Technologies that cannot be designed, and design findings of warning or error severity."""
    lines = [
        Text(f"{o.technology} cannot be designed: {o.message}", style="bold red")
        for o in infeasible
    ] + [
        Text(
            f"{e.technology} {f.severity} {f.code}: {f.message}",
            style="red" if f.severity == "error" else "yellow",
        )
        for e in evals
        for f in e.design.findings
        if f.severity != "info"
    ]
    return Panel(Group(*lines), title="findings") if lines else None


def cost_assumptions_panel(evals: Sequence[Evaluation]) -> Panel:
    """Every price, power figure and rate the costs rest on, and how to override it."""
    lines = [f"{e.technology}: {a}" for e in evals for a in e.cost.assumptions]
    return Panel("\n".join(lines), title="cost assumptions (each can be overridden in the spec)")


def recommendation_panel(rec: Recommendation) -> Panel:
    """The winner, the reasons and what would flip it."""
    body: list[Text] = [Text(f"Recommended: {rec.technology}", style="bold green")]
    body += [Text(f"- {r}") for r in rec.reasons]
    if rec.flips:
        body.append(Text("What would change the answer:", style="bold"))
        body += [Text(f"- {f.description}") for f in rec.flips]
    return Panel(Group(*body), title="recommendation")


def assumptions_panel(valid: ValidScenario) -> Panel:
    """The defaults and choices the output rests on."""
    s = valid.spec
    lines = [
        f"{s.cluster.gpus:,} x {valid.node.id} GPUs, {s.cluster.nodes:,} nodes, "
        f"{s.cluster.nics_per_node} x {s.cluster.nic_speed_gbps:g}G NICs per node",
        f"topology {s.fabric.topology}, oversubscription {s.fabric.oversubscription:g}:1, "
        f"tiers {s.fabric.tiers}, planes {s.fabric.planes}",
        f"TCO over {s.cost.years} years at ${s.cost.energy_usd_per_kwh}/kWh, PUE {s.cost.pue}; "
        "prices are estimates unless you give your own (cost.price_book)",
        f"workload {s.workload.model}, seq {s.workload.sequence_length}, TP{s.workload.tp} "
        f"PP{s.workload.pp} EP{s.workload.ep}, MFU {s.workload.mfu}",
        *valid.assumptions,
    ]
    return Panel("\n".join(lines), title="assumptions")


def print_report(
    console: Console,
    valid: ValidScenario,
    evals: Sequence[Evaluation],
    parts: Sequence[str],
    recommendation: Recommendation | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
) -> None:
    """The whole terminal report."""
    console.print(assumptions_panel(valid))
    console.print(side_by_side(evals, parts, title=valid.spec.name))
    panel = findings_panel(evals, infeasible)
    if panel is not None:
        console.print(panel)
    if "cost" in parts and recommendation is None:
        console.print(cost_assumptions_panel(evals))
    if recommendation is not None:
        console.print(recommendation_panel(recommendation))
