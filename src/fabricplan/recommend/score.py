"""Raw criterion figures of each candidate, their normalisation to scores, totals and the ranking.

Raw figures (one per criterion and candidate):

- ``performance``: the training step time in seconds; when a candidate has no step time, the
  time of the largest ``all_reduce`` size every candidate has (the same figure for all);
- ``capex``, ``tco``: dollars; ``tco`` adds the value of the GPU time the fabric leaves idle
  (``cost.tco_with_gpu_idle_usd``) when every candidate has it — the network choice's whole cost;
- ``scalability``: growth factor, ``(gpus + headroom_gpus) / gpus``; 0 when the design reports an
  error-severity finding (it breaks a hard limit, e.g. the LID space);
- ``operations``: the operations burden, 0 (nothing to run) to 1 (hardest);
- ``ecosystem``: the ecosystem fit, 0 to 1 (vendors, cloud availability).

Scores are on a ratio scale, 1 = the best candidate: ``best / value`` for figures where less is
better (times, dollars), ``value / best`` for figures where more is better. A ratio keeps
"10 % more expensive" meaning the same whatever the other candidates cost (a min-max scale would
make the worst candidate 0 however close it is). The burden is turned into an ease,
``1 - burden``, before the ratio; the growth factor is capped at
:data:`SCALABILITY_GROWTH_CAP` first.

>>> normalised({"a": 2.0, "b": 4.0}, lower_is_better=True)
{'a': 1.0, 'b': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import Evaluation
from fabricplan.model.scenario import Criterion
from fabricplan.recommend.weights import CRITERIA
from fabricplan.units import ns_to_s, us_to_ns

RawTable = dict[str, dict[Criterion, float]]
"""Technology -> criterion -> raw figure (or score)."""

SCALABILITY_GROWTH_CAP = 4.0
"""Growth factors above this count as this. Estimate: growth beyond 4x the planned cluster within
one fabric's life is a new fabric, not an extension, so a design that could grow 100x is not
25x better than one that can grow 4x."""

TOTAL_TIE_DIGITS = 12
"""Totals equal to this many decimals are a tie (float noise must not pick a winner)."""

UNITS: dict[Criterion, str] = {
    "performance": "s",
    "capex": "usd",
    "tco": "usd",
    "scalability": "x cluster",
    "operations": "burden 0-1",
    "ecosystem": "fit 0-1",
}

LOWER_IS_BETTER: frozenset[Criterion] = frozenset({"performance", "capex", "tco"})


def performance_label(evaluations: Sequence[Evaluation]) -> str:
    """What the performance figure is: ``step time`` or ``all_reduce time at <size>``."""
    if all(e.performance.step is not None for e in evaluations):
        return "step time"
    size = _common_all_reduce_size(evaluations)
    return f"all_reduce time at {size:,} bytes"


def _common_all_reduce_size(evaluations: Sequence[Evaluation]) -> int:
    sizes = [
        {p.size_bytes for p in e.performance.collectives if p.collective == "all_reduce"}
        for e in evaluations
    ]
    common = set.intersection(*sizes) if sizes else set()
    if not common:
        raise ModelError(
            "FP571",
            "evaluation.performance",
            "no step time and no all_reduce size common to every candidate",
            None,
            "ask the backend for the step time (PerfRequest.step) or all_reduce results",
        )
    return max(common)


TCO_WITH_IDLE_LABEL = "TCO with idle GPU time"


def tco_label(evaluations: Sequence[Evaluation]) -> str:
    """What the TCO figure is: with the value of idle GPU time when every candidate has it."""
    if all(e.cost.tco_with_gpu_idle_usd is not None for e in evaluations):
        return TCO_WITH_IDLE_LABEL
    return "TCO"


def _tco_usd(evaluations: Sequence[Evaluation]) -> list[float]:
    if tco_label(evaluations) == TCO_WITH_IDLE_LABEL:
        return [e.cost.tco_with_gpu_idle_usd or 0.0 for e in evaluations]
    return [e.cost.tco_usd for e in evaluations]


def _performance_s(evaluations: Sequence[Evaluation]) -> list[float]:
    if all(e.performance.step is not None for e in evaluations):
        return [e.performance.step.step_s for e in evaluations if e.performance.step is not None]
    size = _common_all_reduce_size(evaluations)
    return [
        ns_to_s(
            us_to_ns(
                next(
                    p.time_us
                    for p in e.performance.collectives
                    if p.collective == "all_reduce" and p.size_bytes == size
                )
            )
        )
        for e in evaluations
    ]


def growth_factor(design: FabricDesign) -> float:
    """``(gpus + headroom) / gpus``, or 0 when the design breaks a hard limit (error finding).

    Examples
    --------
    >>> from fabricplan.analytic.cost import _tiny_leaf_spine
    >>> growth_factor(_tiny_leaf_spine())  # 16 GPUs with room for 2,032 more
    128.0
    """
    if any(f.severity == "error" for f in design.findings):
        return 0.0
    return (design.gpus + design.headroom_gpus) / design.gpus if design.gpus else 0.0


def raw_figures(evaluations: Sequence[Evaluation]) -> RawTable:
    """Each candidate's raw figure per criterion (see the module docstring)."""
    performance = _performance_s(evaluations)
    tco = dict(zip((e.technology for e in evaluations), _tco_usd(evaluations), strict=True))
    return {
        e.technology: {
            "performance": step_s,
            "capex": e.cost.capex_usd,
            "tco": tco[e.technology],
            "scalability": growth_factor(e.design),
            "operations": e.ops.burden,
            "ecosystem": e.ops.ecosystem_fit,
        }
        for e, step_s in zip(evaluations, performance, strict=True)
    }


