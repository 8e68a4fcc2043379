"""A self-contained HTML report: one file, inline CSS and SVG figures, no network fetches."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from fabricplan.errors import FabricPlanError
from fabricplan.model.results import Evaluation, InfeasibleOption, Recommendation
from fabricplan.model.scenario import ValidScenario
from fabricplan.report.figure import busbw_svg, cost_svg, step_svg
from fabricplan.report.table import (
    cost_rows,
    design_rows,
    money_rows,
    ops_rows,
    performance_notes,
    performance_rows,
    workload_line,
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 960px; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { padding: 0.25rem 0.75rem; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.rec { background: #eef8ee; border-left: 4px solid #3a3; padding: 0.5rem 1rem; }
.finding-error { color: #a00; } .finding-warning { color: #a60; }
figure { margin: 1rem 0; } svg { max-width: 100%; height: auto; }
"""

_SECTIONS = {
    "design": ("Design", design_rows),
    "cost": ("Cost", cost_rows),
    "performance": ("Performance", performance_rows),
    "ops": ("Operations", ops_rows),
}


def _table(evals: Sequence[Evaluation], part: str) -> str:
    title, rows = _SECTIONS[part]
    head = "".join(f"<th>{escape(e.technology)}</th>" for e in evals)
    body = "".join(
        f"<tr><td>{escape(label)}</td>" + "".join(f"<td>{escape(v)}</td>" for v in values) + "</tr>"
        for label, values in rows(evals)
    )
    return f"<h2>{title}</h2><table><tr><th></th>{head}</tr>{body}</table>"


def _fabric_drawings(valid: ValidScenario, evals: Sequence[Evaluation]) -> list[str]:
    """The bundled drawing of each designed fabric (``fabricplan export --format svg``)."""
    from fabricplan.export.cabling import cabling_plan
    from fabricplan.export.drawing import fabric_svg

    figures = []
    for evaluation in evals:
        try:
            svg = fabric_svg(cabling_plan(evaluation.design, valid))
        except FabricPlanError as exc:  # a design the expansion cannot draw: say so, go on
            figures.append(
                f"<p>{escape(evaluation.technology)}: no drawing ({escape(str(exc))})</p>"
            )
            continue
        figures.append(
            f"<figure>{svg}<figcaption>{escape(evaluation.technology)}: tiers, pods and"
            " scalable units with the cables of each bundle</figcaption></figure>"
        )
    return figures


def html_report(
    valid: ValidScenario,
    evals: Sequence[Evaluation],
    parts: Sequence[str],
    recommendation: Recommendation | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
) -> str:
    """The report as one HTML document."""
    s = valid.spec
    title = f"{s.name}: {' vs '.join(e.technology for e in evals)}"
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{s.cluster.gpus:,} GPUs ({escape(valid.node.id)}), {s.cluster.nodes:,} nodes, "
        f"{s.cluster.nics_per_node} &times; {s.cluster.nic_speed_gbps:g}G NICs per node; "
        f"{escape(s.fabric.topology)}, oversubscription {s.fabric.oversubscription:g}:1;"
        f" {escape(workload_line(valid))}.</p>",
    ]
    if recommendation is not None:
        reasons = "".join(f"<li>{escape(r)}</li>" for r in recommendation.reasons)
        flips = "".join(f"<li>{escape(f.description)}</li>" for f in recommendation.flips)
        apart = "".join(f"<li>{escape(line)}</li>" for line in recommendation.not_money)
        out.append(
            f"<div class='rec'><h2>Recommended: {escape(recommendation.technology)}</h2>"
            f"<ul>{reasons}</ul>"
            + (f"<h3>What would change the answer</h3><ul>{flips}</ul>" if flips else "")
            + (f"<h3>Not money (constraints you can set)</h3><ul>{apart}</ul>" if apart else "")
            + "</div>"
        )
        if recommendation.ranking:
            head = "".join(f"<th>{escape(o.technology)}</th>" for o in recommendation.ranking)
            body = "".join(
                f"<tr><td>{escape(label)}</td>"
                + "".join(f"<td>{escape(v)}</td>" for v in values)
                + "</tr>"
                for label, values in money_rows(recommendation)
            )
            out.append(
                f"<h2>Money over the horizon (ranked)</h2><table><tr><th></th>{head}</tr>"
                f"{body}</table>"
            )
    for part in parts:
        out.append(_table(evals, part))
        if part == "design":
            out.extend(_fabric_drawings(valid, evals))
        if part == "performance":
            for op in sorted({p.collective for e in evals for p in e.performance.collectives}):
                out.append(f"<figure>{busbw_svg(evals, op)}</figure>")
            if any(e.performance.step for e in evals):
                out.append(f"<figure>{step_svg(evals)}</figure>")
        if part == "cost":
            out.append(f"<figure>{cost_svg(evals)}</figure>")
    findings = "".join(
        f"<li class='finding-error'>{escape(o.technology)} cannot be designed: "
        f"{escape(o.message)}</li>"
        for o in infeasible
    ) + "".join(
        f"<li class='finding-{f.severity}'>{escape(e.technology)} {f.severity} {escape(f.code)}: "
        f"{escape(f.message)}</li>"
        for e in evals
        for f in e.design.findings
    )
    if findings:
        out.append(f"<h2>Findings</h2><ul>{findings}</ul>")
    if "performance" in parts:
        notes = "".join(f"<li>{escape(n)}</li>" for n in performance_notes(evals))
        if notes:
            out.append(f"<h2>Performance notes</h2><ul>{notes}</ul>")
    assumptions = [*valid.assumptions] + [a for e in evals for a in e.cost.assumptions]
    out.append(
        "<h2>Assumptions</h2><ul>" + "".join(f"<li>{escape(a)}</li>" for a in assumptions) + "</ul>"
    )
    out.append("</body></html>")
    return "\n".join(out)
