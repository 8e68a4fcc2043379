"""Figures as inline SVG (matplotlib, imported only here and only when a figure is drawn)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fabricplan.model.results import Evaluation

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGURE_SIZE_IN = (7.0, 3.6)


def _svg(fig: Figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    # No date and a fixed id salt: the same report gives the same bytes (reproducible HTML).
    with matplotlib.rc_context({"svg.hashsalt": "fabricplan"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _new_figure() -> Figure:
    # The object-oriented API with no pyplot state: two reports in one process never share a figure.
    from matplotlib.figure import Figure

    return Figure(figsize=FIGURE_SIZE_IN)


def busbw_svg(evals: Sequence[Evaluation], collective: str) -> str:
    """busbw against message size (log x), one line per technology."""
    fig = _new_figure()
    ax = fig.add_subplot()
    for e in evals:
        points = sorted(
            (p.size_bytes, p.busbw_GBps)
            for p in e.performance.collectives
            if p.collective == collective
        )
        if points:
            ax.plot(
                [s for s, _ in points], [b for _, b in points], marker="o", ms=3, label=e.technology
            )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(f"{collective} busbw vs size ({evals[0].performance.backend} model)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return _svg(fig)


def cost_svg(evals: Sequence[Evaluation]) -> str:
    """TCO stacked by where the money goes: capex by kind, then opex over the horizon."""
    fig = _new_figure()
    ax = fig.add_subplot()
    kinds = sorted({line.kind for e in evals for line in e.cost.lines})
    names = [e.technology for e in evals]
    bottom = [0.0] * len(evals)
    for kind in kinds:
        values = [sum(li.total_usd for li in e.cost.lines if li.kind == kind) / 1e6 for e in evals]
        ax.bar(names, values, bottom=bottom, label=f"capex: {kind}")
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    opex = [e.cost.opex_usd_per_year * e.cost.years / 1e6 for e in evals]
    ax.bar(names, opex, bottom=bottom, label=f"opex over {evals[0].cost.years} y")
    title = "Total cost of ownership"
    if all(e.cost.gpu_idle_usd is not None for e in evals):
        bottom = [b + o for b, o in zip(bottom, opex, strict=True)]
        idle = [(e.cost.gpu_idle_usd or 0.0) / 1e6 for e in evals]
        ax.bar(names, idle, bottom=bottom, hatch="//", fill=False, label="idle GPU time")
        title += ", with the GPU time the network idles"
    ax.set_ylabel("US$ millions")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return _svg(fig)


def step_svg(evals: Sequence[Evaluation]) -> str:
    """Training step time: compute and the communication left exposed."""
    fig = _new_figure()
    ax = fig.add_subplot()
    with_step = [e for e in evals if e.performance.step is not None]
    names = [e.technology for e in with_step]
    compute = [e.performance.step.compute_s for e in with_step if e.performance.step]
    exposed = [e.performance.step.comm_exposed_s for e in with_step if e.performance.step]
    ax.barh(names, compute, label="compute")
    ax.barh(names, exposed, left=compute, label="exposed communication")
    ax.set_xlabel("seconds per step")
    ax.set_title("Training step")
    ax.legend(fontsize="small")
    return _svg(fig)
