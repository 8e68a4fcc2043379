"""The one entry point: design, price, model and assess every technology of a scenario.

Each technology's design is searched (:func:`search_design`): every choice the spec leaves open
(switch model, topology, tiers, planes; :func:`fabricplan.topology.designer.design_space`) is
designed and priced, the cheapest few by capex are priced over the horizon (TCO) with the value
of the GPU time their exposed communication idles, and the least money wins (fewer switches on a
tie). The
others are kept in ``design.alternatives`` with why each lost.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [e.technology for e in evaluate(valid, backend="fake")]
['infiniband', 'roce_v2']
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.analytic.cost import fabric_cost, with_gpu_idle_cost
from fabricplan.backends import get_backend
from fabricplan.errors import DesignError, FabricPlanError, InputFileError, ModelError
from fabricplan.lint.operations import assess_operations
from fabricplan.model.fabric import DesignAlternative, DesignChoice, FabricDesign, Finding
from fabricplan.model.results import (
    CostBreakdown,
    Evaluation,
    InfeasibleOption,
    PerformanceResult,
    PerfRequest,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import (
    bom_capex_usd,
    design_fabric,
    design_space,
    port_mode_for_nic,
)
from fabricplan.topology.fat_tree import leaf_split

PRICED_IN_FULL = 6
"""How many of the cheapest designs by capex are priced in full (power, support, operations)
and ranked on TCO plus the value of the GPU time they idle; the others lose on capex alone. A
search bound of ours: support is a fraction of capex and energy and operations grow with the
switch count, and the step model runs once per design shape (:func:`_shape`), so widening it
costs little but time."""

RANKING_BACKENDS = ("analytic", "fake")
"""Backends the search ranks with; any other (flow, packet) ranks with the analytic model and
runs only on the chosen design."""


@dataclass(frozen=True)
class _Built:
    choice: DesignChoice
    valid: ValidScenario
    design: FabricDesign
    capex_usd: float

    @property
    def switches_total(self) -> int:
        return sum(self.design.switches.values())


@dataclass(frozen=True)
class _Candidate:
    choice: DesignChoice
    valid: ValidScenario
    design: FabricDesign
    cost: CostBreakdown
    gpu_idle_usd: float | None = None

    @property
    def switches_total(self) -> int:
        return sum(self.design.switches.values())

    @property
    def money_usd(self) -> float:
        return self.cost.tco_usd + (self.gpu_idle_usd or 0.0)


def _planes_may_help(
    fewest: dict[tuple[str, str, int], int | None],
    single_plane: dict[tuple[str, str], int],
    choice: DesignChoice,
    endpoints: int,
    nic_speed_gbps: float,
    oversubscription: float,
) -> bool:
    """Whether splitting into ``choice.planes`` planes can save switches: when one plane of the
    same switch and topology cannot be built; or when it needs three tiers or a spine set per
    rail and each of the planes would fit two tiers (``k x d`` host ports). Two tiers of one
    spine set already cost ``3H/k`` switches for ``H`` host ports, and three tiers in every plane
    keep the three-tier count: the DeepSeek MPFT saving is the tier it removes."""
    one = (choice.switch.id, choice.topology, 1)
    if one not in fewest:
        return True
    tiers = fewest[one]
    if tiers is None:
        return True
    if tiers != 3 and single_plane.get(one[:2], 1) == 1:
        return False
    mode = port_mode_for_nic(choice.switch, nic_speed_gbps)
    densest, _ = leaf_split(mode.ports, oversubscription)
    return endpoints / choice.planes <= mode.ports * densest


def _with_switch(valid: ValidScenario, choice: DesignChoice, tech: TechnologyName) -> ValidScenario:
    if valid.switches.get(tech) == choice.switch:
        return valid
    return valid.model_copy(update={"switches": {**valid.switches, tech: choice.switch}})


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _lost_because(loser: _Candidate, winner: _Candidate, ranked_on_idle: bool) -> str:
    gap = loser.money_usd - winner.money_usd
    years = winner.cost.years
    if gap > 0:
        parts = [
            f"capex {loser.cost.capex_usd - winner.cost.capex_usd:+,.0f}",
            f"TCO {loser.cost.tco_usd - winner.cost.tco_usd:+,.0f}",
        ]
        if ranked_on_idle and loser.gpu_idle_usd is not None and winner.gpu_idle_usd is not None:
            parts.append(f"idle GPU time {loser.gpu_idle_usd - winner.gpu_idle_usd:+,.0f}")
        return f"{_usd(gap)} more over {years} years than the chosen design ({', '.join(parts)})"
    return (
        f"same money as the chosen design within $1; more switches ({loser.switches_total} vs"
        f" {winner.switches_total}) or later in the search order"
    )


def _alternative(
    candidate: _Candidate, winner: _Candidate, ranked_on_idle: bool
) -> DesignAlternative:
    design = candidate.design
    return DesignAlternative(
        switch=candidate.choice.switch.id,
        topology=candidate.choice.topology,
        tiers=design.tiers,
        planes=design.planes,
        spine_groups=design.spine_groups,
        switches_total=candidate.switches_total,
        capex_usd=candidate.cost.capex_usd,
        tco_usd=candidate.cost.tco_usd,
        gpu_idle_usd=candidate.gpu_idle_usd,
        money_usd=candidate.money_usd,
        more_usd=candidate.money_usd - winner.money_usd,
        lost_because=_lost_because(candidate, winner, ranked_on_idle),
    )


def _capex_only(candidate: _Built, winner: _Candidate) -> DesignAlternative:
    design = candidate.design
    gap = candidate.capex_usd - winner.cost.capex_usd
    return DesignAlternative(
        switch=candidate.choice.switch.id,
        topology=candidate.choice.topology,
        tiers=design.tiers,
        planes=design.planes,
        spine_groups=design.spine_groups,
        switches_total=candidate.switches_total,
        capex_usd=candidate.capex_usd,
        more_usd=gap,
        lost_because=(
            f"capex {_usd(gap)} above the chosen design's and not among the {PRICED_IN_FULL}"
            " cheapest by capex, so not priced further"
        ),
    )


def _infeasible(choice: DesignChoice, exc: DesignError) -> DesignAlternative:
    return DesignAlternative(
        switch=choice.switch.id,
        topology=choice.topology,
        tiers=choice.tiers,
        planes=choice.planes,
        lost_because=f"cannot be built: {exc}",
    )


def _shape(candidate: _Candidate) -> tuple[object, ...]:
    """What the step model reads of a design: designs of one shape share their idle GPU time
    (the switch's price, power and id do not enter it; its latency, buffer and routing do)."""
    d, sw = candidate.design, candidate.choice.switch
    return (
        d.topology,
        d.tiers,
        d.planes,
        d.spine_groups,
        d.rail_aligned,
        d.radix,
        d.hosts_per_leaf,
        d.leaves_per_pod,
        d.worst_case_switch_hops,
        round(d.bisection_tbps, 6),
        d.port_speed_gbps,
        tuple((g.name, g.cable_id) for g in d.link_groups),
        sw.latency_ns.value,
        sw.adaptive_routing,
        sw.in_network_reduction,
        sw.buffer_bytes.value if sw.buffer_bytes is not None else None,
    )


def _idle_usd(candidate: _Candidate, backend: str, request: PerfRequest) -> float | None:
    ranking = get_backend(backend if backend in RANKING_BACKENDS else "analytic")
    step_only = request.model_copy(update={"collectives": (), "p2p": False, "step": True})
    try:
        result = ranking.perform(candidate.valid, candidate.design, step_only)
    except FabricPlanError:
        return None
    priced = with_gpu_idle_cost(candidate.valid, candidate.cost, result.step)
    return priced.gpu_idle_usd


def search_design(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str = "analytic",
    request: PerfRequest | None = None,
) -> tuple[ValidScenario, FabricDesign, CostBreakdown]:
    """The best design of ``technology`` over the space the spec leaves open.

    Every :class:`~fabricplan.model.fabric.DesignChoice` of
    :func:`~fabricplan.topology.designer.design_space` (within the bounds below) is designed and
    priced by its bill of materials; the :data:`PRICED_IN_FULL` cheapest by capex get their TCO
    (capex + years x opex, :func:`~fabricplan.analytic.cost.fabric_cost`) and, when the request
    asks for the training step, the value of the GPU time they idle (one step-model run per
    design shape). The least money wins; ties go to fewer switches, then to the search order
    (the spec's default first). Bounds: three tiers only where two need a spine set per rail;
    more planes only where each plane then fits two tiers or one plane cannot be built.

    Returns
    -------
    tuple
        The scenario with the chosen switch in ``switches[technology]``, the design (with
        ``alternatives``: every other choice, best first, each with why it lost) and its cost
        (without the idle-GPU term, which :func:`evaluate_one` adds from the backend's step).

    Raises
    ------
    DesignError
        The first choice's error when no choice can be built (each choice's reason is in the
        message).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 32}, "fabric": {"technologies": ["infiniband"]}})
    >>> chosen, design, cost = search_design(valid, "infiniband", backend="fake")
    >>> design.switches["leaf"], design.tiers   # 32 NICs fit one 64-port switch
    (1, 1)
    """
    request = request or PerfRequest()
    designed: list[_Built] = []
    failed: list[tuple[DesignChoice, DesignError]] = []
    fewest: dict[tuple[str, str, int], int | None] = {}
    split: dict[tuple[str, str, int], bool] = {}
    single_plane: dict[tuple[str, str], int] = {}
    auto_planes = valid.spec.fabric.planes == "auto"
    endpoints = valid.spec.cluster.endpoints
    nic_speed = valid.spec.cluster.nic_speed_gbps
    oversubscription = valid.spec.fabric.oversubscription
    for choice in design_space(valid, technology):
        key = (choice.switch.id, choice.topology, choice.planes)
        if choice.tiers == 3 and valid.spec.fabric.tiers == "auto" and not split.get(key):
            # Three tiers only add a tier to a 1- or 3-tier (or unbuildable) design, and to a
            # 2-tier one with one spine set (more switches, longer paths); they can pay only
            # where two tiers need a spine set per rail (no fabric path between rails).
            continue
        if (
            choice.planes > 1
            and auto_planes
            and not _planes_may_help(
                fewest, single_plane, choice, endpoints, nic_speed, oversubscription
            )
        ):
            continue
        scenario = _with_switch(valid, choice, technology)
        try:
            design = design_fabric(scenario, technology, choice)
        except DesignError as exc:
            failed.append((choice, exc))
            if choice.tiers is None:
                fewest[key] = None
            continue
        if choice.tiers is None:
            fewest[key] = design.tiers
            split[key] = design.tiers == 2 and design.spine_groups > 1
            if choice.planes == 1:
                single_plane[key[:2]] = design.spine_groups
        designed.append(_Built(choice, scenario, design, bom_capex_usd(scenario, design)))
    if not designed:
        first = failed[0][1]
        by_reason: dict[str, list[str]] = {}
        for tried, error in failed:
            by_reason.setdefault(error.what, []).append(tried.label)
        reasons = "; ".join(
            f"{what} ({labels[0]}" + (f" and {len(labels) - 1} more)" if len(labels) > 1 else ")")
            for what, labels in by_reason.items()
        )
        raise DesignError(
            first.code,
            first.where,
            f"no design in the search space fits ({len(failed)} tried: {reasons})",
            first.value,
            first.fix,
        )
    by_capex = sorted(designed, key=lambda b: (round(b.capex_usd), b.switches_total))
    built = [
        _Candidate(b.choice, b.valid, b.design, fabric_cost(b.valid, b.design))
        for b in by_capex[:PRICED_IN_FULL]
    ]
    by_tco = sorted(built, key=lambda c: (round(c.cost.tco_usd), c.switches_total))
    ranked_on_idle = request.step
    if ranked_on_idle:
        idle_by_shape: dict[tuple[object, ...], float | None] = {}
        head = []
        for c in by_tco:
            shape = _shape(c)
            if shape not in idle_by_shape:
                idle_by_shape[shape] = _idle_usd(c, backend, request)
            head.append(_Candidate(c.choice, c.valid, c.design, c.cost, idle_by_shape[shape]))
        pool = sorted(
            enumerate(head), key=lambda ic: (round(ic[1].money_usd), ic[1].switches_total, ic[0])
        )
        ranked = [c for _, c in pool]
    else:
        ranked = by_tco
    winner = ranked[0]
    alternatives = (
        tuple(_alternative(c, winner, ranked_on_idle) for c in ranked[1:])
        + tuple(_capex_only(b, winner) for b in by_capex[PRICED_IN_FULL:])
        + tuple(_infeasible(choice, exc) for choice, exc in failed)
    )
    note = Finding(
        code="FP320",
        severity="info",
        message=(
            f"design search: {len(designed) + len(failed)} choices tried ({len(failed)} cannot be"
            f" built); kept {winner.choice.label} at {_usd(winner.money_usd)} over"
            f" {winner.cost.years} years"
            + (" including idle GPU time" if ranked_on_idle and winner.gpu_idle_usd else "")
            + "; the others are in design.alternatives"
        ),
    )
    design = winner.design.model_copy(
        update={"alternatives": alternatives, "findings": (note, *winner.design.findings)}
    )
    return winner.valid, design, winner.cost


__all__ = ["evaluate", "evaluate_feasible", "evaluate_one", "search_design"]


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str = "analytic",
    request: PerfRequest | None = None,
) -> Evaluation:
    """Everything known about one technology's best fabric for this scenario.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        One of its technologies.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model (default: every collective at the default sizes, the training step).

    Returns
    -------
    Evaluation
        Design, cost, performance and operations of that technology.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> e = evaluate_one(parse_spec({"cluster": {"gpus": 256}}), "roce_v2", backend="fake")
    >>> e.technology, e.performance.backend
    ('roce_v2', 'fake')
    """
    chosen, design, cost = search_design(valid, technology, backend, request)
    performance = get_backend(backend).perform(chosen, design, request or PerfRequest())
    return Evaluation(
        technology=technology,
        design=design,
        cost=with_gpu_idle_cost(chosen, cost, performance.step),
        performance=performance,
        ops=assess_operations(chosen, design),
    )


