"""Every candidate on one economic scale: dollars over the cost horizon.

A candidate's total is what choosing it costs over ``cost.years``::

    capex + years x (energy + support + staff)        the network itself (analytic.cost)
    + GPU time the fabric idles                       exposed communication that crosses the
                                                      fabric x GPUs x hours x price(GPU-hour)
    + growth                                          added capex to reach growth.target_gpus
    + configuration risk                              expected cost of lossless mistakes
    - worth                                           the user's money-equivalents

NVLink-only communication (tensor parallelism inside the NVLink domain) idles the GPUs the same
way on every fabric: its value is shown (``gpu_time_in_domain_usd``) and left out of the total,
so it cannot be charged as a difference. Staff is the one operations model
(:mod:`fabricplan.analytic.operations_effort`); there is no separate "burden".

The total is linear in the GPU-hour price: ``total = a + gpu_hours x price``, which is how the
flip points find the price at which the answer changes (:func:`repriced`).

>>> step_time_band_from(1.0, 0.2)   # 0.2 s of exposed fabric time, 15 % either way
(0.97, 1.03)
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricplan.analytic.uncertainty import difference_inside
from fabricplan.errors import ModelError
from fabricplan.model.results import (
    Estimate,
    Evaluation,
    MoneyLine,
    OptionMoney,
    PerformanceResult,
    StepDifference,
    StepTimeResult,
)
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import HOURS_PER_YEAR

COLLECTIVE_TIME_RELATIVE_BAND = 0.15
"""Relative uncertainty of the modelled communication time, used when the performance result
carries no band of its own. Basis: the validation target of the analytic model against published
nccl-tests rows, median |error| <= 15 % on bandwidth (docs/validation.md; 3.2 % measured over 11
reference rows, taken at the target because those rows cover few fabrics and sizes). Compute is
the same on every fabric, so only the fabric's exposed communication carries the band."""

GPU_HOUR_ITEM_PREFIX = "gpu-hour-"


def step_time_band_from(step_s: float, fabric_exposed_s: float) -> tuple[float, float]:
    """``step ± COLLECTIVE_TIME_RELATIVE_BAND x exposed fabric time`` (rounded to 12 digits)."""
    band = COLLECTIVE_TIME_RELATIVE_BAND * max(0.0, fabric_exposed_s)
    return round(step_s - band, 12), round(step_s + band, 12)


def step_time_band(performance: PerformanceResult) -> tuple[float, float]:
    """The step time's uncertainty band ``(low_s, high_s)``.

    Reads ``step_low_s``/``step_high_s`` (or ``step_s_low``/``step_s_high``) from the step result
    when the model gives them; otherwise :func:`step_time_band_from`.

    Raises
    ------
    ModelError
        FP571 when the result has no step time.

    Examples
    --------
    >>> from fabricplan.model.results import PerformanceResult, StepTimeResult
    >>> step = StepTimeResult(compute_s=1.0, comm_total_s=0.2, comm_exposed_s=0.1, step_s=1.1,
    ...     comm_by_dimension_s={}, exposed_fraction=0.09, gpu_hours_lost_per_year=0.0)
    >>> perf = PerformanceResult(backend="fake", technology="roce_v2", base_latency_us=1.0,
    ...     step=step)
    >>> [round(x, 3) for x in step_time_band(perf)]
    [1.085, 1.115]
    """
    step = performance.step
    if step is None:
        raise ModelError(
            "FP571",
            "evaluation.performance",
            "a candidate has no step time",
            performance.technology,
            "ask the backend for the step time (PerfRequest.step)",
        )
    for low_name, high_name in (("step_low_s", "step_high_s"), ("step_s_low", "step_s_high")):
        low, high = getattr(step, low_name, None), getattr(step, high_name, None)
        if isinstance(low, float) and isinstance(high, float):
            return min(low, step.step_s), max(high, step.step_s)
    return step_time_band_from(step.step_s, step.comm_exposed_fabric_s)


def fabric_time_band(step: StepTimeResult) -> tuple[float, float, float]:
    """``(value, low, high)`` of the step's exposed scale-out communication: the band
    :func:`~fabricplan.analytic.uncertainty.step_band` gives it, else ``value ±
    COLLECTIVE_TIME_RELATIVE_BAND x value`` (the same band :func:`step_time_band_from` puts on
    the step, which is all fabric time).

    >>> from fabricplan.model.results import StepTimeResult
    >>> step = StepTimeResult(compute_s=1.0, comm_total_s=0.2, comm_exposed_s=0.1, step_s=1.1,
    ...     comm_by_dimension_s={}, exposed_fraction=0.09, gpu_hours_lost_per_year=0.0,
    ...     comm_exposed_in_domain_s=0.02)
    >>> [round(x, 3) for x in fabric_time_band(step)]
    [0.08, 0.068, 0.092]
    """
    value = step.comm_exposed_fabric_s
    low, high = step.comm_exposed_fabric_s_low, step.comm_exposed_fabric_s_high
    if low is not None and high is not None:
        return value, min(low, value), max(high, value)
    band = COLLECTIVE_TIME_RELATIVE_BAND * value
    return value, value - band, value + band


