"""The decision: rank the candidates, say why, and say what would flip the choice.

1. Raw figures per criterion (:mod:`fabricplan.recommend.score`), normalised to ratio scores
   (1 = best candidate).
2. Weights from the spec's priorities (:mod:`fabricplan.recommend.weights`), normalised to 1.
3. Total = sum of weight x score; the ranking sorts totals, ties go to the technology name that
   sorts first.
4. Reasons: each criterion's share of the winner's lead (:mod:`fabricplan.recommend.reason`).
5. Flip points: for each criterion, the weight (others rescaled) at which the winner changes,
   solved exactly; the rise of the winner's network price, and the cut of a rival's, that flip
   it; and, when a re-evaluation callback is given, the cluster size and team experience that
   flip it.

There is no rule of the form "if cost-sensitive then X": the ranking comes from the figures.

>>> from fabricplan.spec import parse_spec
>>> decide([], parse_spec({"cluster": {"gpus": 16}}))
Traceback (most recent call last):
...
fabricplan.errors.ModelError: decide: no candidate to rank; evaluate at least one technology [FP570]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import get_args

from fabricplan.errors import FabricPlanError, ModelError
from fabricplan.model.results import (
    CostBreakdown,
    CriterionScore,
    Evaluation,
    FlipPoint,
    InfeasibleOption,
    PerfRequest,
    RankedOption,
    Recommendation,
)
from fabricplan.model.scenario import (
    Criterion,
    Experience,
    TeamSpec,
    ValidScenario,
)
from fabricplan.recommend.flip import MAX_PRICE_RISE, price_flip, weight_flip
from fabricplan.recommend.reason import decision_reasons, usd_short
from fabricplan.recommend.score import (
    UNITS,
    RawTable,
    criterion_scores,
    performance_label,
    ranking,
    raw_figures,
    tco_label,
    weighted_totals,
)
from fabricplan.recommend.weights import CRITERIA, criterion_weights, priorities_label
from fabricplan.spec import replace_spec

CLUSTER_SIZE_STEPS = 3
"""Doublings (and halvings) of the cluster tried when looking for a size that flips the choice."""

Reevaluate = Callable[[int], Sequence[Evaluation]]
"""Evaluations of the same candidates at another GPU count."""
ReevaluateTeam = Callable[[TeamSpec], Sequence[Evaluation]]
"""Evaluations of the same candidates with another team experience."""


NEAR_TIE_LEAD = 0.01
"""A lead (of the 0-1 weighted total) below which the report calls the ranking a near tie: about
a 4 % difference on a criterion weighted 0.25, the size of the uncertainty of the estimated prices
and model constants (docs/models.md, "The decision")."""


def _check(evaluations: Sequence[Evaluation]) -> None:
    if not evaluations:
        raise ModelError(
            "FP570", "decide", "no candidate to rank", None, "evaluate at least one technology"
        )
    names = [e.technology for e in evaluations]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ModelError(
            "FP572",
            "decide",
            "a technology is evaluated twice",
            ", ".join(twice),
            "pass one evaluation per technology",
        )


def _winner(evaluations: Sequence[Evaluation], weights: Mapping[Criterion, float]) -> str:
    _check(evaluations)
    return ranking(weighted_totals(criterion_scores(raw_figures(evaluations)), weights))[0]


def _weight_flips(scores: RawTable, weights: Mapping[Criterion, float]) -> list[FlipPoint]:
    found = []
    none: list[str] = []
    for criterion in CRITERIA:
        flip = weight_flip(scores, weights, criterion)
        if flip is None:
            none.append(criterion)
            continue
        if flip.tied_now:
            way = "increase" if flip.raise_weight else "decrease"
            text = (
                f"{flip.winner_before} is first only on the tie-break: any {way} of the"
                f" {criterion} weight from {flip.weight_now:.3f} makes {flip.winner_after} first"
            )
        else:
            verb = "raising" if flip.raise_weight else "lowering"
            text = (
                f"{verb} the {criterion} weight from {flip.weight_now:.3f} to {flip.weight:.3f}"
                f" ({flip.weight - flip.weight_now:+.3f}, others rescaled in proportion) makes"
                f" {flip.winner_after} first instead of {flip.winner_before}"
            )
        found.append(
            (
                abs(flip.weight - flip.weight_now),
                FlipPoint(kind="weight", description=text, value=flip.weight),
            )
        )
    points = [point for _, point in sorted(found, key=lambda pair: pair[0])]
    if none:
        points.append(
            FlipPoint(
                kind="weight",
                description="no single weight between 0 and 1 (others rescaled) flips the choice"
                f" for: {', '.join(none)}",
            )
        )
    return points


def _price_flips(
    evaluations: Sequence[Evaluation],
    raw: RawTable,
    weights: Mapping[Criterion, float],
    winner: str,
) -> list[FlipPoint]:
    costs: dict[str, CostBreakdown] = {e.technology: e.cost for e in evaluations}

    def tco_per_change(tech: str) -> float:
        cost = costs[tech]
        return cost.capex_usd + cost.years * cost.support_usd_per_year

    def described(tech: str, change: float, after: str) -> str:
        cost = costs[tech]
        new_capex = cost.capex_usd * (1.0 + change)
        new_tco = cost.tco_usd + change * tco_per_change(tech)
        return (
            f"{tech}'s network price {change * 100:+.1f} % (capex {usd_short(cost.capex_usd)} ->"
            f" {usd_short(new_capex)}, TCO {usd_short(cost.tco_usd)} -> {usd_short(new_tco)})"
            f" makes {after} first"
        )

    points = []
    rise = price_flip(raw, weights, winner, tco_per_change(winner))
    if rise is None:
        points.append(
            FlipPoint(
                kind="price",
                description=f"no rise of {winner}'s network price up to"
                f" +{MAX_PRICE_RISE * 100:,.0f} % flips the choice",
            )
        )
    else:
        points.append(
            FlipPoint(
                kind="price",
                description=described(winner, rise.change, rise.winner_after),
                value=rise.change * 100.0,
            )
        )
    cuts = [
        flip
        for tech in raw
        if tech != winner
        for flip in [price_flip(raw, weights, tech, tco_per_change(tech))]
        if flip is not None
    ]
    if cuts:
        cut = max(cuts, key=lambda flip: (flip.change, flip.technology))
        points.append(
            FlipPoint(
                kind="price",
                description=described(cut.technology, cut.change, cut.winner_after),
                value=cut.change * 100.0,
            )
        )
    else:
        points.append(
            FlipPoint(
                kind="price",
                description="no price cut of another candidate's network (down to -100 %)"
                " flips the choice",
            )
        )
    return points


def _sizes(gpus: int, gpus_per_node: int) -> tuple[list[int], list[int]]:
    up = [gpus * 2**k for k in range(1, CLUSTER_SIZE_STEPS + 1)]
    down: list[int] = []
    for k in range(1, CLUSTER_SIZE_STEPS + 1):
        size = (gpus // 2**k) // gpus_per_node * gpus_per_node
        if size < gpus_per_node or size in down or size >= gpus:
            break
        down.append(size)
    return up, down


def _size_flips(
    valid: ValidScenario, weights: Mapping[Criterion, float], winner: str, reevaluate: Reevaluate
) -> list[FlipPoint]:
    gpus = valid.spec.cluster.gpus
    up, down = _sizes(gpus, valid.spec.cluster.gpus_per_node)
    points: list[FlipPoint] = []
    tried = [gpus]
    notes: list[str] = []
    for sizes in (up, down):
        previous = gpus
        for size in sizes:
            try:
                other = _winner(reevaluate(size), weights)
            except FabricPlanError as exc:
                notes.append(f"at {size:,} GPUs no evaluation ({exc.what} [{exc.code}])")
                break
            tried.append(size)
            if other != winner:
                points.append(
                    FlipPoint(
                        kind="cluster_size",
                        description=f"at {size:,} GPUs {other} ranks first ({winner} still does"
                        f" at {previous:,}; sizes tried double or halve)",
                        value=float(size),
                    )
                )
                break
            previous = size
    if not points:
        note = f"; {'; '.join(notes)}" if notes else ""
        points.append(
            FlipPoint(
                kind="cluster_size",
                description=f"no flip between {min(tried):,} and {max(tried):,} GPUs (tried"
                f" {', '.join(f'{n:,}' for n in sorted(tried))}){note}",
            )
        )
    return points


def _team_flips(
    valid: ValidScenario,
    weights: Mapping[Criterion, float],
    winner: str,
    reevaluate_team: ReevaluateTeam,
) -> list[FlipPoint]:
    team = valid.spec.team
    points: list[FlipPoint] = []
    for field in TeamSpec.model_fields:
        now = getattr(team, field)
        for level in get_args(Experience):
            if level == now:
                continue
            try:
                other = _winner(reevaluate_team(team.model_copy(update={field: level})), weights)
            except FabricPlanError:
                continue
            if other != winner:
                points.append(
                    FlipPoint(
                        kind="team",
                        description=f"with team.{field}: {level} (now {now}) {other} ranks first"
                        f" instead of {winner}",
                    )
                )
    if not points:
        points.append(
            FlipPoint(
                kind="team",
                description="no single change of team experience (team."
                + ", team.".join(TeamSpec.model_fields)
                + ": none/some/expert) flips the choice",
            )
        )
    return points


def decide(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    reevaluate: Reevaluate | None = None,
    reevaluate_team: ReevaluateTeam | None = None,
) -> Recommendation:
    """Rank the candidates under the spec's priorities, with reasons and flip points.

    Parameters
    ----------
    evaluations
        One evaluation per technology.
    valid
        The scenario (priorities, cluster size, team).
    reevaluate
        Optional: evaluations at another GPU count; doubling and halving sizes are tried
        (:data:`CLUSTER_SIZE_STEPS` each way) to find one where the winner changes.
    reevaluate_team
        Optional: evaluations with another team experience; every single-field change is tried.

    Returns
    -------
    Recommendation
        The winner, the ranking with every criterion's raw figure, score and weight, the reasons
        and the flip points (``value``: the new weight, the price change in %, or the GPU count;
        ``None`` when nothing in the range searched flips it).

    Examples
    --------
    >>> from fabricplan.analytic.cost import _tiny_leaf_spine, fabric_cost
    >>> from fabricplan.backends import FakeBackend
    >>> from fabricplan.model.results import OpsAssessment
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}})
    >>> design = _tiny_leaf_spine()
    >>> ops = OpsAssessment(tasks=(), burden=0.2, engineer_years_per_year=0.3, vendors=1,
    ...                     ecosystem_fit=0.5)
    >>> perf = FakeBackend().perform(valid, design, PerfRequest(sizes_bytes=(8,)))
    >>> only = Evaluation(technology="infiniband", design=design,
    ...                   cost=fabric_cost(valid, design), performance=perf, ops=ops)
    >>> rec = decide([only], valid)
    >>> rec.technology, len(rec.ranking), rec.flips
    ('infiniband', 1, ())
    """
    _check(evaluations)
    priorities = valid.spec.priorities
    weights = criterion_weights(priorities)
    raw = raw_figures(evaluations)
    scores = criterion_scores(raw)
    totals = weighted_totals(scores, weights)
    order = ranking(totals)
    ranked = tuple(
        RankedOption(
            technology=e.technology,
            total=totals[e.technology],
            scores=tuple(
                CriterionScore(
                    criterion=c,
                    raw=raw[e.technology][c],
                    unit=UNITS[c],
                    score=scores[e.technology][c],
                    weight=weights[c],
                )
                for c in CRITERIA
            ),
        )
        for e in sorted(evaluations, key=lambda e: order.index(e.technology))
    )
    winner = order[0]
    if len(evaluations) == 1:
        return Recommendation(
            technology=ranked[0].technology,
            ranking=ranked,
            reasons=(
                f"only {winner} was evaluated: it ranks first by default; there is nothing to"
                " compare it with, so no change of weights, prices, cluster size or team can"
                " flip the choice.",
            ),
            weights=dict(weights),
        )
    reasons = list(
        decision_reasons(
            order,
            raw,
            scores,
            totals,
            weights,
            priorities_label(priorities),
            performance_label(evaluations),
            {e.technology: e.design for e in evaluations},
            tco_label(evaluations),
        )
    )
    lead = totals[order[0]] - totals[order[1]]
    if lead < NEAR_TIE_LEAD:
        reasons.insert(
            0,
            f"This is a near tie: {order[0]} leads {order[1]} by {lead:.3f} of 1 — within what"
            " the estimated prices and model constants can move; decide on your own quotes"
            " (cost.price_book) and the flip points below.",
        )
    flips = _weight_flips(scores, weights) + _price_flips(evaluations, raw, weights, winner)
    if reevaluate is not None:
        flips += _size_flips(valid, weights, winner, reevaluate)
    else:
        reasons.append("Cluster size was not re-evaluated (no re-evaluation given).")
    if reevaluate_team is not None:
        flips += _team_flips(valid, weights, winner, reevaluate_team)
    else:
        reasons.append("Team experience was not re-evaluated (no re-evaluation given).")
    return Recommendation(
        technology=ranked[0].technology,
        ranking=ranked,
        reasons=tuple(reasons),
        flips=tuple(flips),
        weights=dict(weights),
    )


def scenario_with_gpus(valid: ValidScenario, gpus: int) -> ValidScenario:
    """``valid`` with another GPU count (checked again; the resolved hardware is kept).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> scenario_with_gpus(parse_spec({"cluster": {"gpus": 1024}}), 2048).spec.cluster.nodes
    256
    """
    data = valid.spec.model_dump()
    data["cluster"]["gpus"] = gpus
    return replace_spec(valid, data, "cluster size")


def scenario_with_team(valid: ValidScenario, team: TeamSpec) -> ValidScenario:
    """``valid`` with another team experience (checked again)."""
    data = valid.spec.model_dump()
    data["team"] = team.model_dump()
    return replace_spec(valid, data, "team")


def recommend(
    valid: ValidScenario,
    evaluations: Sequence[Evaluation],
    backend: str = "analytic",
    request: PerfRequest | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
) -> Recommendation:
    """Decide on ``evaluations`` of ``valid``, re-evaluating to explore cluster size and team.

    The re-evaluations use the same backend and request as ``evaluations`` were made with
    (:data:`CLUSTER_SIZE_STEPS` doublings and halvings, and each single change of team
    experience: up to 10 more evaluations of every technology).

    Parameters
    ----------
    valid
        The scenario.
    evaluations
        Its evaluations (``fabricplan.evaluate.evaluate_feasible(valid, backend, request)``).
    backend
        Performance backend name the evaluations came from.
    request
        What the backend was asked (default :class:`PerfRequest`).
    infeasible
        Technologies of the spec that could not be designed; they are said first in the reasons
        and kept in the result, and at other sizes the same rule applies (a technology that
        cannot be designed there does not rank).

    Returns
    -------
    Recommendation
        As :func:`decide`, with the cluster-size and team flip points.

    Examples
    --------
    >>> from fabricplan.evaluate import evaluate
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> rec = recommend(valid, evaluate(valid, backend="fake"), backend="fake")
    >>> sorted({flip.kind for flip in rec.flips})
    ['cluster_size', 'price', 'team', 'weight']
    """
    from fabricplan.evaluate import evaluate_feasible  # here: it pulls in every model

    decision = decide(
        evaluations,
        valid,
        reevaluate=lambda gpus: evaluate_feasible(
            scenario_with_gpus(valid, gpus), backend, request
        )[0],
        reevaluate_team=lambda team: evaluate_feasible(
            scenario_with_team(valid, team), backend, request
        )[0],
    )
    if not infeasible:
        return decision
    said = tuple(f"{o.technology} cannot be built as specified: {o.message}" for o in infeasible)
    return decision.model_copy(
        update={"reasons": said + decision.reasons, "infeasible": tuple(infeasible)}
    )
