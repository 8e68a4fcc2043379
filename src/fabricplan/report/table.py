"""Terminal tables (rich): one column per technology, one row per figure."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from fabricplan.analytic.workload import resolve_workload, workload_summary
from fabricplan.errors import FabricPlanError
from fabricplan.model.results import (
    CalibrationEffect,
    CollectivePoint,
    Evaluation,
    InfeasibleOption,
    RankedOption,
    Recommendation,
    StepTimeResult,
)
from fabricplan.model.scenario import ValidScenario
from fabricplan.report.quantity import banded, money, percent, power_kw, size_label

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
        ("topology", [e.design.topology for e in evals]),
        ("designs searched", [str(len(e.design.alternatives) + 1) for e in evals]),
        ("next best design", [_next_best(e) for e in evals]),
    ]
    if all(e.growth is not None for e in evals):
        rows.append(
            (
                f"grow to {evals[0].growth.target_gpus:,} GPUs" if evals[0].growth else "growth",
                [_growth_cell(e) for e in evals],
            )
        )
    return rows


def _growth_cell(e: Evaluation) -> str:
    growth = e.growth
    if growth is None:
        return "-"
    if not growth.reachable or growth.added_capex_usd is None:
        return "unreachable"
    return f"+{money(growth.added_capex_usd)}"


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
            (
                f"GPU time the fabric idles ({years} y)",
                [money(e.cost.gpu_idle_usd or 0.0) for e in evals],
            ),
            (
                "NVLink-only GPU time (same on all)",
                [money(e.cost.gpu_idle_in_domain_usd or 0.0) for e in evals],
            ),
        ]
    rows.append(
        (
            f"configuration risk ({years} y)",
            [
                f"{e.cost.config_risk_gpu_hours:,.0f} GPU-h + {money(e.cost.config_risk_staff_usd)}"
                for e in evals
            ],
        )
    )
    return rows


def _busbw(points: Sequence[CollectivePoint], op: str, size: int) -> str:
    for p in points:
        if p.collective == op and p.size_bytes == size:
            return banded(p.busbw_GBps, p.busbw_GBps_low, p.busbw_GBps_high, ".1f")
    return "-"


def calibration_text(e: Evaluation) -> str:
    """What a calibration profile changed on this fabric (``-`` when none applied).

    >>> from fabricplan.model.results import CalibrationEffect, ParameterChange
    >>> effect = CalibrationEffect(source="x", technology="roce_v2", changes=(
    ...     ParameterChange(name="nic_latency_ns", default=600.0, calibrated=450.0),),
    ...     base_latency_us_before=1.8)
    >>> calibration_text_of(effect, base_latency_us=1.5)
    'nic_latency_ns 600->450; latency 1.80->1.50 us'
    """
    effect = e.performance.calibration
    if effect is None:
        return "-"
    text = calibration_text_of(effect, e.performance.base_latency_us)
    step = e.performance.step
    if effect.step_s_before is not None and step is not None:
        text += f"; step {effect.step_s_before:.3f}->{step.step_s:.3f} s"
    return text


def calibration_text_of(effect: CalibrationEffect, base_latency_us: float) -> str:
    """The parameters a profile set and the headline latency before and after."""
    parts = [
        f"{c.name} {'model' if c.default is None else f'{c.default:g}'}->{c.calibrated:g}"
        for c in effect.changes
    ]
    if effect.base_latency_us_before is not None:
        parts.append(f"latency {effect.base_latency_us_before:.2f}->{base_latency_us:.2f} us")
    return "; ".join(parts) or "no parameter set"


def performance_notes(evals: Sequence[Evaluation]) -> list[str]:
    """What the bracketed bands are and, per technology, whether a calibration profile applied
    and every note of its performance model (what it ran, and how).

    >>> performance_notes([])
    []
    """
    notes: list[str] = []
    if any(e.performance.uncertainty for e in evals):
        notes.append(
            "figures in brackets are the model's uncertainty: the central 80 % of measured over"
            " predicted performance of published runs in the figure's regime and technology"
            " (docs/validation.md)"
        )
    for e in evals:
        effect = e.performance.calibration
        if effect is not None:
            notes.append(
                f"{e.technology}: calibration profile applied ({effect.source or 'no source'}):"
                f" {calibration_text(e)}"
            )
        notes += [f"{e.technology}: {n}" for n in e.performance.notes]
    return notes


def _exposed_share(step: StepTimeResult) -> str:
    low, high = step.exposed_fraction_low, step.exposed_fraction_high
    if low is None or high is None:
        return percent(step.exposed_fraction)
    return banded(step.exposed_fraction * 100, low * 100, high * 100, ".1f", " %")


def performance_rows(evals: Sequence[Evaluation]) -> list[Row]:
    rows: list[Row] = [
        (
            "latency (small msg)",
            [
                banded(
                    e.performance.base_latency_us,
                    e.performance.base_latency_us_low,
                    e.performance.base_latency_us_high,
                    ".2f",
                    " us",
                )
                for e in evals
            ],
        ),
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
                [
                    banded(
                        e.performance.step.step_s,
                        e.performance.step.step_s_low,
                        e.performance.step.step_s_high,
                        ".3f",
                        " s",
                    )
                    for e in evals
                    if e.performance.step
                ],
            ),
            (
                "exposed communication",
                [_exposed_share(e.performance.step) for e in evals if e.performance.step],
            ),
            (
                "GPU-hours lost / year",
                [
                    banded(
                        e.performance.step.gpu_hours_lost_per_year,
                        e.performance.step.gpu_hours_lost_per_year_low,
                        e.performance.step.gpu_hours_lost_per_year_high,
                        ",.0f",
                    )
                    for e in evals
                    if e.performance.step
                ],
            ),
        ]
    if any(e.performance.calibration for e in evals):
        rows.append(("calibration applied", [calibration_text(e) for e in evals]))
    return rows


def ops_rows(evals: Sequence[Evaluation]) -> list[Row]:
    return [
        (
            "staff: engineer-years / year",
            [f"{e.ops.engineer_years_per_year:.2f} ({e.ops.hours_per_year:,.0f} h)" for e in evals],
        ),
        ("switch vendors (not money)", [str(e.ops.vendors) for e in evals]),
        ("public clouds (not money)", [e.ops.cloud_availability for e in evals]),
    ]


MONEY_TERMS: tuple[tuple[str, str], ...] = (
    ("capex_usd", "capex"),
    ("energy_usd", "energy"),
    ("support_usd", "support"),
    ("staff_usd", "staff"),
    ("gpu_time_usd", "GPU time the fabric idles"),
    ("growth_usd", "growth"),
    ("config_risk_usd", "configuration risk"),
    ("worth_usd", "minus user-set worth"),
    ("total_usd", "total"),
)


def money_rows(rec: Recommendation) -> list[Row]:
    """The one economic scale: every candidate's money over the horizon, ranked."""
    ranked = rec.ranking
    rows: list[Row] = [
        (label, [money(getattr(o.money, field)) for o in ranked]) for field, label in MONEY_TERMS
    ]
    rows.append(
        (
            "step (uncertainty band)",
            [
                f"{o.money.step_s:.3f} s ({o.money.step_low_s:.3f}-{o.money.step_high_s:.3f})"
                for o in ranked
            ],
        )
    )
    if any(o.versus_fastest is not None for o in ranked):
        rows.append(
            ("step longer than the fastest (band of the difference)", [versus(o) for o in ranked])
        )
    rows.append(("constraints not met", [("; ".join(o.unmet) or "-") for o in ranked]))
    return rows


