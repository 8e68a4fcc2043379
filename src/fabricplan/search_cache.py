"""Designs and step-model results kept for one run, shared by the decision's re-evaluations.

``compare`` evaluates the spec, then re-evaluates it for its flip points: other team experience
and growth targets (the same designs and the same step times), SHARP the other way (the same
designs unless the subnet manager's place changes with it), other cluster sizes. Every
re-evaluation runs the whole design search again. A design and a backend result are pure
functions of frozen inputs, so one :class:`SearchCache`, passed to
:func:`fabricplan.evaluate.evaluate_feasible` and :func:`fabricplan.recommend.decision.recommend`,
makes each of them once per run: nothing is module-level, and two runs (or two web requests)
each have their own cache.

What a key holds:

- **the spec**, as its JSON without the sections the model cannot read (:data:`NOT_DESIGN` for
  a design, :data:`NOT_PERFORMANCE` for a backend result), unset fields left out so that "set
  to the default" and "not set" stay apart (the designer reads ``model_fields_set``); a
  design's SHARP and routing only as far as the designer reads them (a switch with an embedded
  subnet manager); a cost's or a search's team only as the technology's family's experience;
- **the resolved hardware** by identity: :func:`fabricplan.spec.replace_spec` keeps the
  scenario's switches, NICs, technologies, cables and prices as they are, so a what-if shares
  them with the scenario it came from. The cache holds every object it keyed by identity, so no
  identity is reused while it lives; an equal object of another identity is only a miss.
- **the design choice** (switch by identity, topology, tiers, planes), and for a backend result
  the design by identity (designs come from this cache), the backend's name and the request.

A design error is kept and raised again, like the design.

>>> from fabricplan.spec import parse_spec, replace_spec
>>> from fabricplan.topology.designer import default_choice
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> cache = SearchCache()
>>> choice = default_choice(valid, "roce_v2")
>>> first = cache.design(valid, "roce_v2", choice)
>>> expert = replace_spec(valid, {"cluster": {"gpus": 256}, "team": {"ethernet_dcb": "expert"}})
>>> cache.design(expert, "roce_v2", choice) is first, cache.design_hits
(True, 1)
>>> bigger = replace_spec(valid, {"cluster": {"gpus": 512}})
>>> cache.design(bigger, "roce_v2", choice) is first, cache.design_misses
(False, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fabricplan.analytic.cost import fabric_cost
from fabricplan.analytic.operations_effort import team_experience
from fabricplan.errors import DesignError, FabricPlanError
from fabricplan.model.fabric import DesignChoice, FabricDesign
from fabricplan.model.results import CostBreakdown, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ScenarioSpec, TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric

__all__ = ["NOT_COST", "NOT_DESIGN", "NOT_PERFORMANCE", "SearchCache"]

NOT_PERFORMANCE: dict[str, Any] = {
    "name": True,
    "team": True,
    "priorities": True,
    "growth": True,
    "decision": True,
}
"""Spec sections no design, backend result or cost reads except the operations model's team
experience (in :data:`NOT_COST`'s complement): the name, the preset, the growth target and the
decision's constraints, and the team. A test changes each of them and checks that designs and
step times stay the same."""

NOT_COST: dict[str, Any] = {k: v for k, v in NOT_PERFORMANCE.items() if k != "team"}
"""Spec sections :func:`~fabricplan.analytic.cost.fabric_cost` does not read (it reads the team,
whose experience sets the operations hours)."""

NOT_DESIGN: dict[str, Any] = {
    **NOT_PERFORMANCE,
    "workload": True,
    "nccl": True,
    "fabric": {"lossless"},
}
"""Spec sections the designer does not read beyond :data:`NOT_PERFORMANCE`: the workload, the
NCCL settings and the lossless configuration, which act on performance and not on what is built
(checked by the same test). SHARP and routing are read: they decide whether an InfiniBand subnet
can run the managed switches' embedded subnet manager or needs UFM appliances."""

_NOT_COST_KEY: dict[str, Any] = {**NOT_COST, "team": True}
"""The cost and search keys' exclusions: the team is keyed by the one experience the cost
reads, the team's with the technology's switch family
(:func:`~fabricplan.analytic.operations_effort.team_experience`), so that a what-if changing the
InfiniBand team's experience reuses every Ethernet search and cost."""

_NOT_DESIGN_KEY: dict[str, Any] = {**NOT_DESIGN, "fabric": {"lossless", "sharp", "routing"}}
"""The design key's exclusions: SHARP and routing are keyed by what the designer reads of them
(:func:`_subnet_manager_inputs`), not as the spec's whole settings."""

T = TypeVar("T")


def _subnet_manager_inputs(
    valid: ValidScenario, technology: TechnologyName, choice: DesignChoice
) -> tuple[bool, str | None] | None:
    """What the designer reads of SHARP and routing: only whether the managed switch's embedded
    subnet manager can run the subnet (``designer._embedded_sm_finding``), which it asks only of
    a switch with an embedded SM (``embedded_sm_max_nodes``); ``None`` for any other switch,
    whose design SHARP and routing do not change (a RoCE fabric's under a SHARP what-if)."""
    if choice.switch.embedded_sm_max_nodes is None:
        return None
    fabric = valid.spec.fabric
    return fabric.sharp_for(technology) == "on", fabric.routing.get(technology)


class SearchCache:
    """Designs (:meth:`design`) and backend results (:meth:`performance`) of one run.

    The counters (``design_hits`` and ``design_misses``, ``performance_hits`` and
    ``performance_misses``, ``search_hits`` and ``search_misses`` for whole searches,
    :meth:`search`) say how much was reused.
    """

    def __init__(self) -> None:
        self._designs: dict[tuple[object, ...], FabricDesign | DesignError] = {}
        self._results: dict[tuple[object, ...], PerformanceResult | FabricPlanError] = {}
        self._costs: dict[tuple[object, ...], CostBreakdown] = {}
        self._searches: dict[tuple[object, ...], Any] = {}
        self._spec_keys: dict[tuple[int, str], str] = {}
        self._held: dict[int, object] = {}
        self.design_hits = 0
        self.design_misses = 0
        self.performance_hits = 0
        self.performance_misses = 0
        self.search_hits = 0
        self.search_misses = 0

    def _hold(self, obj: object) -> int:
        """``id(obj)``, with ``obj`` kept alive so that the identity is not reused."""
        key = id(obj)
        self._held.setdefault(key, obj)
        return key

    def _spec_key(self, spec: ScenarioSpec, reader: str) -> str:
        memo = (self._hold(spec), reader)
        key = self._spec_keys.get(memo)
        if key is None:
            exclude = {
                "design": _NOT_DESIGN_KEY,
                "performance": NOT_PERFORMANCE,
                "cost": _NOT_COST_KEY,
            }
            key = spec.model_dump_json(exclude_unset=True, exclude=exclude[reader])
            self._spec_keys[memo] = key
        return key

    def _hardware_key(self, valid: ValidScenario) -> tuple[object, ...]:
        return (
            self._hold(valid.node),
            self._hold(valid.cables),
            self._hold(valid.prices),
            *(self._hold(x) for x in valid.nics.values()),
            *(self._hold(x) for x in valid.switches.values()),
            *(self._hold(x) for x in valid.technologies.values()),
            *(self._hold(x) for x in valid.switch_candidates.values()),
            *valid.nics,
            *valid.switches,
            *valid.technologies,
            *valid.switch_candidates,
        )

    def design(
        self, valid: ValidScenario, technology: TechnologyName, choice: DesignChoice
    ) -> FabricDesign:
        """:func:`~fabricplan.topology.designer.design_fabric` of ``choice``, made once.

        Raises
        ------
        DesignError
            As ``design_fabric`` does (the same error again on a later call).
        """
        key = (
            self._spec_key(valid.spec, "design"),
            _subnet_manager_inputs(valid, technology, choice),
            self._hardware_key(valid),
            technology,
            self._hold(choice.switch),
            choice.topology,
            choice.tiers,
            choice.planes,
        )
        return self._once(
            self._designs,
            key,
            lambda: design_fabric(valid, technology, choice),
            DesignError,
            design=True,
        )

    def performance(
        self,
        backend: str,
        valid: ValidScenario,
        design: FabricDesign,
        request: PerfRequest,
        run: Callable[[], PerformanceResult],
    ) -> PerformanceResult:
        """``run()`` (``backend``'s result for ``design`` under ``request``), made once.

        Raises
        ------
        FabricPlanError
            As ``run`` does (the same error again on a later call).
        """
        key = (
            self._spec_key(valid.spec, "performance"),
            self._hardware_key(valid),
            backend,
            self._hold(design),
            request.model_dump_json(),
        )
        return self._once(self._results, key, run, FabricPlanError, design=False)

    def cost(self, valid: ValidScenario, design: FabricDesign) -> CostBreakdown:
        """:func:`~fabricplan.analytic.cost.fabric_cost` of ``design``, made once."""
        key = (
            self._spec_key(valid.spec, "cost"),
            team_experience(valid, design.technology),
            self._hardware_key(valid),
            self._hold(design),
        )
        found = self._costs.get(key)
        if found is None:
            found = self._costs[key] = fabric_cost(valid, design)
        return found

    def search(
        self,
        valid: ValidScenario,
        technology: TechnologyName,
        ranking: str,
        request: PerfRequest,
        run: Callable[[], T],
    ) -> T:
        """``run()`` (:func:`fabricplan.evaluate.search_design`'s whole search of ``technology``,
        ranked with the ``ranking`` backend under ``request``), made once.

        A search reads the designs, their costs and their steps (the spec as the cost key has it:
        :data:`NOT_COST` is a subset of the sections no design or step reads, and of the team
        only the experience of the technology's family), the resolved
        hardware, the backend and what the step model is asked (``request`` as the search asks
        it: the step alone, whether it is priced). The decision's growth re-evaluations and the
        searched designs' growth and risk repeat the evaluation's searches with these unchanged.

        Raises
        ------
        DesignError
            As the search does when no choice can be built (the same error again later).
        """
        asked = request.model_copy(update={"collectives": (), "p2p": False})
        key = (
            self._spec_key(valid.spec, "cost"),
            team_experience(valid, technology),
            self._hardware_key(valid),
            technology,
            ranking,
            request.step,
            asked.model_dump_json(),
        )
        if key in self._searches:
            self.search_hits += 1
            found = self._searches[key]
            if isinstance(found, FabricPlanError):
                raise found.detached()
            return found  # type: ignore[no-any-return]
        self.search_misses += 1
        try:
            made = run()
        except DesignError as exc:
            self._searches[key] = exc.detached()
            raise
        self._searches[key] = made
        return made

    def _once(
        self,
        store: dict[tuple[object, ...], Any],
        key: tuple[object, ...],
        make: Callable[[], T],
        kept_error: type[FabricPlanError],
        *,
        design: bool,
    ) -> T:
        if key in store:
            if design:
                self.design_hits += 1
            else:
                self.performance_hits += 1
            found = store[key]
            if isinstance(found, FabricPlanError):
                raise found.detached()
            return found  # type: ignore[no-any-return]
        if design:
            self.design_misses += 1
        else:
            self.performance_misses += 1
        try:
            made = make()
        except kept_error as exc:
            store[key] = exc.detached()
            raise
        store[key] = made
        return made
