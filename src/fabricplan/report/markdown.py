"""Markdown report: the same rows as the terminal table."""

from __future__ import annotations

from collections.abc import Sequence

from fabricplan.model.results import Evaluation, InfeasibleOption, Recommendation
from fabricplan.model.scenario import ValidScenario
from fabricplan.report.table import (
    cost_rows,
    design_rows,
    money_rows,
    ops_rows,
    performance_notes,
    performance_rows,
    workload_line,
)

_SECTIONS = {
    "design": ("Design", design_rows),
    "cost": ("Cost", cost_rows),
    "performance": ("Performance", performance_rows),
    "ops": ("Operations", ops_rows),
}


def markdown_report(
    valid: ValidScenario,
    evals: Sequence[Evaluation],
    parts: Sequence[str],
    recommendation: Recommendation | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
) -> str:
    """The report as Markdown text."""
    out = [f"# {valid.spec.name}: {' vs '.join(e.technology for e in evals)}", ""]
    s = valid.spec
    out += [
        f"{s.cluster.gpus:,} GPUs ({valid.node.id}), {s.cluster.nodes:,} nodes, "
        f"{s.cluster.nics_per_node} x {s.cluster.nic_speed_gbps:g}G NICs per node; "
        f"{s.fabric.topology}, oversubscription {s.fabric.oversubscription:g}:1;"
        f" {workload_line(valid)}.",
        "",
    ]
    if recommendation is not None:
        out += [f"**Recommended: {recommendation.technology}**", ""]
        out += [f"- {r}" for r in recommendation.reasons]
        if recommendation.flips:
            out += ["", "What would change the answer:", ""]
            out += [f"- {f.description}" for f in recommendation.flips]
        if recommendation.not_money:
            out += ["", "Not money (constraints you can set):", ""]
            out += [f"- {line}" for line in recommendation.not_money]
        out.append("")
        if recommendation.ranking:
            ranked = recommendation.ranking
            out += [
                "## Money over the horizon (ranked)",
                "",
                "| | " + " | ".join(o.technology for o in ranked) + " |",
                "|---|" + "---:|" * len(ranked),
            ]
            out += [
                f"| {label} | " + " | ".join(v) + " |" for label, v in money_rows(recommendation)
            ]
            out.append("")
    header = "| | " + " | ".join(e.technology for e in evals) + " |"
    rule = "|---|" + "---:|" * len(evals)
    for part in parts:
        title, rows = _SECTIONS[part]
        out += [f"## {title}", "", header, rule]
        out += [f"| {label} | " + " | ".join(values) + " |" for label, values in rows(evals)]
        out.append("")
    findings = [f"- {o.technology} **cannot be designed**: {o.message}" for o in infeasible]
    findings += [
        f"- {e.technology} **{f.severity}** {f.code}: {f.message}"
        for e in evals
        for f in e.design.findings
    ]
    if findings:
        out += ["## Findings", "", *findings, ""]
    if "performance" in parts:
        notes = performance_notes(evals)
        if notes:
            out += ["## Performance notes", "", *[f"- {n}" for n in notes], ""]
    out += ["## Assumptions", "", *[f"- {a}" for a in valid.assumptions]]
    for e in evals:
        out += [f"- {e.technology} cost: {a}" for a in e.cost.assumptions]
    return "\n".join(out) + "\n"
