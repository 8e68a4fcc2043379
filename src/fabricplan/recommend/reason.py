"""The reasons for a ranking, as sentences in dollars and seconds.

The winner's lead over the runner-up is split into the money terms (capex, energy, support,
staff, GPU time, growth, configuration risk, worth): the differences sum to the difference of
the totals, so a reason says how much each term weighed, in dollars.

>>> usd_short(41_234_567.0), usd_short(950_000.0), usd_short(-2_500.0)
('$41.2M', '$950k', '-$2.50k')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fabricplan.model.results import Evaluation, OptionMoney, RankedOption, StepDifference
from fabricplan.model.scenario import ValidScenario
from fabricplan.recommend.money import network_money_usd, step_difference


def usd_short(value: float) -> str:
    """Dollars with three significant figures and a k/M/B suffix.

    Examples
    --------
    >>> usd_short(1_250_000_000.0), usd_short(512.0)
    ('$1.25B', '$512')
    """
    sign = "-" if value < 0 else ""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k"), (1.0, "")):
        if abs(value) >= scale or scale == 1.0:
            return f"{sign}${_three_figures(abs(value) / scale)}{suffix}"
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


TERMS: tuple[tuple[str, str], ...] = (
    ("capex_usd", "capex"),
    ("energy_usd", "energy"),
    ("support_usd", "support"),
    ("staff_usd", "staff"),
    ("gpu_time_usd", "GPU time the fabric idles"),
    ("growth_usd", "growth"),
    ("config_risk_usd", "configuration risk"),
)
"""The money terms of :class:`~fabricplan.model.results.OptionMoney`, in the order outputs list
them, with their names in sentences."""


def term_differences(winner: OptionMoney, rival: OptionMoney) -> list[tuple[str, float]]:
    """``rival - winner`` per money term (positive: the winner spends less), largest first;
    the worth is a negative term.

    Examples
    --------
    >>> a = OptionMoney(technology="roce_v2", years=5, capex_usd=10.0, energy_usd=1.0,
    ...     support_usd=0.0, staff_usd=0.0, gpu_time_usd=5.0, total_usd=16.0, step_s=1.0,
    ...     step_low_s=1.0, step_high_s=1.0)
    >>> b = a.model_copy(update={"technology": "infiniband", "capex_usd": 12.0,
    ...     "gpu_time_usd": 4.0, "total_usd": 17.0})
    >>> term_differences(a, b)
    [('capex', 2.0), ('GPU time the fabric idles', -1.0)]
    """
    diffs = [(name, getattr(rival, field) - getattr(winner, field)) for field, name in TERMS]
    diffs.append(("user-set worth", winner.worth_usd - rival.worth_usd))
    return sorted(((n, d) for n, d in diffs if abs(d) >= 0.5), key=lambda pair: -abs(pair[1]))


def difference_sentence(winner: RankedOption, rival: RankedOption) -> str:
    """Whether the two steps differ by more than the band of their difference, in words
    (:func:`~fabricplan.recommend.money.step_difference` of the slower against the faster)."""
    fast, slow = (winner, rival) if winner.money.step_s <= rival.money.step_s else (rival, winner)
    return difference_words(slow.technology, step_difference(slow.money, fast.money))


def difference_words(slower: str, gap: StepDifference) -> str:
    """One :class:`~fabricplan.model.results.StepDifference` in words.

    >>> gap = StepDifference(versus="infiniband", difference_s=0.1, difference_pct=9.1,
    ...     band_s=0.05, band_pct=4.5, inside=False)
    >>> print(difference_words("roce_v2", gap))  # doctest: +NORMALIZE_WHITESPACE
    roce_v2 step 9.1 % longer than infiniband's (band of the difference ±4.5 %):
    outside the uncertainty, infiniband wins on step time.
    """
    said = (
        f"{slower} step {gap.difference_pct:.1f} % longer than {gap.versus}'s"
        f" (band of the difference ±{gap.band_pct:.1f} %): "
    )
    if gap.inside:
        return said + "inside the uncertainty, a tie on performance."
    return said + f"outside the uncertainty, {gap.versus} wins on step time."


def comparison_sentence(winner: RankedOption, rival: RankedOption, preset: str) -> list[str]:
    """How the winner compares with the runner-up: the step, then every money term."""
    w, r = winner.money, rival.money
    lead = r.total_usd - w.total_usd
    step = (
        f"Step {seconds_short(w.step_s)} against {seconds_short(r.step_s)} for"
        f" {rival.technology} (bands {seconds_short(w.step_low_s)}-{seconds_short(w.step_high_s)}"
        f" and {seconds_short(r.step_low_s)}-{seconds_short(r.step_high_s)}). "
        + difference_sentence(winner, rival)
    )
    fastest = winner.versus_fastest
    if fastest is not None and fastest.versus != rival.technology:
        step += f" Against the fastest: {difference_words(winner.technology, fastest)}"
    total = (
        f"Total over {w.years} years {usd_short(w.total_usd)} against"
        f" {usd_short(r.total_usd)}: {winner.technology}"
        f" {'saves' if lead >= 0 else 'costs'} {usd_short(abs(lead))}."
    )
    if preset == "cost_sensitive":
        total += (
            f" Without the value of GPU time (what cost_sensitive minimises):"
            f" {usd_short(network_money_usd(w))} against {usd_short(network_money_usd(r))}."
        )
    parts = term_differences(w, r)
    if parts:
        pieces = [f"{name} {'-' if d > 0 else '+'}{usd_short(abs(d))}" for name, d in parts]
        total += f" {winner.technology} against {rival.technology}: " + ", ".join(pieces) + "."
    if w.gpu_time_in_domain_usd or r.gpu_time_in_domain_usd:
        total += (
            f" NVLink-only communication idles {usd_short(w.gpu_time_in_domain_usd)} of GPU time"
            " on every fabric; it is shown, not counted as a difference."
        )
    return [step, total]


def not_money(evaluations: Sequence[Evaluation], valid: ValidScenario) -> tuple[str, ...]:
    """What the decision did not price, said apart with its basis."""
    lines = []
    for e in evaluations:
        tech = valid.technologies[e.technology]
        lines.append(
            f"{e.technology}: {e.ops.vendors} switch vendor(s) ({', '.join(tech.vendors)}), public"
            f" cloud availability {tech.cloud_availability!r} (catalog technologies.yaml): not"
            " money; set decision.require (min_vendors, cloud_availability) to make it a"
            " constraint, or decision.worth_usd to give it a value"
        )
    return tuple(lines)