def versus(option: RankedOption) -> str:
    """max_performance: how much longer the option's step is than the fastest's (in percent of
    the fastest's), the band of that difference, and whether it is inside (``fastest`` for the
    fastest itself)."""
    gap = option.versus_fastest
    if gap is None:
        return "fastest"
    verdict = "inside: level" if gap.inside else "outside"
    return f"+{gap.difference_pct:.1f} % (±{gap.band_pct:.1f} %), {verdict}"


def money_table(rec: Recommendation) -> Table:
    years = rec.ranking[0].money.years if rec.ranking else 0
    table = Table(title=f"money over {years} years (ranked)", header_style="bold")
    table.add_column("")
    for o in rec.ranking:
        table.add_column(o.technology, justify="right")
    for label, values in money_rows(rec):
        table.add_row(label, *values)
    return table


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


def performance_panel(evals: Sequence[Evaluation]) -> Panel | None:
    """The bands' meaning and the calibration applied, when there is either."""
    notes = performance_notes(evals)
    return Panel("\n".join(notes), title="performance notes (what was modelled)") if notes else None


def recommendation_panel(rec: Recommendation) -> Panel:
    """The winner, the reasons and what would flip it."""
    body: list[Text] = [Text(f"Recommended: {rec.technology}", style="bold green")]
    body += [Text(f"- {r}") for r in rec.reasons]
    if rec.flips:
        body.append(Text("What would change the answer:", style="bold"))
        body += [Text(f"- {f.description}") for f in rec.flips]
    if rec.not_money:
        body.append(Text("Not money (constraints you can set):", style="bold"))
        body += [Text(f"- {line}") for line in rec.not_money]
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
        workload_line(valid),
        *valid.assumptions,
    ]
    return Panel("\n".join(lines), title="assumptions")


def workload_line(valid: ValidScenario) -> str:
    """The workload as the step model runs it (``analytic.workload.resolve_workload``)."""
    try:
        job = resolve_workload(valid.spec.workload, valid.spec.cluster.gpus)
    except FabricPlanError as exc:
        return f"workload {valid.spec.workload.model}: does not resolve ({exc.what})"
    return f"workload {workload_summary(job)}"


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
    if "performance" in parts and (notes := performance_panel(evals)) is not None:
        console.print(notes)
    if "cost" in parts and recommendation is None:
        console.print(cost_assumptions_panel(evals))
    if recommendation is not None:
        if recommendation.ranking:
            console.print(money_table(recommendation))
        console.print(recommendation_panel(recommendation))
