"""The one entry point: design, price, model and assess every technology of a scenario.

For each technology: the design, its performance through the backend seam, the effect of the
deployed lossless configuration on it (:mod:`fabricplan.analytic.lossless`), the cost with the
GPU time the fabric idles and the configuration risk, the operations tasks and, when the spec
asks for growth, what growing the same design to the target costs.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [e.technology for e in evaluate(valid, backend="fake")]
['infiniband', 'roce_v2']
"""

from __future__ import annotations

from collections.abc import Mapping

from fabricplan.analytic.config_risk import config_risk
from fabricplan.analytic.cost import fabric_cost, with_config_risk, with_gpu_idle_cost
from fabricplan.analytic.growth import growth_result
from fabricplan.analytic.lossless import (
    LosslessEffect,
    lossless_effect,
    with_lossless_points,
    with_lossless_step,
)
from fabricplan.analytic.operations_effort import HOURS_PER_ENGINEER_YEAR, team_experience
from fabricplan.analytic.step_simulated import with_simulated_collectives
from fabricplan.backends import Backend, get_backend
from fabricplan.errors import DesignError, FabricPlanError
from fabricplan.lint.headroom import sonic_mellanox_headroom
from fabricplan.lint.operations import assess_operations
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    Evaluation,
    GrowthResult,
    InfeasibleOption,
    PerformanceResult,
    PerfRequest,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import replace_spec
from fabricplan.topology.designer import design_fabric

__all__ = ["evaluate", "evaluate_feasible", "evaluate_one"]

HEADROOM_MTU_BYTES = 9100
"""MTU the required PFC headroom is computed for (the SONiC default port MTU)."""


def _headroom_ok(valid: ValidScenario, design: FabricDesign) -> bool:
    given = valid.spec.fabric.lossless.pfc_headroom_bytes
    if given == "auto":
        return True
    longest = max((g.reach_m for g in design.link_groups if g.count), default=3.0)
    need = sonic_mellanox_headroom(design.port_speed_gbps, longest, HEADROOM_MTU_BYTES)
    return given >= need.xoff_bytes


def _effect(
    valid: ValidScenario, design: FabricDesign, routing: str, *, pfc: bool | None = None
) -> LosslessEffect:
    lossless = valid.spec.fabric.lossless
    cc = "none" if lossless.congestion_control == "none" or not lossless.ecn else "dcqcn"
    return lossless_effect(
        lossless.pfc if pfc is None else pfc,
        _headroom_ok(valid, design),
        cc,
        not lossless.pfc_watchdog,
        valid.spec.fabric.oversubscription,
        routing,
    )


def _routing(valid: ValidScenario, technology: TechnologyName, request: PerfRequest) -> str:
    return (
        request.routing.get(technology)
        or valid.spec.fabric.routing.get(technology)
        or valid.technologies[technology].routing
    )


def _with_configuration(
    valid: ValidScenario, design: FabricDesign, performance: PerformanceResult, routing: str
) -> PerformanceResult:
    """The performance with the deployed lossless configuration's effect, and a note saying what
    it costs in step time and GPU time."""
    effect = _effect(valid, design, routing)
    if effect.neutral and not effect.notes:
        return performance
    step = performance.step
    notes = [f"lossless configuration: {n}" for n in effect.notes]
    if step is not None and not effect.neutral:
        after = with_lossless_step(step, effect)
        cost = fabric_cost(valid, design)
        before_usd = with_gpu_idle_cost(valid, cost, step).gpu_idle_usd or 0.0
        after_usd = with_gpu_idle_cost(valid, cost, after).gpu_idle_usd or 0.0
        notes.append(
            f"configuration: {design.technology}: {effect.notes[0].split(':')[0]}: all_to_all"
            f" {effect.all_to_all - 1:+.0%}, rings {effect.ring - 1:+.0%}, step"
            f" {after.step_s / step.step_s - 1:+.1%} ({step.step_s:.3f} s -> {after.step_s:.3f} s),"
            f" ${after_usd - before_usd:,.0f} of GPU time over {valid.spec.cost.years} years"
            " (fabric.lossless)"
        )
        step = after
    return performance.model_copy(
        update={
            "step": step,
            "collectives": with_lossless_points(performance.collectives, effect),
            "notes": (*performance.notes, *notes),
        }
    )


def with_configuration_points(
    valid: ValidScenario, design: FabricDesign, performance: PerformanceResult, request: PerfRequest
) -> PerformanceResult:
    """nccl-tests rows with the deployed lossless configuration's effect (``perf --config``)."""
    effect = _effect(valid, design, _routing(valid, design.technology, request))
    if effect.neutral and not effect.notes:
        return performance
    return performance.model_copy(
        update={
            "collectives": with_lossless_points(performance.collectives, effect),
            "notes": (*performance.notes, *(f"lossless configuration: {n}" for n in effect.notes)),
        }
    )


