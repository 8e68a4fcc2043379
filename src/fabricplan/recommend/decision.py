"""The decision: one economic scale, presets defined in its terms, flip points in its units.

Every candidate's money over the horizon comes from :mod:`fabricplan.recommend.money`. A preset
says what is minimised and which constraints apply; it never names a technology:

- ``balanced``: the least total money (capex, energy, support, staff, the GPU time the fabric
  idles, growth, configuration risk, minus the user's money-equivalents);
- ``max_performance``: the shortest step, unless the difference is inside the model's stated
  uncertainty; among candidates level with the fastest, the least total money. Compute and
  NVLink-only communication are the same on every fabric and cancel in the difference, so the
  band of the difference is that of the scale-out exposed times, the two options' bands
  combined as independent errors (:func:`fabricplan.recommend.money.step_difference`);
- ``cost_sensitive``: the least money without the value of GPU time (capex, energy, support,
  staff, growth, configuration risk's staff hours) among candidates whose step is at most
  ``decision.performance_floor`` longer than the fastest;
- ``ethernet_team``: ``balanced``, with the team taken as new to InfiniBand where the spec does
  not say (``team.infiniband: none``): its staff and risk money follow from the one operations
  model (applied in :func:`fabricplan.spec.resolve`);
- ``cloud_hybrid``: ``balanced``, with the constraint that public clouds offer the technology
  (cloud availability not ``none``), so the same fabric runs on premises and in the cloud.

Constraints (``decision.require``, the preset's, a growth target that cannot be reached, a hard
design limit) are not money: a candidate that misses one ranks after every candidate that meets
them all, and the reasons say what the constraint costs. Ties (equal to the cent, or to the
picosecond for steps) go to the technology name that sorts first.

>>> from fabricplan.spec import parse_spec
>>> decide([], parse_spec({"cluster": {"gpus": 16}}))
Traceback (most recent call last):
...
fabricplan.errors.ModelError: decide: no candidate to rank; evaluate at least one technology [FP570]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from fabricplan.backends import Backend
from fabricplan.errors import FabricPlanError, ModelError
from fabricplan.model.results import (
    Evaluation,
    FlipPoint,
    GrowthRiskRecord,
    InfeasibleOption,
    OptionMoney,
    PerfRequest,
    RankedOption,
    Recommendation,
)
from fabricplan.model.scenario import (
    Experience,
    LosslessSpec,
    PriorityPreset,
    TeamSpec,
    ValidScenario,
)
from fabricplan.recommend.money import (
    money_table,
    network_money_usd,
    repriced,
    step_difference,
)
from fabricplan.recommend.reason import (
    comparison_sentence,
    not_money,
    seconds_short,
    usd_short,
)
from fabricplan.spec import replace_spec

if TYPE_CHECKING:
    from fabricplan.search_cache import SearchCache

CLUSTER_SIZE_STEPS = 3
"""Doublings (and halvings) of the cluster tried when looking for a size that flips the choice."""
GROWTH_FACTORS = (2, 4, 8)
"""Growth targets tried (multiples of today's size) when the spec asks for none."""
MAX_GPU_HOUR_FACTOR = 100.0
"""Largest GPU-hour price searched, as a multiple of today's (or of 1 USD when it is 0)."""
CENT_DIGITS = 2
STEP_DIGITS = 12

OBJECTIVES: dict[PriorityPreset, str] = {
    "balanced": "the least total money over the horizon (network, staff, GPU time the fabric"
    " idles, growth, configuration risk)",
    "max_performance": "the shortest step, unless inside the model's uncertainty; then the"
    " least total money",
    "cost_sensitive": "the least money without the value of GPU time, among candidates within"
    " the performance floor",
    "ethernet_team": "the least total money, with the team taken as new to InfiniBand where the"
    " spec does not say",
    "cloud_hybrid": "the least total money among technologies public clouds offer",
}
"""What each preset minimises, in words (docs/models.md, "The decision")."""

AVAILABILITY_ORDER = {"none": 0, "some": 1, "wide": 2}

FlipKind = Literal["growth", "cluster_size", "team", "configuration"]
Reevaluate = Callable[[ValidScenario], Sequence[Evaluation]]
"""Evaluations of the same candidates for a changed scenario."""
Searched = Mapping[str, Sequence[GrowthRiskRecord | None]]
"""Per technology, the growth and risk terms of each of its ``design.alternatives``
(:func:`fabricplan.evaluate.searched_growth_risk`)."""


@dataclass(frozen=True)
class _OwnTerms:
    """How much a searched design's growth and configuration-risk terms exceed the kept
    design's: growth capex, risk staff money and risk GPU-hours (priced at the GPU-hour)."""

    growth_usd: float = 0.0
    risk_staff_usd: float = 0.0
    risk_gpu_hours: float = 0.0

    def usd_at(self, gpu_hour_usd: float) -> float:
        return self.growth_usd + self.risk_staff_usd + self.risk_gpu_hours * gpu_hour_usd


def _own_terms(evaluation: Evaluation, record: GrowthRiskRecord | None) -> _OwnTerms | None:
    """The searched design's terms against the kept design's (all 0 without a record: the
    kept design's are taken); ``None`` when it cannot reach the growth target the kept design
    reaches (keeping it would miss that constraint)."""
    if record is None:
        return _OwnTerms()
    growth = evaluation.growth
    kept_growth = growth.added_capex_usd if growth and growth.added_capex_usd is not None else 0.0
    if record.growth_usd is None and growth is not None and growth.reachable:
        return None
    return _OwnTerms(
        growth_usd=(record.growth_usd or 0.0) - kept_growth,
        risk_staff_usd=record.config_risk_staff_usd - evaluation.cost.config_risk_staff_usd,
        risk_gpu_hours=record.config_risk_gpu_hours - evaluation.cost.config_risk_gpu_hours,
    )


def _with_own_terms(money: OptionMoney, terms: _OwnTerms) -> OptionMoney:
    """``money`` (at its GPU-hour price) with a searched design's growth and risk terms."""
    price = money.gpu_hour_usd
    risk_usd = terms.risk_staff_usd + terms.risk_gpu_hours * price
    return money.model_copy(
        update={
            "growth_usd": money.growth_usd + terms.growth_usd,
            "config_risk_usd": money.config_risk_usd + risk_usd,
            "config_risk_gpu_hours": money.config_risk_gpu_hours + terms.risk_gpu_hours,
            "total_usd": money.total_usd + terms.usd_at(price),
        }
    )


def _records(
    searched: Searched | None, evaluation: Evaluation
) -> Sequence[GrowthRiskRecord | None]:
    records = (searched or {}).get(evaluation.technology, ())
    if len(records) != len(evaluation.design.alternatives):
        return [None] * len(evaluation.design.alternatives)
    return records


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


def _unmet(
    evaluation: Evaluation, money: OptionMoney, valid: ValidScenario, fastest_s: float
) -> tuple[str, ...]:
    """The constraints one candidate does not meet, in words."""
    spec = valid.spec
    tech = valid.technologies[evaluation.technology]
    out: list[str] = []
    for finding in evaluation.design.findings:
        if finding.severity == "error":
            out.append(f"breaks a hard limit ({finding.code}: {finding.message})")
    growth = evaluation.growth
    if growth is not None and not growth.reachable:
        out.append(f"cannot grow to {growth.target_gpus:,} GPUs with the same choices")
    require = spec.decision.require
    if require.min_vendors is not None and evaluation.ops.vendors < require.min_vendors:
        out.append(
            f"{evaluation.ops.vendors} switch vendor(s), fewer than decision.require.min_vendors"
            f" = {require.min_vendors}"
        )
    availability = require.cloud_availability
    if availability is None and spec.priorities == "cloud_hybrid":
        availability = "some"
    if (
        availability is not None
        and AVAILABILITY_ORDER[tech.cloud_availability] < AVAILABILITY_ORDER[availability]
    ):
        out.append(
            f"public-cloud availability {tech.cloud_availability!r}, below {availability!r}"
            + (" (cloud_hybrid)" if require.cloud_availability is None else "")
        )
    if spec.priorities == "cost_sensitive":
        floor = fastest_s * (1.0 + spec.decision.performance_floor)
        if round(money.step_s, STEP_DIGITS) > round(floor, STEP_DIGITS):
            out.append(
                f"step {seconds_short(money.step_s)} is more than"
                f" {spec.decision.performance_floor:.0%} longer than the fastest"
                f" ({seconds_short(fastest_s)}; decision.performance_floor)"
            )
    return tuple(out)


def rank(
    evaluations: Sequence[Evaluation], moneys: Sequence[OptionMoney], valid: ValidScenario
) -> list[RankedOption]:
    """The candidates best first under the spec's preset (see the module docstring).

    Examples
    --------
    >>> from fabricplan.evaluate import evaluate
    >>> from fabricplan.recommend.money import money_table
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> evals = evaluate(valid, backend="fake")
    >>> ranked = rank(evals, money_table(evals, valid), valid)   # balanced: least money first
    >>> ranked[0].money.total_usd <= ranked[1].money.total_usd
    True
    """
    preset = valid.spec.priorities
    fastest = min(m.step_s for m in moneys)
    unmet = {
        e.technology: _unmet(e, m, valid, fastest) for e, m in zip(evaluations, moneys, strict=True)
    }
    meeting = [m for m in moneys if not unmet[m.technology]] or list(moneys)
    leader = min(meeting, key=lambda m: (round(m.step_s, STEP_DIGITS), m.technology))

    versus = {m.technology: step_difference(m, leader) for m in moneys if m is not leader}

    def key(m: OptionMoney) -> tuple[object, ...]:
        failed = bool(unmet[m.technology])
        if preset == "max_performance":
            gap = versus.get(m.technology)
            if gap is None or gap.inside:
                return (failed, 0, round(m.total_usd, CENT_DIGITS), m.technology)
            return (failed, 1, round(m.step_s, STEP_DIGITS), m.technology)
        if preset == "cost_sensitive":
            return (failed, network_money_usd(m), m.technology)
        return (failed, round(m.total_usd, CENT_DIGITS), m.technology)

    def objective(m: OptionMoney) -> float:
        if preset == "max_performance":
            return m.step_s
        if preset == "cost_sensitive":
            return network_money_usd(m)
        return m.total_usd

    return [
        RankedOption(
            technology=m.technology,
            money=m,
            objective=objective(m),
            unmet=unmet[m.technology],
            versus_fastest=versus.get(m.technology) if preset == "max_performance" else None,
        )
        for m in sorted(moneys, key=key)
    ]


def _winner(
    evaluations: Sequence[Evaluation], valid: ValidScenario, moneys: Sequence[OptionMoney]
) -> str:
    return rank(evaluations, moneys, valid)[0].technology


@dataclass(frozen=True)
class _IdleLine:
    """One design a candidate could keep as the GPU-hour price moves: the search's money today
    above the kept design's and its idle GPU-hours above the kept design's (both 0 for the kept
    one), and its own growth and risk terms above the kept design's."""

    more_usd: float
    more_hours: float
    label: str | None
    own: _OwnTerms = _OwnTerms()

    def search_more_at(self, price: float, today: float) -> float:
        """The search's money above the kept design's at GPU-hour ``price``."""
        return self.more_usd + self.more_hours * (price - today)

    def total_more_at(self, price: float, today: float) -> float:
        """The decision's total above the kept design's at GPU-hour ``price``."""
        return self.search_more_at(price, today) + self.own.usd_at(price)


def _idle_lines(
    evaluation: Evaluation,
    money: OptionMoney,
    records: Sequence[GrowthRiskRecord | None] = (),
) -> list[_IdleLine]:
    """The kept design and every searched design priced with its idle GPU time. At a GPU-hour
    price ``p`` a design's search money is ``more + more_hours x (p - today)`` above the kept
    one's, and the search keeps the least (no searched design is known at a price of 0: none is
    priced on its GPU time then); the total it then carries has its own growth and risk terms
    (``records``, aligned with ``design.alternatives``; without one, the kept design's)."""
    lines = [_IdleLine(0.0, 0.0, None)]
    today = money.gpu_hour_usd
    if today <= 0:
        return lines
    for index, alt in enumerate(evaluation.design.alternatives):
        if (
            alt.more_usd is None
            or alt.tco_usd is None
            or alt.gpu_idle_usd is None
            or alt.money_usd is None
        ):
            continue
        own = _own_terms(evaluation, records[index] if index < len(records) else None)
        if own is None:
            continue
        kept_idle = alt.money_usd - alt.more_usd - evaluation.cost.tco_usd
        lines.append(
            _IdleLine(
                alt.more_usd,
                (alt.gpu_idle_usd - kept_idle) / today,
                f"{alt.switch} {alt.topology} {alt.tiers}T x {alt.planes}P",
                own,
            )
        )
    return lines


def _at_gpu_hour(
    moneys: Sequence[OptionMoney], lines: Sequence[Sequence[_IdleLine]], price: float
) -> tuple[list[OptionMoney], list[str | None]]:
    """Every candidate's money at GPU-hour ``price``, each on the design its search keeps then,
    with that design's label (``None``: today's)."""
    table: list[OptionMoney] = []
    kept: list[str | None] = []
    for m, own in zip(moneys, lines, strict=True):
        moved = repriced(m, gpu_hour_usd=price)
        today = m.gpu_hour_usd
        best = min(own, key=lambda line: line.search_more_at(price, today))
        if best.label is not None:
            moved = moved.model_copy(
                update={
                    "total_usd": moved.total_usd + best.search_more_at(price, today),
                    "gpu_hours": moved.gpu_hours + best.more_hours,
                    "gpu_time_usd": moved.gpu_time_usd + best.more_hours * price,
                }
            )
            moved = _with_own_terms(moved, best.own)
        table.append(moved)
        kept.append(best.label)
    return table, kept


def _gpu_hour_flip(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    moneys: Sequence[OptionMoney],
    searched: Searched | None = None,
) -> FlipPoint:
    """The GPU-hour price at which the winner changes. Each design's total is ``a + hours x
    price`` and each technology keeps the searched design of least search money
    (:func:`_idle_lines`), whose total carries its own growth and risk terms, so the winner can
    change only where a line of one technology crosses a line of another, or where a
    technology's search changes design: those prices are probed, nearest to today's first."""
    price = moneys[0].gpu_hour_usd
    winner = _winner(evaluations, valid, moneys)
    if valid.spec.priorities == "cost_sensitive":
        return FlipPoint(
            kind="gpu_hour",
            description="cost_sensitive leaves the value of GPU time out (the performance floor"
            " stands for it): no GPU-hour price changes the answer",
        )
    lines = [
        _idle_lines(e, m, _records(searched, e)) for e, m in zip(evaluations, moneys, strict=True)
    ]
    top = MAX_GPU_HOUR_FACTOR * max(price, 1.0)

    def hours(m: OptionMoney, line: _IdleLine) -> float:
        return m.gpu_hours + m.config_risk_gpu_hours + line.more_hours + line.own.risk_gpu_hours

    def total(m: OptionMoney, line: _IdleLine) -> float:
        return m.total_usd + line.total_more_at(price, price)

    roots: set[float] = set()

    def crossing(gap: float, slope: float) -> None:
        if slope != 0 and 0.0 <= (root := price + gap / slope) <= top:
            roots.add(root)

    for i, (mi, li) in enumerate(zip(moneys, lines, strict=True)):
        for j in range(i + 1, len(moneys)):
            mj, lj = moneys[j], lines[j]
            for a in li:
                for b in lj:
                    crossing(total(mj, b) - total(mi, a), hours(mi, a) - hours(mj, b))
        for k, a in enumerate(li):  # where the search changes design, the total may jump
            for b in li[k + 1 :]:
                if a.own != b.own:
                    crossing(b.more_usd - a.more_usd, a.more_hours - b.more_hours)
    for root in sorted(roots, key=lambda r: abs(r - price)):
        for probe in (root * (1 + 1e-6) + 1e-9, root * (1 - 1e-6) - 1e-9):
            if probe < 0 or (probe > price) != (root > price):
                continue
            table, kept = _at_gpu_hour(moneys, lines, probe)
            other = _winner(evaluations, valid, table)
            if other != winner:
                way = "more" if probe > price else "less"
                redesigned = "; ".join(
                    f"{m.technology} builds {label} instead"
                    for m, label in zip(moneys, kept, strict=True)
                    if label is not None
                )
                return FlipPoint(
                    kind="gpu_hour",
                    description=f"{other} ranks first if a GPU-hour is worth {way} than"
                    f" ${root:,.2f} (now ${price:,.2f}; cost.prices.gpu-hour-{valid.node.id})"
                    + (f"; by then the search: {redesigned}" if redesigned else ""),
                    value=root,
                )
    return FlipPoint(
        kind="gpu_hour",
        description=f"no GPU-hour price between $0 and ${top:,.0f} changes the answer (now"
        f" ${price:,.2f})",
    )


def _switch_line(evaluation: Evaluation) -> tuple[str, int, float] | None:
    """The candidate's main switch: (item, quantity, unit price)."""
    lines = [
        line
        for line in evaluation.cost.lines
        if line.kind == "switch" and line.item == evaluation.design.switch_id
    ]
    if not lines:
        return None
    return lines[0].item, sum(line.quantity for line in lines), lines[0].unit_price_usd


@dataclass(frozen=True)
class _Redesign:
    """A design the search could keep instead when one switch's price moves: how much more it
    costs today (``more_usd``, the search's money), how many of that switch it buys (its growth
    included) and its own growth and risk terms above the kept design's."""

    more_usd: float
    bought: int
    label: str
    own: _OwnTerms = _OwnTerms()


@dataclass(frozen=True)
class _Holder:
    """One candidate as a switch's price moves: how many of that switch its kept design buys
    (growth included), the searched designs it could keep instead, and its support years
    (capex x years x support fraction follows the price)."""

    index: int
    technology: str
    bought: int
    for_growth: int
    redesigns: tuple[_Redesign, ...]
    support_years: float

    def capex_change(self, price: float, unit: float) -> tuple[float, str | None]:
        """The capex change (support follows) that stands for the switch at ``price``: the kept
        design's ``(price - unit) x bought``, or a searched design's when that costs less then
        (its money today as capex, plus its own count at the new price); with the label of the
        design kept (``None``: today's)."""
        best, kept = self.kept_at(price, unit)
        return best, None if kept is None else kept.label

    def kept_at(self, price: float, unit: float) -> tuple[float, _Redesign | None]:
        """:meth:`capex_change` with the searched design kept (``None``: today's)."""
        best, kept = (price - unit) * self.bought, None
        for r in self.redesigns:
            change = r.more_usd / (1.0 + self.support_years) + (price - unit) * r.bought
            if change < best:
                best, kept = change, r
        return best, kept

    def switch_price(self, unit: float, label: str) -> str:
        """Where the search changes to the design ``label``, in words."""
        r = next(r for r in self.redesigns if r.label == label)
        if r.bought == self.bought:
            return f"{usd_short(r.more_usd)} more today"
        # (p - unit) x bought = more / (1 + support_years) + (p - unit) x r.bought
        price = unit + r.more_usd / (1.0 + self.support_years) / (self.bought - r.bought)
        way = "above" if price > unit else "below"
        return f"{way} ${max(price, 0.0):,.0f} each; {usd_short(r.more_usd)} more today"


def _redesigns(
    evaluation: Evaluation, item: str, records: Sequence[GrowthRiskRecord | None] = ()
) -> tuple[_Redesign, ...]:
    """The searched designs priced in full (capex, opex, idle GPU time) that the search would
    keep instead of the chosen one once ``item``'s price moves far enough: their money today
    relative to the chosen design's, how many ``item`` switches they buy and their own growth
    and risk terms (``records``, aligned with ``design.alternatives``; without one, the kept
    design's, and its growth buys none of ``item``)."""
    out: list[_Redesign] = []
    for index, alt in enumerate(evaluation.design.alternatives):
        if alt.more_usd is None or alt.tco_usd is None or alt.switches_total is None:
            continue
        record = records[index] if index < len(records) else None
        own = _own_terms(evaluation, record)
        if own is None:
            continue
        bought = alt.switches_total if alt.switch == item else 0
        if record is not None:
            bought += record.growth_items.get(item, 0)
        label = f"{alt.switch} {alt.topology} {alt.tiers}T x {alt.planes}P"
        out.append(_Redesign(more_usd=alt.more_usd, bought=bought, label=label, own=own))
    return tuple(out)


def _support_fraction(evaluation: Evaluation) -> float:
    cost = evaluation.cost
    return cost.support_usd_per_year / cost.capex_usd if cost.capex_usd else 0.0


def _holders(
    evaluations: Sequence[Evaluation],
    moneys: Sequence[OptionMoney],
    item: str,
    searched: Searched | None = None,
) -> list[_Holder]:
    """Every candidate whose kept design buys ``item`` or whose search priced a design with it."""
    out: list[_Holder] = []
    for index, evaluation in enumerate(evaluations):
        found = _switch_line(evaluation)
        bought = for_growth = 0
        if found is not None and found[0] == item:
            growth = evaluation.growth
            for_growth = growth.added_items.get(item, 0) if growth is not None else 0
            bought = found[1] + for_growth
        redesigns = _redesigns(evaluation, item, _records(searched, evaluation))
        if bought or any(r.bought for r in redesigns):
            out.append(
                _Holder(
                    index=index,
                    technology=evaluation.technology,
                    bought=bought,
                    for_growth=for_growth,
                    redesigns=redesigns,
                    support_years=moneys[index].years * _support_fraction(evaluation),
                )
            )
    return out


def _winner_at_switch_price(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    moneys: Sequence[OptionMoney],
    holders: Sequence[_Holder],
    price: float,
    unit: float,
) -> str:
    """The winner when the switch costs ``price`` each instead of ``unit``, for every candidate
    that buys it (each keeps whichever of its searched designs costs least then, with that
    design's own growth and risk terms)."""
    table = list(moneys)
    for h in holders:
        change, kept = h.kept_at(price, unit)
        table[h.index] = repriced(
            moneys[h.index],
            capex_change_usd=change,
            support_fraction_per_year=_support_fraction(evaluations[h.index]),
        )
        if kept is not None:
            table[h.index] = _with_own_terms(table[h.index], kept.own)
    return _winner(evaluations, valid, table)


PRICE_BISECTION_STEPS = 60
"""Halvings of the switch-price interval (to well under a dollar)."""
MAX_SWITCH_PRICE_FACTOR = 10.0
"""Largest switch price searched for the winner, as a multiple of today's."""


def _price_flips(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    moneys: Sequence[OptionMoney],
    searched: Searched | None = None,
) -> list[FlipPoint]:
    """The price of each candidate's switch at which the winner changes (bisection): upward for
    the winner's switch, downward for another candidate's, both for a switch they share.

    A price moves for every candidate that buys the switch (two technologies on the same box pay
    it alike), and the design search is taken into account: as the price moves, each keeps
    whichever of its searched designs (priced in full) costs least then, so a dearer switch
    cannot cost a technology more than its next design without that switch
    (:meth:`_Holder.capex_change`). A searched design kept then carries its own growth and
    configuration-risk money (``searched``, :func:`fabricplan.evaluate.searched_growth_risk`;
    the search itself ranks without them); without ``searched``, the chosen design's."""
    winner = _winner(evaluations, valid, moneys)
    items: dict[str, tuple[float, set[str]]] = {}
    for evaluation in evaluations:
        found = _switch_line(evaluation)
        if found is None:
            continue
        item, _, unit = found
        items.setdefault(item, (unit, set()))[1].add(evaluation.technology)
    flips: list[FlipPoint] = []
    for item, (unit, users) in items.items():
        holders = _holders(evaluations, moneys, item, searched)

        def winner_at(price: float, holders: list[_Holder] = holders, unit: float = unit) -> str:
            return _winner_at_switch_price(evaluations, valid, moneys, holders, price, unit)

        ways = [w for w, has in (("up", winner in users), ("down", users - {winner})) if has]
        for way in ways:
            flips.append(_price_flip(item, unit, way, holders, winner, winner_at))
    return flips


def _price_flip(
    item: str,
    unit: float,
    way: str,
    holders: Sequence[_Holder],
    winner: str,
    winner_at: Callable[[float], str],
) -> FlipPoint:
    """The flip of one switch's price in one direction (``up`` or ``down``), in words."""
    near, far = (unit, unit * MAX_SWITCH_PRICE_FACTOR + 1.0) if way == "up" else (unit, 0.0)
    bought = ", ".join(
        f"{h.bought:,} bought by {h.technology}"
        + (f", {h.for_growth:,} of them for growth" if h.for_growth else "")
        for h in holders
        if h.bought
    )

    def kept_at(price: float) -> str:
        said = [
            f"{h.technology} builds {label} instead ({h.switch_price(unit, label)})"
            for h in holders
            if (label := h.capex_change(price, unit)[1]) is not None
        ]
        return "; ".join(said)

    if winner_at(far) == winner:
        bound = "above" if way == "up" else "below"
        kept = kept_at(far)
        return FlipPoint(
            kind="price",
            description=f"no {item} price {bound} today's ${unit:,.0f} (searched to"
            f" ${far:,.0f}) changes the answer"
            + (f": before that the search: {kept}" if kept else ""),
        )
    for _ in range(PRICE_BISECTION_STEPS):
        middle = (near + far) / 2.0
        if winner_at(middle) != winner:
            far = middle
        else:
            near = middle
    after = winner_at(far)
    kept = kept_at(far)
    more_or_less = "more" if way == "up" else "less"
    return FlipPoint(
        kind="price",
        description=f"{after} ranks first if {item} costs {more_or_less} than ${far:,.0f} each"
        f" (now ${unit:,.0f}; {bought}; cost.prices.{item})"
        + (f"; by then the search: {kept}" if kept else ""),
        value=far,
    )


def _first_flip(
    valid: ValidScenario,
    winner: str,
    scenarios: Sequence[tuple[str, ValidScenario]],
    reevaluate: Reevaluate,
    kind: FlipKind,
) -> tuple[FlipPoint | None, list[str]]:
    """The first scenario (label, scenario) where another candidate ranks first."""
    notes: list[str] = []
    for label, scenario in scenarios:
        try:
            evals = reevaluate(scenario)
            ranked = rank(evals, money_table(evals, scenario), scenario)
        except FabricPlanError as exc:
            notes.append(f"{label}: no evaluation ({exc.what} [{exc.code}])")
            break
        other = ranked[0].technology
        if other != winner:
            lost = next((o for o in ranked if o.technology == winner), None)
            why = (
                f" ({winner} {lost.unmet[0]})"
                if lost is not None and lost.unmet
                else f" ({winner} cannot be designed there)"
                if lost is None
                else f" (total {usd_short(ranked[0].money.total_usd)} against"
                f" {usd_short(lost.money.total_usd)}, step {seconds_short(ranked[0].money.step_s)}"
                f" against {seconds_short(lost.money.step_s)})"
            )
            return (
                FlipPoint(
                    kind=kind,
                    description=f"{label}: {other} ranks first instead of {winner}{why}",
                ),
                notes,
            )
    return None, notes


def _sizes(gpus: int, gpus_per_node: int) -> tuple[list[int], list[int]]:
    """The doublings and halvings tried (the flow compare's time estimate counts the same)."""
    from fabricplan.sim.flow.duration import size_steps

    return size_steps(gpus, gpus_per_node, CLUSTER_SIZE_STEPS)


def _size_flips(valid: ValidScenario, winner: str, reevaluate: Reevaluate) -> list[FlipPoint]:
    gpus = valid.spec.cluster.gpus
    up, down = _sizes(gpus, valid.spec.cluster.gpus_per_node)
    points: list[FlipPoint] = []
    notes: list[str] = []
    for sizes in (up, down):
        scenarios = []
        for size in sizes:
            try:
                scenarios.append((f"at {size:,} GPUs", scenario_with_gpus(valid, size)))
            except FabricPlanError:
                break
        flip, more = _first_flip(valid, winner, scenarios, reevaluate, "cluster_size")
        notes += more
        if flip is not None:
            points.append(flip)
    if not points:
        tried = sorted({gpus, *up, *down})
        note = f"; {'; '.join(notes)}" if notes else ""
        points.append(
            FlipPoint(
                kind="cluster_size",
                description=f"no flip between {min(tried):,} and {max(tried):,} GPUs (tried"
                f" {', '.join(f'{n:,}' for n in tried)}){note}",
            )
        )
    return points


def _team_flips(valid: ValidScenario, winner: str, reevaluate: Reevaluate) -> list[FlipPoint]:
    team = valid.spec.team
    points: list[FlipPoint] = []
    for field in TeamSpec.model_fields:
        now = getattr(team, field)
        levels: tuple[Experience, ...] = get_args(Experience)
        scenarios = [
            (
                f"with team.{field}: {level} (now {now})",
                scenario_with_team(valid, team.model_copy(update={field: level})),
            )
            for level in levels
            if level != now
        ]
        for label, scenario in scenarios:
            flip, _ = _first_flip(valid, winner, [(label, scenario)], reevaluate, "team")
            if flip is not None:
                points.append(flip)
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


def _growth_flips(valid: ValidScenario, winner: str, reevaluate: Reevaluate) -> list[FlipPoint]:
    gpus = valid.spec.cluster.gpus
    if valid.spec.growth is not None:
        target = valid.spec.growth.target_gpus
        flip, _ = _first_flip(
            valid,
            winner,
            [(f"without growth to {target:,} GPUs", scenario_with_growth(valid, None))],
            reevaluate,
            "growth",
        )
        if flip is not None:
            return [flip]
        return [
            FlipPoint(
                kind="growth",
                description=f"growth to {target:,} GPUs does not decide it: without it the"
                f" answer is the same",
            )
        ]
    scenarios = [
        (
            f"if you grow to {gpus * k:,} GPUs (growth.target_gpus)",
            scenario_with_growth(valid, gpus * k),
        )
        for k in GROWTH_FACTORS
    ]
    flip, notes = _first_flip(valid, winner, scenarios, reevaluate, "growth")
    if flip is not None:
        return [flip]
    return [
        FlipPoint(
            kind="growth",
            description=f"no growth target up to {gpus * GROWTH_FACTORS[-1]:,} GPUs changes the"
            " answer" + (f" ({'; '.join(notes)})" if notes else ""),
        )
    ]


def _sharp_flips(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    winner: str,
    reevaluate: Reevaluate,
) -> list[FlipPoint]:
    """What turning SHARP on (or off, where it is on) does to the answer, with both steps."""
    capable = [
        e.technology
        for e in evaluations
        if valid.technologies[e.technology].in_network_reduction
        and valid.switches[e.technology].in_network_reduction
    ]
    if not capable:
        return []
    fabric = valid.spec.fabric
    now = {t: fabric.sharp_for(t) for t in capable}
    other: dict[str, str] = {t: ("auto" if mode == "on" else "on") for t, mode in now.items()}
    scenario = scenario_with_sharp(valid, other)
    try:
        evals = reevaluate(scenario)
    except FabricPlanError as exc:
        return [FlipPoint(kind="sharp", description=f"SHARP not re-evaluated ({exc.what})")]
    before = {e.technology: e.performance.step for e in evaluations}
    after = {e.technology: e.performance.step for e in evals}
    steps = ", ".join(
        f"{t} step {seconds_short(b.step_s)} -> {seconds_short(a.step_s)}"
        for t in capable
        if (b := before.get(t)) is not None and (a := after.get(t)) is not None
    )
    turned = "on" if "on" in other.values() else "to auto (CollNet off)"
    new_winner = _winner(evals, scenario, money_table(evals, scenario))
    setup = (
        " (needs the SHARP plugin and aggregation manager, NCCL_COLLNET_ENABLE=1)"
        if turned == "on"
        else ""
    )
    if new_winner != winner:
        text = f"with SHARP {turned}{setup}: {steps}; {new_winner} ranks first instead of {winner}"
    else:
        text = f"with SHARP {turned}{setup}: {steps}; the answer stays {winner}"
    return [FlipPoint(kind="sharp", description=text)]


def _configuration_flips(
    evaluations: Sequence[Evaluation], valid: ValidScenario, winner: str, reevaluate: Reevaluate
) -> list[FlipPoint]:
    """With the catalog's lossless configuration instead of the deployed one: what each PFC
    fabric's total and step become, and the answer (both numbers, like SHARP's)."""
    lossless = valid.spec.fabric.lossless
    pfc_fabrics = [
        e.technology
        for e in evaluations
        if valid.technologies[e.technology].link_flow_control == "pfc"
    ]
    if not pfc_fabrics or lossless == LosslessSpec():
        return []
    data = valid.spec.model_dump(exclude_unset=True)
    data.setdefault("fabric", {})["lossless"] = LosslessSpec().model_dump()
    label = "with the lossless configuration fixed (PFC, ECN, DCQCN, auto headroom, watchdog)"
    fixed = _revalidated(valid, data)
    try:
        evals = reevaluate(fixed)
        moneys = money_table(evals, fixed)
    except FabricPlanError as exc:
        return [
            FlipPoint(
                kind="configuration",
                description=f"{label}: no evaluation ({exc.what} [{exc.code}])",
            )
        ]
    now = {m.technology: m for m in money_table(evaluations, valid)}
    after = {m.technology: m for m in moneys}
    changes = "; ".join(
        f"{t} total {usd_short(b.total_usd)} -> {usd_short(a.total_usd)}, step"
        f" {seconds_short(b.step_s)} -> {seconds_short(a.step_s)}"
        for t in pfc_fabrics
        if (b := now.get(t)) is not None and (a := after.get(t)) is not None
    )
    new_winner = rank(evals, moneys, fixed)[0].technology
    if new_winner != winner:
        text = f"{label}: {changes}; {new_winner} ranks first instead of {winner}"
    else:
        text = f"{label}: {changes}; the answer stays {winner}"
    return [FlipPoint(kind="configuration", description=text)]


def _reasons(
    ranked: Sequence[RankedOption], evaluations: Sequence[Evaluation], valid: ValidScenario
) -> list[str]:
    preset = valid.spec.priorities
    winner, rival = ranked[0], ranked[1]
    reasons = [
        f"{winner.technology} ranks first under preset {preset!r}: {OBJECTIVES[preset]}.",
    ]
    reasons += comparison_sentence(winner, rival, preset)
    for place, option in enumerate(ranked[2:], start=3):
        reasons.append(
            f"#{place} {option.technology}: total {usd_short(option.money.total_usd)}, step"
            f" {seconds_short(option.money.step_s)}."
        )
    for option in ranked:
        if option.unmet:
            reasons.append(f"{option.technology} does not meet: {'; '.join(option.unmet)}.")
    meeting = [o for o in ranked if not o.unmet]
    cheapest = min(ranked, key=lambda o: o.money.total_usd)
    if (
        meeting
        and cheapest.unmet
        and preset != "max_performance"
        and cheapest.money.total_usd < meeting[0].money.total_usd
    ):
        price = meeting[0].money.total_usd - cheapest.money.total_usd
        reasons.append(
            f"The constraints cost {usd_short(price)}"
            f" over the horizon: {cheapest.technology}, which misses them, would be"
            f" {usd_short(cheapest.money.total_usd)}."
        )
    for e in evaluations:
        reasons += [
            n.removeprefix("configuration: ")
            for n in e.performance.notes
            if n.startswith("configuration: ")
        ]
    return reasons


def decide(
    evaluations: Sequence[Evaluation],
    valid: ValidScenario,
    reevaluate: Reevaluate | None = None,
    reevaluate_performance: Reevaluate | None = None,
    searched: Searched | None = None,
) -> Recommendation:
    """Rank the candidates on the one economic scale, with reasons and flip points.

    Parameters
    ----------
    evaluations
        One evaluation per technology.
    valid
        The scenario (preset, prices, team, growth).
    reevaluate
        Optional: the same candidates for a changed scenario with their performance kept
        (team experience, growth target); flip points for team and growth need it.
    reevaluate_performance
        Optional: the same candidates with performance re-modelled (cluster size, SHARP).
    searched
        Optional: per technology, the growth and configuration-risk terms of each design its
        search priced and did not keep (:func:`fabricplan.evaluate.searched_growth_risk`), which
        the price and GPU-hour flips charge when a technology would keep one of them; without
        it they charge the kept design's.

    Returns
    -------
    Recommendation

    Examples
    --------
    >>> from fabricplan.evaluate import evaluate
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> rec = decide(evaluate(valid, backend="fake")[:1], valid)
    >>> rec.technology, len(rec.ranking), rec.flips
    ('infiniband', 1, ())
    """
    _check(evaluations)
    moneys = money_table(evaluations, valid)
    ranked = rank(evaluations, moneys, valid)
    winner = ranked[0].technology
    preset = valid.spec.priorities
    base = {
        "technology": winner,
        "preset": preset,
        "objective": OBJECTIVES[preset],
        "ranking": tuple(ranked),
        "not_money": not_money(evaluations, valid),
    }
    if len(evaluations) == 1:
        return Recommendation(
            **base,
            reasons=(
                f"only {winner} was evaluated: it ranks first by default; there is nothing to"
                " compare it with, so no change of prices, size, growth or team can flip it.",
            ),
        )
    reasons = _reasons(ranked, evaluations, valid)
    flips = [
        _gpu_hour_flip(evaluations, valid, moneys, searched),
        *_price_flips(evaluations, valid, moneys, searched),
    ]
    if reevaluate is not None:
        flips += _growth_flips(valid, winner, reevaluate)
        flips += _team_flips(valid, winner, reevaluate)
    if reevaluate_performance is not None:
        flips += _sharp_flips(evaluations, valid, winner, reevaluate_performance)
        flips += _configuration_flips(evaluations, valid, winner, reevaluate_performance)
        flips += _size_flips(valid, winner, reevaluate_performance)
    return Recommendation(**base, reasons=tuple(reasons), flips=tuple(flips))


def _revalidated(
    valid: ValidScenario, data: dict[str, Any], origin: str = "what-if"
) -> ValidScenario:
    return replace_spec(valid, data, origin)


def scenario_with_gpus(valid: ValidScenario, gpus: int) -> ValidScenario:
    """``valid`` with another GPU count (checked again; the resolved hardware is kept; a growth
    target below the new size is dropped).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> scenario_with_gpus(parse_spec({"cluster": {"gpus": 1024}}), 2048).spec.cluster.nodes
    256
    """
    data = valid.spec.model_dump(exclude_unset=True)
    data["cluster"]["gpus"] = gpus
    growth = data.get("growth")
    if growth is not None and growth["target_gpus"] < gpus:
        data["growth"] = None
    return _revalidated(valid, data)


def scenario_with_team(valid: ValidScenario, team: TeamSpec) -> ValidScenario:
    """``valid`` with another team experience (checked again)."""
    data = valid.spec.model_dump(exclude_unset=True)
    data["team"] = team.model_dump()
    return replace_spec(valid, data, "team")


def scenario_with_growth(valid: ValidScenario, target_gpus: int | None) -> ValidScenario:
    """``valid`` with another growth target (``None``: no growth)."""
    data = valid.spec.model_dump(exclude_unset=True)
    data["growth"] = None if target_gpus is None else {"target_gpus": target_gpus}
    return _revalidated(valid, data)


def scenario_with_sharp(valid: ValidScenario, modes: Mapping[str, str]) -> ValidScenario:
    """``valid`` with SHARP set per technology (the others keep theirs)."""
    data = valid.spec.model_dump(exclude_unset=True)
    fabric = valid.spec.fabric
    data.setdefault("fabric", {})["sharp"] = {
        t: modes.get(t, fabric.sharp_for(t)) for t in valid.spec.fabric.technologies
    }
    return _revalidated(valid, data)


def recommend(
    valid: ValidScenario,
    evaluations: Sequence[Evaluation],
    backend: str | Backend = "analytic",
    request: PerfRequest | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
    cache: SearchCache | None = None,
) -> Recommendation:
    """Decide on ``evaluations`` of ``valid``, re-evaluating to find the flip points.

    Team and growth changes keep each candidate's performance where its search keeps the same
    design (they do not change a design's performance; a team change can change the design,
    whose performance is then modelled); size and SHARP changes re-run the same backend (the
    analytic and fake backends for the step alone, which is all the decision reads). The
    re-evaluations share one ``cache`` (:class:`~fabricplan.search_cache.SearchCache`; pass the
    one :func:`evaluate_feasible` used for ``evaluations`` to reuse its designs too), so each
    design and step-model run is made once.

    Examples
    --------
    >>> from fabricplan.evaluate import evaluate
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> rec = recommend(valid, evaluate(valid, backend="fake"), backend="fake")
    >>> sorted({flip.kind for flip in rec.flips})
    ['cluster_size', 'gpu_hour', 'growth', 'price', 'sharp', 'team']
    """
    from fabricplan.evaluate import (  # it pulls in every model
        RANKING_BACKENDS,
        evaluate_feasible,
        searched_growth_risk,
    )
    from fabricplan.search_cache import SearchCache

    cache = cache or SearchCache()
    performance = {e.technology: e.performance for e in evaluations}
    designs = {e.technology: e.design for e in evaluations}  # what each result was made for
    name = backend if isinstance(backend, str) else backend.name
    asked = request or PerfRequest()
    # The decision reads the step, the cost and the design, never the collective or perftest
    # tables: a closed-form backend models the step alone for the re-evaluations. A simulator
    # puts its collective times into the step, so it runs the whole request.
    again = (
        asked.model_copy(update={"collectives": (), "p2p": False, "step": True})
        if name in RANKING_BACKENDS
        else asked
    )
    decision = decide(
        evaluations,
        valid,
        reevaluate=lambda scenario: evaluate_feasible(
            scenario,
            backend,
            again,
            performance=performance,
            cache=cache,
            performance_designs=designs,
        )[0],
        reevaluate_performance=lambda scenario: evaluate_feasible(
            scenario, backend, again, cache=cache
        )[0],
        searched={
            e.technology: searched_growth_risk(valid, e.technology, backend, asked, cache)
            for e in evaluations
        },
    )
    if not infeasible:
        return decision
    said = tuple(f"{o.technology} cannot be built as specified: {o.message}" for o in infeasible)
    return decision.model_copy(
        update={"reasons": said + decision.reasons, "infeasible": tuple(infeasible)}
    )