def normalised(values: Mapping[str, float], *, lower_is_better: bool) -> dict[str, float]:
    """Ratio scores, 1 = best: ``best / value`` (less is better) or ``value / best``.

    A zero best makes every zero 1 and everything else 0 (less is better), or everything 1 (more
    is better: no candidate has any of it).

    Examples
    --------
    >>> normalised({"a": 0.5, "b": 1.0}, lower_is_better=False)
    {'a': 0.5, 'b': 1.0}
    >>> normalised({"a": 0.0, "b": 3.0}, lower_is_better=True)
    {'a': 1.0, 'b': 0.0}
    """
    if lower_is_better:
        best = min(values.values())
        return {k: 1.0 if v <= best else best / v for k, v in values.items()}
    best = max(values.values())
    if best <= 0:
        return dict.fromkeys(values, 1.0)
    return {k: v / best for k, v in values.items()}


def criterion_scores(raw: RawTable) -> RawTable:
    """Scores in [0, 1] per candidate and criterion, 1 = best (see the module docstring).

    Criteria missing from any candidate's row are left out.

    Examples
    --------
    >>> raw = {"a": {"tco": 50.0, "operations": 0.5}, "b": {"tco": 100.0, "operations": 0.0}}
    >>> criterion_scores(raw)
    {'a': {'tco': 1.0, 'operations': 0.5}, 'b': {'tco': 0.5, 'operations': 1.0}}
    """
    scores: RawTable = {tech: {} for tech in raw}
    present = set.intersection(*(set(row) for row in raw.values())) if raw else set()
    for criterion in CRITERIA:
        if criterion not in present:
            continue
        values = {tech: figures[criterion] for tech, figures in raw.items()}
        if criterion == "operations":
            values = {tech: 1.0 - burden for tech, burden in values.items()}
        elif criterion == "scalability":
            values = {tech: min(g, SCALABILITY_GROWTH_CAP) for tech, g in values.items()}
        for tech, score in normalised(values, lower_is_better=criterion in LOWER_IS_BETTER).items():
            scores[tech][criterion] = score
    return scores


def weighted_totals(scores: RawTable, weights: Mapping[Criterion, float]) -> dict[str, float]:
    """``sum over criteria of weight x score`` per candidate.

    Examples
    --------
    >>> weighted_totals({"a": {"tco": 1.0, "capex": 0.5}}, {"tco": 0.5, "capex": 0.5})
    {'a': 0.75}
    """
    return {
        tech: sum(weights.get(c, 0.0) * score for c, score in row.items())
        for tech, row in scores.items()
    }


def ranking(totals: Mapping[str, float]) -> list[str]:
    """Candidates best first. Ties (equal to :data:`TOTAL_TIE_DIGITS` decimals) go to the
    technology name that sorts first, so the order does not depend on the input order.

    Examples
    --------
    >>> ranking({"roce_v2": 0.8, "infiniband": 0.8, "roce_v1": 0.9})
    ['roce_v1', 'infiniband', 'roce_v2']
    """
    return sorted(totals, key=lambda tech: (-round(totals[tech], TOTAL_TIE_DIGITS), tech))