def step_difference(option: OptionMoney, fastest: OptionMoney) -> StepDifference:
    """``option``'s step against ``fastest``'s, with the band of the difference.

    Compute and NVLink-only communication are the same on both (the same model from the same
    inputs), so they cancel in the difference; its band combines the two options' scale-out
    bands (``fabric_low_s``/``fabric_high_s``) as independent errors
    (:func:`~fabricplan.analytic.uncertainty.difference_inside`). Steps equal to the
    picosecond are level.

    Examples
    --------
    >>> ib = OptionMoney(technology="infiniband", years=5, capex_usd=0.0, energy_usd=0.0,
    ...     support_usd=0.0, staff_usd=0.0, gpu_time_usd=0.0, total_usd=0.0, step_s=1.1,
    ...     step_low_s=0.9, step_high_s=1.3, fabric_s=0.3, fabric_low_s=0.27,
    ...     fabric_high_s=0.33)
    >>> roce = ib.model_copy(update={"technology": "roce_v2", "step_s": 1.2, "step_low_s": 1.0,
    ...     "step_high_s": 1.4, "fabric_s": 0.4, "fabric_low_s": 0.36, "fabric_high_s": 0.44})
    >>> gap = step_difference(roce, ib)   # the step bands overlap; the difference is outside
    >>> round(gap.difference_pct, 1), round(gap.band_pct, 1), gap.inside
    (9.1, 4.5, False)
    """
    mine = Estimate(value=option.fabric_s, low=option.fabric_low_s, high=option.fabric_high_s)
    theirs = Estimate(value=fastest.fabric_s, low=fastest.fabric_low_s, high=fastest.fabric_high_s)
    gap, half, inside = difference_inside(option.step_s, mine, fastest.step_s, theirs)
    gap = round(gap, 12)
    step = fastest.step_s if fastest.step_s > 0 else 1.0
    return StepDifference(
        versus=fastest.technology,
        difference_s=gap,
        difference_pct=gap / step * 100.0,
        band_s=half,
        band_pct=half / step * 100.0,
        inside=inside or gap == 0,
    )


def gpu_hour_usd(valid: ValidScenario) -> tuple[float, str]:
    """The price of one GPU-hour of the scenario's node, and where it came from (0 if none)."""
    item = f"{GPU_HOUR_ITEM_PREFIX}{valid.node.id}"
    entry = valid.prices.get(item)
    if entry is None:
        return 0.0, f"no {item} in the price book: GPU time counts $0 (set cost.prices.{item})"
    return entry.price_usd, f"${entry.price_usd:.2f}/GPU-hour ({entry.basis}; cost.prices.{item})"