def scenario_for_growth(valid: ValidScenario, design: FabricDesign, gpus: int) -> ValidScenario:
    """``valid`` at ``gpus`` GPUs with the design's choices pinned: its switch, topology and
    planes (tiers stay the spec's: growth may need a new one)."""
    data = valid.spec.model_dump(exclude_unset=True)
    data["cluster"]["gpus"] = gpus
    data["growth"] = None
    fabric = data.setdefault("fabric", {})
    fabric["topology"] = design.topology
    fabric["planes"] = design.planes
    chosen = valid.spec.fabric.switch.get(design.technology)
    if (chosen is None or isinstance(chosen, str)) and valid.switches[
        design.technology
    ].id == design.switch_id:
        fabric.setdefault("switch", {})[design.technology] = design.switch_id
    return replace_spec(valid, data, "growth target")


def growth_of(valid: ValidScenario, design: FabricDesign) -> GrowthResult | None:
    """What growing ``design`` to ``growth.target_gpus`` costs (``None`` when none is asked)."""
    growth = valid.spec.growth
    if growth is None:
        return None
    try:
        target = design_fabric(
            scenario_for_growth(valid, design, growth.target_gpus), design.technology
        )
    except FabricPlanError as exc:
        return growth_result(valid, design, None, growth.target_gpus, str(exc))
    return growth_result(valid, design, target, growth.target_gpus)


BackendChoice = str | Backend
"""A backend by name, or a backend object (e.g. a cached one)."""


def _perform(
    valid: ValidScenario, design: FabricDesign, backend: BackendChoice, request: PerfRequest
) -> PerformanceResult:
    """The backend's result; a simulator's collective times also go into the step time."""
    chosen = get_backend(backend) if isinstance(backend, str) else backend
    performance = chosen.perform(valid, design, request)
    if chosen.name in SIMULATED_BACKENDS and request.step and performance.step is not None:
        analytic = get_backend("analytic").perform(
            valid, design, request.model_copy(update={"p2p": False, "step": False})
        )
        performance = with_simulated_collectives(performance, analytic.collectives)
    return performance


SIMULATED_BACKENDS = frozenset({"flow", "packet"})


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: BackendChoice = "analytic",
    request: PerfRequest | None = None,
    performance: PerformanceResult | None = None,
) -> Evaluation:
    """Everything known about one technology's fabric for this scenario.

    ``performance`` reuses a result already made for the same design and configuration (the
    decision's team and growth re-evaluations) instead of running the backend again.
    """
    request = request or PerfRequest()
    design = design_fabric(valid, technology)
    routing = _routing(valid, technology, request)
    name = backend if isinstance(backend, str) else backend.name
    if performance is None:
        performance = _perform(valid, design, backend, request)
        # The packet level simulates the lossless settings itself (drops, pauses, go-back-N).
        if valid.technologies[technology].link_flow_control == "pfc" and name != "packet":
            performance = _with_configuration(valid, design, performance, routing)
    cost = with_gpu_idle_cost(valid, fabric_cost(valid, design), performance.step)
    tech = valid.technologies[technology]
    slowdown = 0.0
    pfc_on = valid.spec.fabric.lossless.pfc
    if performance.step is not None and tech.link_flow_control == "pfc" and pfc_on:
        lossy = with_lossless_step(performance.step, _effect(valid, design, routing, pfc=False))
        slowdown = lossy.step_s / performance.step.step_s - 1.0
    risk = config_risk(
        tech,
        team_experience(valid, technology),
        valid.spec.cost.years,
        design.gpus,
        slowdown,
        valid.spec.cost.engineer_usd_per_year / HOURS_PER_ENGINEER_YEAR,
    )
    return Evaluation(
        technology=technology,
        design=design,
        cost=with_config_risk(valid, cost, risk),
        performance=performance,
        ops=assess_operations(valid, design),
        growth=growth_of(valid, design),
    )


def evaluate(
    valid: ValidScenario, backend: BackendChoice = "analytic", request: PerfRequest | None = None
) -> list[Evaluation]:
    """One :class:`Evaluation` per technology in the spec, in the spec's order.

    Raises the first :class:`~fabricplan.errors.DesignError` if a technology cannot be designed;
    :func:`evaluate_feasible` keeps going instead.
    """
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]


def evaluate_feasible(
    valid: ValidScenario,
    backend: BackendChoice = "analytic",
    request: PerfRequest | None = None,
    performance: Mapping[TechnologyName, PerformanceResult] | None = None,
) -> tuple[list[Evaluation], list[InfeasibleOption]]:
    """Evaluations of the technologies that can be designed, and the others with the reason.

    A spec asking for something no technology can build still raises the first design error.
    ``performance`` reuses results per technology (see :func:`evaluate_one`).

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> evals, infeasible = evaluate_feasible(valid, backend="fake")
    >>> len(evals), infeasible
    (2, [])
    """
    evaluations: list[Evaluation] = []
    infeasible: list[InfeasibleOption] = []
    first_error: DesignError | None = None
    for tech in valid.spec.fabric.technologies:
        try:
            evaluations.append(
                evaluate_one(valid, tech, backend, request, (performance or {}).get(tech))
            )
        except DesignError as exc:
            first_error = first_error or exc
            infeasible.append(InfeasibleOption(technology=tech, code=exc.code, message=str(exc)))
    if not evaluations and first_error is not None:
        raise first_error
    return evaluations, infeasible