def evaluate(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> list[Evaluation]:
    """One :class:`Evaluation` per technology in the spec, in the spec's order.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model.

    Returns
    -------
    list of Evaluation
        One per technology.

    Raises
    ------
    DesignError
        The first, if a technology cannot be designed; :func:`evaluate_feasible` keeps going
        instead.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> [e.technology for e in evaluate(parse_spec({"cluster": {"gpus": 256}}), backend="fake")]
    ['infiniband', 'roce_v2']
    """
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]


def evaluate_feasible(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> tuple[list[Evaluation], list[InfeasibleOption]]:
    """Evaluations of the technologies that can be designed, and the others with the reason.

    A spec asking for something no technology can build still raises the first design error.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model.

    Returns
    -------
    tuple of (list of Evaluation, list of InfeasibleOption)
        The designable technologies' evaluations and the others with their error.

    Examples
    --------
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
            evaluations.append(evaluate_one(valid, tech, backend, request))
        except DesignError as exc:
            first_error = first_error or exc
            infeasible.append(InfeasibleOption(technology=tech, code=exc.code, message=str(exc)))
    if not evaluations and first_error is not None:
        raise first_error
    return evaluations, infeasible


PER_TECHNOLOGY_CODES = frozenset(("FP509", "FP513"))
"""Errors that concern one technology's hardware (a forced algorithm or in-network reduction it
lacks): the other technologies still run, and the skipped one is named."""


def perform_each(
    valid: ValidScenario, request: PerfRequest, backend: str = "analytic"
) -> tuple[list[PerformanceResult], dict[TechnologyName, ModelError]]:
    """The performance of every technology's designed fabric (what ``perf`` prints).

    A technology lacking what the request forces (:data:`PER_TECHNOLOGY_CODES`) is skipped with
    its error; when every technology is skipped, the first error is raised.

    >>> from fabricplan.spec import parse_spec
    >>> results, skipped = perform_each(parse_spec({"cluster": {"gpus": 64}}), PerfRequest())
    >>> [r.technology for r in results], skipped
    (['infiniband', 'roce_v2'], {})
    """
    model = get_backend(backend)
    results: list[PerformanceResult] = []
    skipped: dict[TechnologyName, ModelError] = {}
    for tech in valid.spec.fabric.technologies:
        try:
            results.append(model.perform(valid, design_fabric(valid, tech), request))
        except ModelError as exc:
            if exc.code not in PER_TECHNOLOGY_CODES:
                raise
            skipped[tech] = exc
    if not results:
        raise next(iter(skipped.values()))
    return results, skipped


def roce_baseline_files(valid: ValidScenario, vendor: str, origin: str = "spec") -> dict[str, str]:
    """The baseline lossless configuration of the spec's RoCE fabric (``roce-config``'s files).

    FP420 when the spec names no RoCE technology.

    >>> from fabricplan.spec import parse_spec
    >>> files = roce_baseline_files(parse_spec({"cluster": {"gpus": 64}}), "sonic")
    >>> "host-nic-expected.txt" in files
    True
    """
    from fabricplan.lint.baselines.generator import baseline_spec, roce_baseline

    technology = next((t for t in ("roce_v2", "roce_v1") if t in valid.technologies), None)
    if technology is None:
        raise InputFileError(
            "FP420",
            f"{origin}: fabric.technologies",
            "names no RoCE technology",
            list(valid.technologies),
            "add roce_v2 to fabric.technologies",
        )
    return roce_baseline(baseline_spec(valid, design_fabric(valid, technology)), vendor)
