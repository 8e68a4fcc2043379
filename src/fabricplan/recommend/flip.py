"""The smallest change of one weight, or of one candidate's network price, that changes the winner.

Weights. Move the weight of criterion ``c`` to ``t`` and rescale the other weights in proportion
so that they still sum to ``1 - t``. Candidate ``i``'s total is then a straight line in ``t``::

    T_i(t) = t * s_ic + (1 - t) * A_i,     A_i = sum over k != c of (w_k / (1 - w_c)) * s_ik

(``A_i`` is the candidate's mean score over the other criteria under their rescaled weights; when
``w_c = 1`` the other criteria are weighted equally). The winner ``W`` and a rival ``j`` are
equal where ``T_W(t) = T_j(t)``, i.e. at ``t = b / (b - a)`` with ``a = s_Wc - s_jc`` and
``b = A_W - A_j``. The nearest such ``t`` in [0, 1] over all rivals is where the winner changes:
it is solved exactly, not searched.

Prices. Scale one candidate's network capex by ``1 + p``; its TCO moves by ``p`` times
(capex + years x support a year), since support is a fraction of capex. Scores are ratios to the
best candidate, so a total is not linear in ``p``, but the winner's lead only shrinks as its own
price rises (and a rival's lead only grows as the rival's price falls); the flip is found by
bisection to float precision.

>>> scores = {"a": {"performance": 1.0, "tco": 0.5}, "b": {"performance": 0.8, "tco": 1.0}}
>>> flip = weight_flip(scores, {"performance": 0.5, "tco": 0.5}, "performance")
>>> round(flip.weight, 4), flip.winner_before, flip.winner_after  # 0.5 t = (1 - t) 0.2 ...
(0.7143, 'b', 'a')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fabricplan.model.scenario import Criterion
from fabricplan.recommend.score import (
    RawTable,
    criterion_scores,
    ranking,
    weighted_totals,
)

MAX_PRICE_RISE = 10.0
"""Largest network-price rise searched, as a fraction (+1,000 %)."""

FLIP_TIE_TOLERANCE = 1e-9
"""Totals this close at a computed flip weight are level (the root itself carries float error)."""

BISECTION_STEPS = 100
"""Halvings of the price interval (far beyond float precision on [-1, 10])."""


@dataclass(frozen=True)
class WeightFlip:
    """Where moving one criterion's weight changes the winner."""

    criterion: Criterion
    weight_now: float
    weight: float
    """The weight at which the two totals are equal (the flip point)."""
    winner_before: str
    winner_after: str
    raise_weight: bool
    """True when the flip lies above the current weight (the weight must be raised)."""
    tied_now: bool = False
    """The winner is tied now (won on the name tie-break): any move in the flip's direction
    flips it."""


@dataclass(frozen=True)
class PriceFlip:
    """Where changing one candidate's network price changes the winner."""

    technology: str
    change: float
    """Fractional change of that candidate's network capex (0.25 = +25 %)."""
    winner_before: str
    winner_after: str


def rescaled_weights(
    weights: Mapping[Criterion, float], criterion: Criterion, weight: float
) -> dict[Criterion, float]:
    """``weights`` with ``criterion`` set to ``weight`` and the others rescaled in proportion
    to share ``1 - weight`` (equally when they are all 0).

    Examples
    --------
    >>> moved = rescaled_weights({"performance": 0.5, "tco": 0.3, "capex": 0.2}, "performance", 0.8)
    >>> {c: round(w, 6) for c, w in moved.items()}
    {'performance': 0.8, 'tco': 0.12, 'capex': 0.08}
    """
    rest = {c: w for c, w in weights.items() if c != criterion}
    rest_total = sum(rest.values())
    if rest_total > 0:
        shares = {c: w / rest_total for c, w in rest.items()}
    else:
        shares = dict.fromkeys(rest, 1.0 / len(rest)) if rest else {}
    result: dict[Criterion, float] = {}
    for c in weights:
        result[c] = weight if c == criterion else (1.0 - weight) * shares[c]
    return result


def _other_mean(
    row: Mapping[Criterion, float], weights: Mapping[Criterion, float], criterion: Criterion
) -> float:
    shares = rescaled_weights(weights, criterion, 0.0)
    return sum(shares[c] * row.get(c, 0.0) for c in shares if c != criterion)


