"""The reasons for a ranking, as sentences with numbers.

Each criterion ``c`` adds ``w_c x (s_winner,c - s_rival,c)`` to the winner's lead over a rival;
these contributions sum to the difference of the totals, so a reason can say how much each
criterion weighed.

>>> usd_short(41_234_567.0), usd_short(950_000.0)
('$41.2M', '$950k')
>>> comparison("tco", 41.2e6, 59.8e6, "step time")
'31.1 % less TCO ($41.2M vs $59.8M)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from fabricplan.model.fabric import FabricDesign
from fabricplan.model.scenario import Criterion
from fabricplan.recommend.score import SCALABILITY_GROWTH_CAP, RawTable
from fabricplan.recommend.weights import CRITERIA


def usd_short(value: float) -> str:
    """Dollars with three significant figures and a k/M/B suffix.

    Examples
    --------
    >>> usd_short(1_250_000_000.0), usd_short(512.0)
    ('$1.25B', '$512')
    """
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, "")):
        if abs(value) >= scale or scale == 1.0:
            return f"${_three_figures(value / scale)}{suffix}"
    raise AssertionError("unreachable")  # pragma: no cover


def _three_figures(value: float) -> str:
    """``value`` with three significant figures, trailing zeros kept (19.0, 7.69, 512)."""
    if value == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def seconds_short(value_s: float) -> str:
    """A time with four significant figures in s, ms or µs (step times often differ by < 1 %).

    Examples
    --------
    >>> seconds_short(1.2345), seconds_short(0.0123), seconds_short(4.5e-5)
    ('1.234 s', '12.30 ms', '45.00 µs')
    """
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value_s >= scale or scale == 1e-6:
            number = value_s / scale
            decimals = max(0, 3 - math.floor(math.log10(number))) if number > 0 else 0
            return f"{number:.{decimals}f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def points(value: float) -> str:
    """A share of the total with its sign, readable however small.

    Examples
    --------
    >>> points(0.0703), points(-0.000253)
    ('+0.070', '-2.5e-04')
    """
    return f"{value:+.3f}" if abs(value) >= 5e-4 or value == 0 else f"{value:+.1e}"


def _relative_pct(mine: float, theirs: float) -> float:
    return abs(mine - theirs) / theirs * 100.0 if theirs else 100.0


def comparison(
    criterion: Criterion,
    mine: float,
    theirs: float,
    performance_label: str,
    tco_label: str = "TCO",
) -> str:
    """How one candidate's raw figure compares with another's, as a noun phrase.

    Parameters
    ----------
    criterion
        The criterion.
    mine, theirs
        The two raw figures (see :mod:`fabricplan.recommend.score`).
    performance_label
        What the performance figure is (``step time`` or ``all_reduce time at ...``).

    Examples
    --------
    >>> comparison("performance", 1.04, 1.0, "step time")
    'a 4.0 % longer step time (1.040 s vs 1.000 s)'
    >>> comparison("scalability", 8.0, 2.0, "step time")
    'more room to grow (8.00x the cluster vs 2.00x; growth above 4x counts as 4x)'
    """
    pct = _relative_pct(mine, theirs)
    if criterion == "performance":
        word = "shorter" if mine < theirs else "longer"
        return (
            f"a {pct:.1f} % {word} {performance_label}"
            f" ({seconds_short(mine)} vs {seconds_short(theirs)})"
        )
    if criterion in ("capex", "tco"):
        word = "less" if mine < theirs else "more"
        name = tco_label if criterion == "tco" else "capex"
        return f"{pct:.1f} % {word} {name} ({usd_short(mine)} vs {usd_short(theirs)})"
    if criterion == "scalability":
        if mine == 0.0:
            return "a design that breaks a hard limit (see its findings)"
        if theirs == 0.0:
            return "a design within every hard limit (the other breaks one)"
        word = "more" if mine > theirs else "less"
        capped = (
            f"; growth above {SCALABILITY_GROWTH_CAP:g}x counts as {SCALABILITY_GROWTH_CAP:g}x"
            if max(mine, theirs) > SCALABILITY_GROWTH_CAP
            else ""
        )
        return f"{word} room to grow ({mine:.2f}x the cluster vs {theirs:.2f}x{capped})"
    if criterion == "operations":
        word = "lighter" if mine < theirs else "heavier"
        return f"a {word} operations burden ({mine:.2f} vs {theirs:.2f} on 0-1)"
    word = "better" if mine > theirs else "weaker"
    return f"a {word} ecosystem fit ({mine:.2f} vs {theirs:.2f} on 0-1)"


def contributions(
    scores: RawTable, weights: Mapping[Criterion, float], winner: str, rival: str
) -> dict[Criterion, float]:
    """What each criterion adds to ``winner``'s lead over ``rival`` (they sum to the lead).

    Examples
    --------
    >>> scores = {"a": {"tco": 1.0, "capex": 0.5}, "b": {"tco": 0.5, "capex": 1.0}}
    >>> contributions(scores, {"tco": 0.7, "capex": 0.3}, "a", "b")
    {'capex': -0.15, 'tco': 0.35}
    """
    return {
        c: weights.get(c, 0.0) * (scores[winner][c] - scores[rival][c])
        for c in CRITERIA
        if c in scores[winner]
    }


def decision_reasons(
    order: Sequence[str],
    raw: RawTable,
    scores: RawTable,
    totals: Mapping[str, float],
    weights: Mapping[Criterion, float],
    weights_label: str,
    performance_label: str,
    designs: Mapping[str, FabricDesign],
    tco_label: str = "TCO",
) -> tuple[str, ...]:
    """Sentences saying which criteria decided the ranking and by how much.

    Parameters
    ----------
    order
        Technologies best first (at least two).
    raw, scores
        Raw figures and scores per technology and criterion.
    totals
        Weighted total per technology.
    weights
        Criterion weights (summing to 1).
    weights_label
        How the weights were chosen (``preset 'balanced'``).
    performance_label
        What the performance figure is.
    designs
        Each technology's design (for error findings).
    tco_label
        What the TCO figure is (``TCO`` or ``TCO with idle GPU time``).

    Returns
    -------
    tuple of str
        The headline, the deciding trade-off, one sentence per criterion that counted, the rest
        of the ranking and any design that breaks a hard limit.
    """
    winner, rival = order[0], order[1]
    weight_text = ", ".join(f"{c} {weights[c]:.2f}" for c in CRITERIA if c in weights)
    reasons = [
        f"{winner} ranks first with {totals[winner]:.3f} against {totals[rival]:.3f} for {rival}"
        f" (weighted sum of scores, 1 = best candidate on a criterion; {weights_label}:"
        f" {weight_text})."
    ]
    parts = contributions(scores, weights, winner, rival)

    def phrase(c: Criterion) -> str:
        return comparison(c, raw[winner][c], raw[rival][c], performance_label, tco_label)

    pros = sorted((c for c in parts if parts[c] > 0), key=lambda c: -parts[c])
    cons = sorted((c for c in parts if parts[c] < 0), key=lambda c: parts[c])
    if not pros:
        reasons.append(
            f"{winner} and {rival} are tied; {winner} is first by the tie-break"
            " (technology names in alphabetical order)."
        )
    else:
        top = pros[0]
        sentence = (
            f"{winner} has {phrase(top)}, which at weight {weights[top]:.2f} adds"
            f" {parts[top]:.3f} to its lead"
        )
        if cons:
            against = sum(-parts[c] for c in cons)
            helpers = pros[1:]
            if parts[top] >= against or not helpers:
                sentence += f" and outweighs {phrase(cons[0])}"
            else:
                sentence += f"; with {', '.join(helpers)} it outweighs {phrase(cons[0])}"
            sentence += f", worth {points(parts[cons[0]])} at weight {weights[cons[0]]:.2f}"
            more = len(cons) - 1
            if more:
                sentence += f", and {more} smaller disadvantage{'s' if more > 1 else ''}"
        else:
            sentence += f"; {winner} is no worse than {rival} on any criterion"
        reasons.append(sentence + ".")
    for c in sorted(parts, key=lambda c: -abs(parts[c])):
        if parts[c] != 0:
            reasons.append(
                f"{c}: {points(parts[c])} for {winner} at weight {weights[c]:.2f}"
                f" ({winner} has {phrase(c)})."
            )
    for place, tech in enumerate(order[2:], start=3):
        reasons.append(f"#{place} {tech} with {totals[tech]:.3f}.")
    for tech in order:
        for finding in designs[tech].findings:
            if finding.severity == "error":
                reasons.append(
                    f"{tech}: the design breaks a hard limit ({finding.code}: {finding.message});"
                    " its scalability score is 0."
                )
    return tuple(reasons)
