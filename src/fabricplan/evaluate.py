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

from collections.abc import Mapping
from dataclasses import dataclass, replace

from fabricplan.analytic.config_risk import (
    UNWATCHED_STORM_HOURS,
    WATCHDOG_DETECTION_S,
    ConfigRisk,
    config_risk,
    pause_storm_risk,
    risk_classes,
)
from fabricplan.analytic.cost import (
    GPU_HOUR_ITEM_PREFIX,
    fabric_cost,
    with_config_risk,
    with_gpu_idle_cost,
)
from fabricplan.analytic.growth import growth_result
from fabricplan.analytic.link_error import with_link_errors
from fabricplan.analytic.lossless import (
    ONE_SWITCH_PATHS,
    WATCHDOG_OFF,
    LosslessEffect,
    lossless_effect,
    with_lossless_points,
    with_lossless_step,
)
from fabricplan.analytic.operations_effort import HOURS_PER_ENGINEER_YEAR, team_experience
from fabricplan.analytic.step_simulated import with_simulated_collectives
from fabricplan.analytic.uncertainty import with_uncertainty
from fabricplan.backends import Backend, get_backend
from fabricplan.errors import DesignError, FabricPlanError, ModelError
from fabricplan.lint.headroom import sonic_mellanox_headroom
from fabricplan.lint.operations import assess_operations
from fabricplan.model.fabric import DesignAlternative, DesignChoice, FabricDesign, Finding
from fabricplan.model.results import (
    CalibrationEffect,
    CalibrationProfile,
    CostBreakdown,
    Evaluation,
    GrowthResult,
    GrowthRiskRecord,
    InfeasibleOption,
    PerformanceResult,
    PerfRequest,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.search_cache import SearchCache
from fabricplan.spec import replace_spec
from fabricplan.topology.designer import (
    bom_capex_usd,
    default_choice,
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


class _ReusedBackend:
    """``inner`` with each result made once per :class:`~fabricplan.search_cache.SearchCache`
    (for the closed-form backends the search ranks with: their results are pure functions of
    the scenario, the design and the request)."""

    def __init__(self, inner: Backend, cache: SearchCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        return self.cache.performance(
            self.inner.name,
            valid,
            design,
            request,
            lambda: self.inner.perform(valid, design, request),
        )


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
    keep the three-tier count: the DeepSeek MPFT saving is the tier it removes. Planes that are
    each one switch (``H / planes <= k``) remove the spine tier itself (``H/k`` switches)."""
    one = (choice.switch.id, choice.topology, 1)
    if one not in fewest:
        return True
    tiers = fewest[one]
    if tiers is None:
        return True
    mode = port_mode_for_nic(choice.switch, nic_speed_gbps)
    if tiers > 1 and endpoints / choice.planes <= mode.ports:
        return True  # each plane is one switch: no spine tier at all (rail-only at one rail)
    if tiers != 3 and single_plane.get(one[:2], 1) == 1:
        return False
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


def _idle_usd(
    candidate: _Candidate, backend: str, request: PerfRequest, cache: SearchCache | None = None
) -> float | None:
    ranking = get_backend(backend if backend in RANKING_BACKENDS else "analytic")
    if cache is not None:
        ranking = _ReusedBackend(ranking, cache)
    step_only = request.model_copy(
        update={
            "collectives": (),
            "p2p": False,
            "step": True,
            "calibration": applicable_profile(request, candidate.valid, candidate.design),
        }
    )
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
    cache: SearchCache | None = None,
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
    A ``cache`` (:class:`~fabricplan.search_cache.SearchCache`) makes each design and step-model
    run once over the re-evaluations that share it.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        One of its technologies.
    backend
        The performance backend's name, for the idle-GPU term of the cheapest designs.
    request
        What the evaluation will model (the step decides whether idle GPU time is priced).
    cache
        Designs and step-model runs shared with the run's other evaluations.

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
    chosen, design, cost, _ = _search(valid, technology, backend, request, cache)
    return chosen, design, cost


def _search(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str,
    request: PerfRequest | None,
    cache: SearchCache | None,
) -> tuple[ValidScenario, FabricDesign, CostBreakdown, list[_Candidate]]:
    """:func:`search_design`, with the candidates priced in full, best first (the kept one
    first; the others are the first ``design.alternatives``, in the same order); with a
    ``cache``, each search is made once (:meth:`SearchCache.search`)."""
    request = request or PerfRequest()
    if cache is None:
        return _search_afresh(valid, technology, backend, request, None)
    ranking = backend if backend in RANKING_BACKENDS else "analytic"
    chosen, design, cost, ranked = cache.search(
        valid,
        technology,
        ranking,
        request,
        lambda: _search_afresh(valid, technology, ranking, request, cache),
    )
    if chosen.spec is valid.spec:
        return chosen, design, cost, ranked
    # Made for a scenario that differs only where no search reads (the growth target, the
    # name, the decision's constraints): the same choices, in this scenario.
    with_switch: dict[int, ValidScenario] = {}
    rebound = []
    for c in ranked:
        scenario = with_switch.get(id(c.choice.switch))
        if scenario is None:
            scenario = with_switch[id(c.choice.switch)] = _with_switch(valid, c.choice, technology)
        rebound.append(replace(c, valid=scenario))
    return rebound[0].valid, design, cost, rebound


UNPRICED_LINK_CODES = frozenset(("FP316", "FP1234"))
"""Design findings that leave links without a cable, hence unpriced."""


def _has_unpriced_links(design: FabricDesign) -> bool:
    return any(f.code in UNPRICED_LINK_CODES for f in design.findings)


def _search_afresh(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str,
    request: PerfRequest,
    cache: SearchCache | None,
) -> tuple[ValidScenario, FabricDesign, CostBreakdown, list[_Candidate]]:
    designed: list[_Built] = []
    failed: list[tuple[DesignChoice, DesignError]] = []
    fewest: dict[tuple[str, str, int], int | None] = {}
    split: dict[tuple[str, str, int], bool] = {}
    single_plane: dict[tuple[str, str], int] = {}
    auto_planes = valid.spec.fabric.planes == "auto"
    endpoints = valid.spec.cluster.endpoints
    nic_speed = valid.spec.cluster.nic_speed_gbps
    oversubscription = valid.spec.fabric.oversubscription
    with_switch: dict[int, ValidScenario] = {}  # one scenario per switch (the choices hold them)
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
        scenario = with_switch.get(id(choice.switch))
        if scenario is None:
            scenario = with_switch[id(choice.switch)] = _with_switch(valid, choice, technology)
        try:
            if cache is None:
                design = design_fabric(scenario, technology, choice)
            else:
                design = cache.design(scenario, technology, choice)
        except DesignError as exc:
            failed.append((choice, exc.detached()))  # its traceback would hold this list
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
        # One reason per error code (the first choice's words; the others differ only in
        # their numbers), so that the line stays one readable line over a large space.
        by_code: dict[str, tuple[str, list[str]]] = {}
        for tried, error in failed:
            by_code.setdefault(error.code, (error.what, []))[1].append(tried.label)
        reasons = "; ".join(
            f"{what} ({labels[0]}" + (f" and {len(labels) - 1} more)" if len(labels) > 1 else ")")
            for what, labels in by_code.values()
        )
        raise DesignError(
            first.code,
            first.where,
            f"no design in the search space fits ({len(failed)} tried: {reasons})",
            first.value,
            first.fix,
        )
    # A design with links no catalog cable serves (FP316, or none of its ends' lanes: FP1234)
    # leaves them unpriced, so its capex is too low: it competes only when no design prices
    # all its links.
    priced = [b for b in designed if not _has_unpriced_links(b.design)]
    by_capex = sorted(priced or designed, key=lambda b: (round(b.capex_usd), b.switches_total))
    built = [
        _Candidate(
            b.choice,
            b.valid,
            b.design,
            fabric_cost(b.valid, b.design) if cache is None else cache.cost(b.valid, b.design),
        )
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
                idle_by_shape[shape] = _idle_usd(c, backend, request, cache)
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
    return winner.valid, design, winner.cost, ranked


def applicable_profile(
    request: PerfRequest, valid: ValidScenario, design: FabricDesign
) -> CalibrationProfile | None:
    """The request's calibration profile if it was fitted on this fabric, else ``None``.

    Parameters
    ----------
    request
        What to model, with the calibration profile ``fabricplan calibrate`` wrote (if any).
    valid
        The validated scenario (its resolved NIC and switch per technology).
    design
        The fabric the prediction is for.

    Returns
    -------
    CalibrationProfile or None
        The profile when it was fitted on ``design``'s technology (and NIC and switch where it
        names them), else ``None``.

    Examples
    --------
    >>> from fabricplan.model.results import CalibrationProfile
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> roce = PerfRequest(calibration=CalibrationProfile(technology="roce_v2"))
    >>> applicable_profile(roce, valid, design_fabric(valid, "infiniband")) is None
    True
    """
    profile = request.calibration
    technology = design.technology
    if profile is None or profile.applies_to(
        technology, valid.nics[technology].id, design.switch_id
    ):
        return profile
    return None


def calibrated_performance(
    valid: ValidScenario, design: FabricDesign, backend: BackendChoice, request: PerfRequest
) -> PerformanceResult:
    """The backend's result with the request's calibration profile where it applies, and what
    the profile changed; then the uncertainty bands of every predicted value.

    A profile applies only to the technology it was fitted on, and to the NIC and switch where it
    names them (:meth:`~fabricplan.model.results.CalibrationProfile.applies_to`): one fitted on
    RoCE runs leaves the InfiniBand prediction as it was, and the result says so.

    Parameters
    ----------
    valid
        The validated scenario.
    design
        The fabric to predict for.
    backend
        A name of :func:`fabricplan.backends.backend_names`, or a backend object.
    request
        What to model, with the calibration profile (if any).

    Returns
    -------
    PerformanceResult
        The backend's tables, calibrated where the profile applies, with uncertainty bands and
        a note of what the profile changed (or why it did not apply).

    Examples
    --------
    >>> from fabricplan.model.results import CalibrationProfile
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> roce = CalibrationProfile(nic_bw_efficiency=0.5, technology="roce_v2")
    >>> ib = calibrated_performance(valid, design_fabric(valid, "infiniband"), "analytic",
    ...     PerfRequest(calibration=roce, step=False))
    >>> ib.calibration is None, "not applied" in ib.notes[-1]
    (True, True)
    """
    model = get_backend(backend) if isinstance(backend, str) else backend
    technology = design.technology
    profile = request.calibration
    nic = valid.nics[technology].id
    if profile is None or applicable_profile(request, valid, design) is not None:
        result = model.perform(valid, design, request)
    else:
        result = model.perform(valid, design, request.model_copy(update={"calibration": None}))
        fitted = "/".join(x for x in (profile.technology, profile.nic, profile.switch) if x)
        note = (
            f"calibration profile not applied: fitted on {fitted}, this fabric is"
            f" {technology}/{nic}/{design.switch_id}"
        )
        result = result.model_copy(update={"notes": (*result.notes, note)})
        profile = None
    if profile is not None:
        # Only a calibrated run needs the measurement readers (kept off compare's start-up).
        from fabricplan.measure.calibration import calibration_changes

        before = None
        if model.name == "analytic":  # instant: say what the profile moved
            before = model.perform(valid, design, request.model_copy(update={"calibration": None}))
        effect = CalibrationEffect(
            source=profile.source,
            technology=technology,
            changes=calibration_changes(profile, valid, technology),
            base_latency_us_before=before.base_latency_us if before else None,
            step_s_before=before.step.step_s if before and before.step else None,
        )
        result = result.model_copy(update={"calibration": effect})
    return with_uncertainty(result)


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
    one_switch = design.tiers == 1  # one path per flow and no uplinks: nothing to hash or share
    return lossless_effect(
        lossless.pfc if pfc is None else pfc,
        _headroom_ok(valid, design),
        cc,
        not lossless.pfc_watchdog,
        1.0 if one_switch else valid.spec.fabric.oversubscription,
        ONE_SWITCH_PATHS if one_switch else routing,
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
    """The performance with the deployed lossless configuration's effect, and a note per
    setting saying what it costs in step time and GPU time (the watchdog: in pause storms)."""
    effect = _effect(valid, design, routing)
    if not effect.settings and not effect.notes:
        return performance
    step = performance.step
    notes = [f"lossless configuration: {n}" for n in effect.notes]
    where = f"configuration: {design.technology}"
    years = valid.spec.cost.years
    if step is not None:
        cost = fabric_cost(valid, design)
        before_usd = with_gpu_idle_cost(valid, cost, step).gpu_idle_usd or 0.0
        for part in effect.settings:
            if part.setting == WATCHDOG_OFF:
                notes.append(f"{where}: {_watchdog_words(valid)}")
                continue
            alone = with_lossless_step(step, LosslessEffect(part.all_to_all, part.ring, ()))
            after_usd = with_gpu_idle_cost(valid, cost, alone).gpu_idle_usd or 0.0
            notes.append(
                f"{where}: {part.setting}: all_to_all {part.all_to_all - 1:+.1%}, rings"
                f" {part.ring - 1:+.1%}, step {alone.step_s / step.step_s - 1:+.1%}"
                f" ({step.step_s:.3f} s -> {alone.step_s:.3f} s),"
                f" {_signed_usd(after_usd - before_usd)} of GPU time over {years} years"
                " (fabric.lossless)"
            )
        if not effect.neutral:
            step = with_lossless_step(step, effect)
    return performance.model_copy(
        update={
            "step": step,
            "collectives": with_lossless_points(performance.collectives, effect),
            "notes": (*performance.notes, *notes),
        }
    )


def _signed_usd(usd: float) -> str:
    return f"-${-usd:,.0f}" if usd < 0 else f"${usd:,.0f}"


def _watchdog_words(valid: ValidScenario) -> str:
    """What the PFC watchdog being off costs: the pause storms' longer stops."""
    cluster = valid.spec.cluster
    years = valid.spec.cost.years
    on, off = (
        pause_storm_risk(cluster.endpoints, cluster.gpus, years, watchdog)
        for watchdog in (True, False)
    )
    price = valid.prices.get(f"{GPU_HOUR_ITEM_PREFIX}{valid.node.id}")
    hours = off.gpu_hours - on.gpu_hours
    usd = hours * price.price_usd if price is not None else 0.0
    staff = off.staff_hours * valid.spec.cost.engineer_usd_per_year / HOURS_PER_ENGINEER_YEAR
    return (
        f"{WATCHDOG_OFF}: {off.storms:.2g} pause storms expected over {years} years, each"
        f" stopping the fabric {UNWATCHED_STORM_HOURS:g} h instead of {WATCHDOG_DETECTION_S:g} s"
        f" (estimates): {hours:,.0f} GPU-hours"
        + (f" (${usd:,.0f})" if price is not None else " (no GPU-hour price)")
        + f" and ${staff:,.0f} of staff (configuration risk; fabric.lossless.pfc_watchdog)"
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


def growth_of(
    valid: ValidScenario, design: FabricDesign, cache: SearchCache | None = None
) -> GrowthResult | None:
    """What growing ``design`` to ``growth.target_gpus`` costs (``None`` when none is asked)."""
    growth = valid.spec.growth
    if growth is None:
        return None
    try:
        grown = scenario_for_growth(valid, design, growth.target_gpus)
        if cache is None:
            target = design_fabric(grown, design.technology)
        else:
            target = cache.design(
                grown, design.technology, default_choice(grown, design.technology)
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
    performance = calibrated_performance(valid, design, chosen, request)
    if chosen.name in SIMULATED_BACKENDS and request.step and performance.step is not None:
        rows = request.model_copy(update={"p2p": False, "step": False})
        analytic = get_backend("analytic").perform(valid, design, rows)
        if chosen.name == "packet":
            # The packet level's rows carry their corrupted frames, as the analytic step does:
            # its ratios are taken over analytic rows with the same expected delay.
            analytic = with_link_errors(valid, design, analytic, rows)
        performance = with_simulated_collectives(performance, analytic.collectives)
    return performance


SIMULATED_BACKENDS = frozenset({"flow", "packet"})


__all__ = [
    "applicable_profile",
    "calibrated_performance",
    "evaluate",
    "evaluate_feasible",
    "evaluate_one",
    "search_design",
    "searched_growth_risk",
]


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: BackendChoice = "analytic",
    request: PerfRequest | None = None,
    performance: PerformanceResult | None = None,
    cache: SearchCache | None = None,
    performance_design: FabricDesign | None = None,
) -> Evaluation:
    """Everything known about one technology's best fabric for this scenario.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        One of its technologies.
    backend
        A name of :func:`fabricplan.backends.backend_names`, or a backend object (e.g. a cached
        one); a simulator's collective times also go into the step.
    request
        What to model (default: every collective at the default sizes, the training step).
    performance
        A result already made for the same design and configuration (the decision's team and
        growth re-evaluations), used instead of running the backend again.
    cache
        Designs and step-model runs shared with other evaluations of the same run (the
        decision's re-evaluations; :class:`~fabricplan.search_cache.SearchCache`).
    performance_design
        The design ``performance`` was made for: when the search keeps another design here (a
        team change can move it: staff money is in the search's TCO), ``performance`` is not
        used and the design is modelled.

    Returns
    -------
    Evaluation
        Design, cost (with the GPU time the fabric idles and the configuration risk),
        performance (with the deployed lossless configuration's effect), operations and, when
        the spec asks for growth, what growing the design costs.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> e = evaluate_one(parse_spec({"cluster": {"gpus": 256}}), "roce_v2", backend="fake")
    >>> e.technology, e.performance.backend
    ('roce_v2', 'fake')
    """
    request = request or PerfRequest()
    name = backend if isinstance(backend, str) else backend.name
    chosen, design, searched_cost = search_design(valid, technology, name, request, cache)
    routing = _routing(chosen, technology, request)
    if performance_design is not None and not same_fabric(performance_design, design):
        performance = None
    if performance is None:
        model: BackendChoice = backend
        if cache is not None and name in RANKING_BACKENDS:
            model = _ReusedBackend(
                get_backend(backend) if isinstance(backend, str) else backend, cache
            )
        performance = _perform(chosen, design, model, request)
        # The packet level simulates the lossless settings itself (drops, pauses, go-back-N).
        if chosen.technologies[technology].link_flow_control == "pfc" and name != "packet":
            performance = _with_configuration(chosen, design, performance, routing)
        if name != "packet":  # the packet level corrupts and replays the frames itself
            performance = with_link_errors(chosen, design, performance, request)
        performance = with_uncertainty(performance)  # the bands of the values as changed above
    cost = with_gpu_idle_cost(chosen, searched_cost, performance.step)
    risk = _config_risk_of(chosen, design, request, performance, routing)
    return Evaluation(
        technology=technology,
        design=design,
        cost=with_config_risk(chosen, cost, risk),
        performance=performance,
        ops=assess_operations(chosen, design),
        growth=growth_of(chosen, design, cache),
    )


def same_fabric(one: FabricDesign, other: FabricDesign) -> bool:
    """Whether two designs are the same fabric (what the search says of the others and its
    notes aside): a performance result made for one holds for the other.

    >>> from fabricplan.spec import parse_spec
    >>> design = design_fabric(parse_spec({"cluster": {"gpus": 64}}), "infiniband")
    >>> same_fabric(design, design.model_copy(update={"findings": ()}))
    True
    >>> same_fabric(design, design.model_copy(update={"planes": 2}))
    False
    """
    bare = {"alternatives": (), "findings": ()}
    return one.model_copy(update=bare) == other.model_copy(update=bare)


def _config_risk_of(
    valid: ValidScenario,
    design: FabricDesign,
    request: PerfRequest,
    performance: PerformanceResult,
    routing: str,
) -> ConfigRisk:
    """The configuration risk of ``design`` with ``performance`` as modelled on it."""
    technology = design.technology
    tech = valid.technologies[technology]
    slowdown = 0.0
    pfc_on = valid.spec.fabric.lossless.pfc
    if performance.step is not None and tech.link_flow_control == "pfc" and pfc_on:
        lossy = with_lossless_step(performance.step, _effect(valid, design, routing, pfc=False))
        slowdown = lossy.step_s / performance.step.step_s - 1.0
    return config_risk(
        tech,
        team_experience(valid, technology),
        valid.spec.cost.years,
        design.gpus,
        slowdown,
        valid.spec.cost.engineer_usd_per_year / HOURS_PER_ENGINEER_YEAR,
        _adaptive_off_slowdown(valid, design, request, performance),
        nics=valid.spec.cluster.endpoints,
        pfc_watchdog=valid.spec.fabric.lossless.pfc_watchdog,
    )


def searched_growth_risk(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: BackendChoice = "analytic",
    request: PerfRequest | None = None,
    cache: SearchCache | None = None,
) -> tuple[GrowthRiskRecord | None, ...]:
    """The growth and configuration-risk money of each design the search priced in full and
    did not keep. The search ranks designs without these two terms; the decision's price and
    GPU-hour flips need them when a technology would keep another design
    (:func:`fabricplan.recommend.decision.decide`).

    Each design is modelled as the decision's re-evaluations model the kept one: the step alone
    (the analytic level for a simulator, as the search ranks), with the deployed lossless
    configuration and link errors, then its growth to ``growth.target_gpus`` with its own
    choices pinned (:func:`growth_of`). With the ``cache`` the search filled, the designs and
    steps are reused, not made again.

    Parameters
    ----------
    valid
        The validated scenario (as given to :func:`evaluate_one`).
    technology
        One of its technologies.
    backend
        The evaluation's backend: the analytic or fake one models the steps, any other the
        analytic one.
    request
        The evaluation's request (whether the search ranked on idle GPU time, the calibration).
    cache
        The cache the evaluation used.

    Returns
    -------
    tuple of GrowthRiskRecord or None
        Aligned with ``design.alternatives`` of :func:`evaluate_one`: a record per design priced
        in full, ``None`` for one priced on capex only, not buildable or whose step failed.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "growth": {"target_gpus": 512}})
    >>> records = searched_growth_risk(valid, "infiniband", backend="fake")
    >>> all(r is None or r.growth_usd is not None for r in records)
    True
    """
    request = request or PerfRequest()
    name = backend if isinstance(backend, str) else backend.name
    ranking = name if name in RANKING_BACKENDS else "analytic"
    _, design, _, ranked = _search(valid, technology, ranking, request, cache)
    step_only = request.model_copy(update={"collectives": (), "p2p": False, "step": True})
    model: BackendChoice = ranking
    if cache is not None:
        model = _ReusedBackend(get_backend(ranking), cache)
    records: list[GrowthRiskRecord | None] = []
    for candidate in ranked[1:]:
        chosen, built = candidate.valid, candidate.design
        routing = _routing(chosen, technology, step_only)
        try:
            performance = _perform(chosen, built, model, step_only)
        except FabricPlanError:
            records.append(None)
            continue
        if chosen.technologies[technology].link_flow_control == "pfc":
            performance = _with_configuration(chosen, built, performance, routing)
        performance = with_uncertainty(with_link_errors(chosen, built, performance, step_only))
        risk = _config_risk_of(chosen, built, step_only, performance, routing)
        growth = growth_of(chosen, built, cache)
        records.append(
            GrowthRiskRecord(
                growth_usd=0.0 if growth is None else growth.added_capex_usd,
                growth_items={} if growth is None else dict(growth.added_items),
                config_risk_gpu_hours=risk.gpu_hours,
                config_risk_staff_usd=risk.staff_usd,
            )
        )
    records += [None] * (len(design.alternatives) - len(records))
    return tuple(records)


def _adaptive_off_slowdown(
    valid: ValidScenario,
    design: FabricDesign,
    request: PerfRequest,
    performance: PerformanceResult,
) -> float | None:
    """Step slowdown when an Ethernet fabric's adaptive-routing settings are half configured and
    it falls back to ECMP (the adaptive-routing risk class); ``None`` where the class does not
    apply. Both steps come from the analytic level (instant, and the same level for both)."""
    tech = valid.technologies[design.technology]
    if "adaptive_routing" not in risk_classes(tech) or performance.step is None:
        return None
    if _routing(valid, design.technology, request) != "adaptive":
        return None
    analytic = get_backend("analytic")
    base = request.model_copy(update={"p2p": False, "calibration": None})
    ecmp = base.model_copy(update={"routing": {**request.routing, design.technology: "ecmp"}})
    adaptive_step = analytic.perform(valid, design, base).step
    ecmp_step = analytic.perform(valid, design, ecmp).step
    if adaptive_step is None or ecmp_step is None:
        return None
    return max(0.0, ecmp_step.step_s / adaptive_step.step_s - 1.0)


def evaluate(
    valid: ValidScenario, backend: BackendChoice = "analytic", request: PerfRequest | None = None
) -> list[Evaluation]:
    """One :class:`Evaluation` per technology in the spec, in the spec's order.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`, or a backend object.
    request
        What to model (default: every collective at the default sizes, the training step).

    Returns
    -------
    list of Evaluation
        One per technology (:func:`evaluate_one`).

    Raises
    ------
    DesignError
        The first technology that cannot be designed; :func:`evaluate_feasible` keeps going
        instead.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> [e.technology for e in evaluate(parse_spec({"cluster": {"gpus": 256}}), "fake")]
    ['infiniband', 'roce_v2']
    """
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]


def evaluate_feasible(
    valid: ValidScenario,
    backend: BackendChoice = "analytic",
    request: PerfRequest | None = None,
    performance: Mapping[TechnologyName, PerformanceResult] | None = None,
    cache: SearchCache | None = None,
    performance_designs: Mapping[TechnologyName, FabricDesign] | None = None,
) -> tuple[list[Evaluation], list[InfeasibleOption]]:
    """Evaluations of the technologies that can be designed, and the others with the reason.

    A spec asking for something no technology can build still raises the first design error.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`, or a backend object.
    request
        What to model (default: every collective at the default sizes, the training step).
    performance
        Results already made, per technology, used instead of running the backend again.
    cache
        Designs and step-model runs shared with other evaluations of the same run (see
        :func:`evaluate_one`).
    performance_designs
        The designs ``performance`` was made for, per technology: a result is used only where
        the search keeps the same design (:func:`evaluate_one`).

    Returns
    -------
    tuple
        The evaluations of the technologies that could be designed, in the spec's order, and
        an :class:`~fabricplan.model.results.InfeasibleOption` with the reason for each other.

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
            evaluations.append(
                evaluate_one(
                    valid,
                    tech,
                    backend,
                    request,
                    (performance or {}).get(tech),
                    cache,
                    (performance_designs or {}).get(tech),
                )
            )
        except DesignError as exc:
            first_error = first_error or exc.detached()  # its traceback would hold this frame
            infeasible.append(InfeasibleOption(technology=tech, code=exc.code, message=str(exc)))
    if not evaluations and first_error is not None:
        raise first_error.detached()
    return evaluations, infeasible


PER_TECHNOLOGY_CODES = frozenset(("FP509", "FP513"))
"""Errors that concern one technology's hardware (a forced algorithm or in-network reduction it
lacks): the other technologies still run, and the skipped one is named."""


COLLNET_ALGORITHMS = frozenset({"collnet_direct", "collnet_chain"})
"""Forced algorithms that need in-network reduction (``perf --algorithm collnet_*``)."""


def collnet_on(valid: ValidScenario) -> ValidScenario:
    """``fabric.sharp: on`` for every technology whose switches have in-network reduction.

    >>> from fabricplan.spec import parse_spec
    >>> collnet_on(parse_spec({"cluster": {"gpus": 64}})).spec.fabric.sharp_for("infiniband")
    'on'
    """
    fabric = valid.spec.fabric
    modes = {
        t: (
            "on"
            if valid.technologies[t].in_network_reduction and valid.switches[t].in_network_reduction
            else fabric.sharp_for(t)
        )
        for t in fabric.technologies
    }
    data = valid.spec.model_dump(exclude_unset=True)
    data.setdefault("fabric", {})["sharp"] = modes
    return replace_spec(valid, data, "--algorithm")


def perform_each(
    valid: ValidScenario, request: PerfRequest, backend: str = "analytic"
) -> tuple[list[PerformanceResult], dict[TechnologyName, ModelError]]:
    """The performance of every technology's designed fabric (what ``perf`` prints).

    A forced CollNet algorithm without ``in_network_reduction`` turns SHARP on where the switches
    have it; a PFC technology's result carries the lossless configuration's points (not for the
    packet backend, which simulates PFC itself), and every result its uncertainty band. A
    technology lacking what the request forces (:data:`PER_TECHNOLOGY_CODES`) is skipped with
    its error; when every technology is skipped, the first error is raised.

    >>> from fabricplan.spec import parse_spec
    >>> results, skipped = perform_each(parse_spec({"cluster": {"gpus": 64}}), PerfRequest())
    >>> [r.technology for r in results], skipped
    (['infiniband', 'roce_v2'], {})
    """
    model = get_backend(backend)
    if request.algorithm in COLLNET_ALGORITHMS and request.in_network_reduction is None:
        valid = collnet_on(valid)
    results: list[PerformanceResult] = []
    skipped: dict[TechnologyName, ModelError] = {}
    for tech in valid.spec.fabric.technologies:
        try:
            design = design_fabric(valid, tech)
            result = model.perform(valid, design, request)
            if valid.technologies[tech].link_flow_control == "pfc" and backend != "packet":
                result = with_configuration_points(valid, design, result, request)
            results.append(with_uncertainty(result))
        except ModelError as exc:
            if exc.code not in PER_TECHNOLOGY_CODES:
                raise
            skipped[tech] = exc  # this technology lacks what was forced; the others run
    if not results:
        raise next(iter(skipped.values()))
    return results, skipped