def weight_flip(
    scores: RawTable, weights: Mapping[Criterion, float], criterion: Criterion
) -> WeightFlip | None:
    """The weight of ``criterion`` nearest to its current one at which the winner changes.

    Parameters
    ----------
    scores
        Technology -> criterion -> score (1 = best).
    weights
        Current weights (summing to 1), with an entry for ``criterion``.
    criterion
        The criterion whose weight moves; the others are rescaled in proportion.

    Returns
    -------
    WeightFlip or None
        None when no weight in [0, 1] changes the winner.

    Examples
    --------
    >>> scores = {"a": {"capex": 1.0, "tco": 0.9}, "b": {"capex": 0.9, "tco": 1.0}}
    >>> weight_flip(scores, {"capex": 0.6, "tco": 0.4}, "capex").weight  # equal at 0.5
    0.5
    """
    t_now = weights[criterion]
    totals = weighted_totals(scores, weights)
    winner = ranking(totals)[0]
    line = {
        tech: (row.get(criterion, 0.0), _other_mean(row, weights, criterion))
        for tech, row in scores.items()
    }

    def total_at(tech: str, t: float) -> float:
        s, mean = line[tech]
        return t * s + (1.0 - t) * mean

    best: WeightFlip | None = None
    for rival in scores:
        if rival == winner:
            continue
        a = line[winner][0] - line[rival][0]
        b = line[winner][1] - line[rival][1]
        slope = a - b  # of T_W - T_rival along t
        if slope == 0:
            continue
        root = b / (b - a)
        tied_now = abs(root - t_now) <= FLIP_TIE_TOLERANCE
        if tied_now:
            root = t_now
        elif not 0.0 <= root <= 1.0:
            continue
        direction = (-1.0 if slope > 0 else 1.0) if tied_now else (1.0 if root > t_now else -1.0)
        # Just beyond the root (in the direction of travel) the leader is, among those level
        # with the winner at the root, the one whose total rises fastest in that direction.
        level = [
            tech
            for tech in scores
            if abs(total_at(tech, root) - total_at(winner, root)) <= FLIP_TIE_TOLERANCE
        ]
        after = min(level, key=lambda tech: (-direction * (line[tech][0] - line[tech][1]), tech))
        if after == winner or not 0.0 <= root + direction * 1e-12 <= 1.0:
            continue  # a tie at a bound of [0, 1] is not a flip: the weight cannot move past it
        flip = WeightFlip(criterion, t_now, root, winner, after, direction > 0, tied_now)
        if best is None or abs(root - t_now) < abs(best.weight - t_now):
            best = flip
    return best


def _priced(raw: RawTable, technology: str, change: float, tco_usd_per_change: float) -> RawTable:
    table = {tech: dict(row) for tech, row in raw.items()}
    table[technology]["capex"] = raw[technology]["capex"] * (1.0 + change)
    table[technology]["tco"] = raw[technology]["tco"] + change * tco_usd_per_change
    return table


def price_flip(
    raw: RawTable,
    weights: Mapping[Criterion, float],
    technology: str,
    tco_usd_per_change: float,
) -> PriceFlip | None:
    """The smallest change of ``technology``'s network capex that changes the winner.

    For the winner, the rise (up to :data:`MAX_PRICE_RISE`) that makes another candidate first;
    for any other candidate, the cut (down to -100 %) that makes it first.

    Parameters
    ----------
    raw
        Technology -> criterion -> raw figure (capex and TCO in dollars).
    weights
        Criterion weights.
    technology
        The candidate whose price changes.
    tco_usd_per_change
        TCO change for a change of 1.0 (+100 %) of its capex: capex + years x support a year.

    Returns
    -------
    PriceFlip or None
        None when no change in the searched range flips the winner.

    Examples
    --------
    >>> raw = {"a": {"capex": 100.0, "tco": 100.0}, "b": {"capex": 120.0, "tco": 120.0}}
    >>> flip = price_flip(raw, {"capex": 0.5, "tco": 0.5}, "a", 100.0)
    >>> round(flip.change, 6), flip.winner_after  # a at 120 ties b; the name keeps a first
    (0.2, 'b')
    """

    def first(change: float) -> str:
        table = _priced(raw, technology, change, tco_usd_per_change)
        return ranking(weighted_totals(criterion_scores(table), weights))[0]

    winner = first(0.0)
    if winner == technology:
        low, high = 0.0, MAX_PRICE_RISE  # first(low) is the winner, first(high) is not

        def flipped(change: float) -> bool:
            return first(change) != technology

    else:
        low, high = 0.0, -1.0

        def flipped(change: float) -> bool:
            return first(change) == technology

    if not flipped(high):
        return None
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if flipped(middle):
            high = middle
        else:
            low = middle
    return PriceFlip(technology, high, winner, first(high))