def option_money(evaluation: Evaluation, valid: ValidScenario) -> OptionMoney:
    """One candidate's money over the horizon (see the module docstring).

    Examples
    --------
    >>> from fabricplan.evaluate import evaluate
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> money = option_money(evaluate(valid, backend="fake")[0], valid)
    >>> parts = (money.capex_usd + money.energy_usd + money.support_usd + money.staff_usd
    ...          + money.gpu_time_usd + money.growth_usd + money.config_risk_usd - money.worth_usd)
    >>> abs(parts - money.total_usd) < 1e-6
    True
    """
    cost, years = evaluation.cost, evaluation.cost.years
    price, price_basis = gpu_hour_usd(valid)
    step = evaluation.performance.step
    low, high = step_time_band(evaluation.performance)
    assert step is not None  # step_time_band raised otherwise
    fabric, fabric_low, fabric_high = fabric_time_band(step)
    gpus = evaluation.design.gpus
    hours = years * HOURS_PER_YEAR * gpus
    idle_hours = step.comm_exposed_fabric_s / step.step_s * hours if step.step_s > 0 else 0.0
    domain_hours = step.comm_exposed_in_domain_s / step.step_s * hours if step.step_s > 0 else 0.0
    risk_hours = cost.config_risk_gpu_hours
    growth = evaluation.growth
    growth_usd = growth.added_capex_usd if growth and growth.added_capex_usd is not None else 0.0
    worth = valid.spec.decision.worth_usd.get(evaluation.technology, 0.0)
    lines = [
        MoneyLine(term="capex", usd=cost.capex_usd, basis="bill of materials x price book"),
        MoneyLine(
            term="energy",
            usd=years * cost.energy_usd_per_year,
            basis=f"{years} years x network power x PUE x energy price",
        ),
        MoneyLine(
            term="support",
            usd=years * cost.support_usd_per_year,
            basis=f"{years} years x support fraction x capex",
        ),
        MoneyLine(
            term="staff",
            usd=years * cost.operations_usd_per_year,
            basis=f"{years} years x {evaluation.ops.engineer_years_per_year:.2f} engineer-years a"
            f" year ({evaluation.ops.hours_per_year:,.0f} h) x cost.engineer_usd_per_year",
        ),
        MoneyLine(
            term="gpu_time",
            usd=idle_hours * price,
            basis=f"{idle_hours:,.0f} GPU-hours over {years} years idled by exposed communication"
            f" across the fabric ({step.comm_exposed_fabric_s:.3f} s of a {step.step_s:.3f} s"
            f" step) x {price_basis}; NVLink-only time ({step.comm_exposed_in_domain_s:.3f} s,"
            f" ${domain_hours * price:,.0f}) is the same on every fabric and not counted",
        ),
        MoneyLine(
            term="config_risk",
            usd=risk_hours * price + cost.config_risk_staff_usd,
            basis=cost.config_risk_basis or "configuration risk: not assessed",
        ),
    ]
    if growth is not None:
        lines.append(
            MoneyLine(
                term="growth",
                usd=growth_usd,
                basis=f"grow to {growth.target_gpus:,} GPUs: "
                + ("; ".join(growth.notes) if growth.notes else "nothing to add"),
            )
        )
    if worth:
        lines.append(
            MoneyLine(
                term="worth",
                usd=worth,
                basis=f"decision.worth_usd.{evaluation.technology} (set by the user, subtracted)",
            )
        )
    total = (
        cost.capex_usd
        + years * (cost.energy_usd_per_year + cost.support_usd_per_year)
        + years * cost.operations_usd_per_year
        + (idle_hours + risk_hours) * price
        + cost.config_risk_staff_usd
        + growth_usd
        - worth
    )
    return OptionMoney(
        technology=evaluation.technology,
        years=years,
        capex_usd=cost.capex_usd,
        energy_usd=years * cost.energy_usd_per_year,
        support_usd=years * cost.support_usd_per_year,
        staff_usd=years * cost.operations_usd_per_year,
        gpu_time_usd=idle_hours * price,
        gpu_time_in_domain_usd=domain_hours * price,
        gpu_hours=idle_hours,
        gpu_hour_usd=price,
        config_risk_gpu_hours=risk_hours,
        growth_usd=growth_usd,
        config_risk_usd=risk_hours * price + cost.config_risk_staff_usd,
        worth_usd=worth,
        total_usd=total,
        step_s=step.step_s,
        step_low_s=low,
        step_high_s=high,
        fabric_s=fabric,
        fabric_low_s=fabric_low,
        fabric_high_s=fabric_high,
        lines=tuple(lines),
    )


def repriced(
    money: OptionMoney,
    gpu_hour_usd: float | None = None,
    capex_change_usd: float = 0.0,
    support_fraction_per_year: float = 0.0,
) -> OptionMoney:
    """``money`` at another GPU-hour price, or with ``capex_change_usd`` more capex (its support
    follows at ``support_fraction_per_year``).

    Examples
    --------
    >>> m = OptionMoney(technology="roce_v2", years=5, capex_usd=10.0, energy_usd=0.0,
    ...     support_usd=0.0, staff_usd=0.0, gpu_time_usd=20.0, gpu_hours=10.0, gpu_hour_usd=2.0,
    ...     total_usd=30.0, step_s=1.0, step_low_s=1.0, step_high_s=1.0)
    >>> repriced(m, gpu_hour_usd=3.0).total_usd, repriced(m, capex_change_usd=5.0).total_usd
    (40.0, 35.0)
    """
    price = money.gpu_hour_usd if gpu_hour_usd is None else gpu_hour_usd
    gpu_time = money.gpu_hours * price
    risk = money.config_risk_usd + money.config_risk_gpu_hours * (price - money.gpu_hour_usd)
    support_delta = money.years * support_fraction_per_year * capex_change_usd
    in_domain = (
        money.gpu_time_in_domain_usd * (price / money.gpu_hour_usd) if money.gpu_hour_usd else 0.0
    )
    return money.model_copy(
        update={
            "gpu_hour_usd": price,
            "gpu_time_usd": gpu_time,
            "gpu_time_in_domain_usd": in_domain,
            "config_risk_usd": risk,
            "capex_usd": money.capex_usd + capex_change_usd,
            "support_usd": money.support_usd + support_delta,
            "total_usd": money.total_usd
            + (gpu_time - money.gpu_time_usd)
            + (risk - money.config_risk_usd)
            + capex_change_usd
            + support_delta,
        }
    )


def network_money_usd(money: OptionMoney) -> float:
    """The money ``cost_sensitive`` minimises: the total without the value of GPU time (the
    fabric's idle GPU time and the GPU part of the configuration risk), to the cent."""
    return round(
        money.total_usd - money.gpu_time_usd - money.config_risk_gpu_hours * money.gpu_hour_usd,
        2,
    )


def money_table(evaluations: Sequence[Evaluation], valid: ValidScenario) -> list[OptionMoney]:
    """:func:`option_money` of every candidate, in the evaluations' order."""
    return [option_money(e, valid) for e in evaluations]
