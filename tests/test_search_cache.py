"""The search cache is invisible in the answer: the decision with one shared cache and the
step-only re-evaluations equals the decision made the long way (every re-evaluation searching
afresh with the whole request), and the spec sections the cache's keys leave out change no
design, no step and no cost."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.analytic.cost import fabric_cost
from fabricplan.backends import get_backend
from fabricplan.errors import DesignError
from fabricplan.evaluate import evaluate_feasible, searched_growth_risk
from fabricplan.model.results import PerfRequest
from fabricplan.recommend.decision import decide, recommend
from fabricplan.search_cache import SearchCache
from fabricplan.spec import parse_spec, replace_spec
from fabricplan.topology.designer import default_choice, design_fabric

SPECS: dict[str, dict[str, Any]] = {
    "growth and team": {
        "cluster": {"gpus": 512},
        "growth": {"target_gpus": 1536},
        "team": {"infiniband": "expert", "ethernet_dcb": "none"},
    },
    "sharp on, 2:1, max_performance": {
        "cluster": {"gpus": 256},
        "fabric": {"sharp": "on", "oversubscription": 2},
        "priorities": "max_performance",
    },
    "pfc off, cost_sensitive, three technologies": {
        "cluster": {"gpus": 128},
        "fabric": {
            "technologies": ["infiniband", "roce_v2", "roce_v1"],
            "lossless": {"pfc": False},
        },
        "priorities": "cost_sensitive",
    },
    "the new Ethernet technologies": {
        "cluster": {"gpus": 128},
        "fabric": {"technologies": ["spectrum_x", "ddc", "uec"]},
    },
}


def _the_long_way(valid: Any, evals: Any, request: PerfRequest) -> Any:
    """The decision as it was made before the cache: every re-evaluation searches afresh and
    models the whole request."""
    performance = {e.technology: e.performance for e in evals}
    designs = {e.technology: e.design for e in evals}
    return decide(
        evals,
        valid,
        reevaluate=lambda s: evaluate_feasible(
            s, "analytic", request, performance=performance, performance_designs=designs
        )[0],
        reevaluate_performance=lambda s: evaluate_feasible(s, "analytic", request)[0],
        searched={
            e.technology: searched_growth_risk(valid, e.technology, "analytic", request)
            for e in evals
        },
    )


@pytest.mark.parametrize("name", list(SPECS))
def test_the_cached_decision_equals_the_long_way(name: str) -> None:
    valid = parse_spec(SPECS[name])
    request = PerfRequest(sizes_bytes=(8, 2**20, 2**30))
    plain, _ = evaluate_feasible(valid, "analytic", request)
    cache = SearchCache()
    cached, infeasible = evaluate_feasible(valid, "analytic", request, cache=cache)
    assert [e.model_dump() for e in cached] == [e.model_dump() for e in plain]
    fast = recommend(valid, cached, "analytic", request, infeasible, cache)
    slow = _the_long_way(valid, plain, request)
    assert fast.model_dump() == slow.model_dump()
    # The re-evaluations did reuse: team and growth changes redesign nothing, and the growth
    # changes and the searched designs' growth and risk repeat whole searches.
    assert cache.design_hits > 0 and cache.search_hits > 0
    assert cache.performance_hits > 0


def test_a_design_error_is_kept_and_raised_again() -> None:
    valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    choice = default_choice(valid, "roce_v2").model_copy(update={"planes": 3})  # 8 NICs / 3
    cache = SearchCache()
    for _ in range(2):
        with pytest.raises(DesignError, match="must divide"):
            cache.design(valid, "roce_v2", choice)
    assert (cache.design_misses, cache.design_hits) == (1, 1)


def test_another_cluster_size_is_another_design() -> None:
    valid = parse_spec({"cluster": {"gpus": 256}})
    cache = SearchCache()
    choice = default_choice(valid, "infiniband")
    small = cache.design(valid, "infiniband", choice)
    bigger = replace_spec(valid, {"cluster": {"gpus": 1024}})
    large = cache.design(bigger, "infiniband", choice)
    assert large.gpus == 1024 and small.gpus == 256
    assert large == design_fabric(bigger, "infiniband", choice)


# Changes of the spec sections the keys leave out (search_cache.NOT_DESIGN / NOT_PERFORMANCE /
# NOT_COST). If a designer, a backend or the cost model starts reading one, these fail.
experience = st.sampled_from(("none", "some", "expert"))
decision_changes = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(("a", "other name")),
        "priorities": st.sampled_from(
            ("balanced", "max_performance", "cost_sensitive", "ethernet_team", "cloud_hybrid")
        ),
        "growth": st.builds(lambda n: {"target_gpus": n}, st.sampled_from((4096, 100_000))),
        "decision": st.builds(
            lambda floor, n: {"performance_floor": floor, "require": {"min_vendors": n}},
            st.sampled_from((0.0, 0.1, 0.5)),
            st.sampled_from((1, 2, 5)),
        ),
    },
)
run_changes = st.fixed_dictionaries(
    {},
    optional={
        "workload": st.sampled_from(({"model": "deepseek-v3"}, {"model": "llama3-8b"})),
        "nccl": st.sampled_from(({"version": "2.19"}, {"qps_per_connection": 4})),
        "sharp": st.sampled_from(("on", "off", "auto")),
        "lossless": st.sampled_from(({"pfc": False}, {"ecn": False, "pfc_watchdog": False})),
        "routing": st.sampled_from(({"roce_v2": "static"}, {"infiniband": "static"})),
    },
)
BASES = (
    {"cluster": {"gpus": 256}},
    {"cluster": {"gpus": 2048}, "fabric": {"oversubscription": 2}},
    {"cluster": {"gpus": 64, "gpus_per_node": 4, "nics_per_node": 4}},
    {"cluster": {"gpus": 512}, "fabric": {"technologies": ["spectrum_x", "ddc", "uec"]}},
)


def _changed(base: dict[str, Any], top: dict[str, Any], fabric: dict[str, Any]) -> dict[str, Any]:
    data = {**base, **top}
    if fabric:
        data["fabric"] = {**base.get("fabric", {}), **fabric}
    return data


@settings(max_examples=25, deadline=None)
@given(
    base=st.sampled_from(BASES),
    top=decision_changes,
    run=run_changes,
    team=st.fixed_dictionaries({"infiniband": experience, "ethernet_dcb": experience}),
)
def test_what_the_design_key_leaves_out_changes_no_design(
    base: dict[str, Any], top: dict[str, Any], run: dict[str, Any], team: dict[str, str]
) -> None:
    valid = parse_spec(base)
    fabric = {k: run[k] for k in ("lossless",) if k in run}  # SHARP and routing place the SM
    other = {**top, "team": team, **{k: run[k] for k in ("workload", "nccl") if k in run}}
    changed = replace_spec(valid, _changed(base, other, fabric))
    for tech in valid.spec.fabric.technologies:
        assert design_fabric(changed, tech) == design_fabric(valid, tech)


@settings(max_examples=25, deadline=None)
@given(
    base=st.sampled_from(BASES),
    top=decision_changes,
    team=st.fixed_dictionaries({"infiniband": experience, "ethernet_dcb": experience}),
)
def test_what_the_step_and_cost_keys_leave_out_changes_no_step_and_no_cost(
    base: dict[str, Any], top: dict[str, Any], team: dict[str, str]
) -> None:
    valid = parse_spec(base)
    with_team = replace_spec(valid, {**base, **top, "team": team})
    no_team = replace_spec(valid, {**base, **top})
    request = PerfRequest(collectives=(), p2p=False, step=True)
    analytic = get_backend("analytic")
    for tech in valid.spec.fabric.technologies:
        design = design_fabric(valid, tech)
        step = analytic.perform(valid, design, request).step
        assert analytic.perform(with_team, design, request).step == step
        # The cost reads the team (operations hours) but nothing else the decision alone reads.
        assert fabric_cost(no_team, design) == fabric_cost(valid, design)


def test_sharp_on_is_a_design_of_its_own_where_it_moves_the_subnet_manager() -> None:
    """A one-switch InfiniBand subnet runs the switch's embedded SM (no UFM appliance); with
    SHARP on it needs UFM's aggregation manager: the cache must not hand back the first design."""
    valid = parse_spec({"cluster": {"gpus": 32}, "fabric": {"technologies": ["infiniband"]}})
    sharp_on = replace_spec(
        valid,
        {
            **valid.spec.model_dump(exclude_unset=True),
            "fabric": {"technologies": ["infiniband"], "sharp": "on"},
        },
    )
    cache = SearchCache()
    choice = default_choice(valid, "infiniband")

    def appliances(design: Any) -> int:
        return sum(line.quantity for line in design.bom if line.kind == "appliance")

    assert appliances(cache.design(valid, "infiniband", choice)) == 0
    assert appliances(cache.design(sharp_on, "infiniband", choice)) == 4


@pytest.mark.parametrize("target", [None, 2048])
def test_a_search_made_for_another_growth_target_is_reused_in_this_scenario(
    target: int | None,
) -> None:
    """A search reads no growth target: a scenario that differs only there takes the search
    made for the first one, with its own scenario (whose growth the evaluation prices) in it."""
    valid = parse_spec({"cluster": {"gpus": 512}, "growth": {"target_gpus": 1536}})
    data = valid.spec.model_dump(exclude_unset=True)
    data["growth"] = None if target is None else {"target_gpus": target}
    other = replace_spec(valid, data)
    cache = SearchCache()
    evaluate_feasible(valid, "analytic", PerfRequest(step=True, collectives=()), cache=cache)
    searched = cache.search_misses
    again, _ = evaluate_feasible(
        other, "analytic", PerfRequest(step=True, collectives=()), cache=cache
    )
    fresh, _ = evaluate_feasible(other, "analytic", PerfRequest(step=True, collectives=()))
    assert cache.search_misses == searched and cache.search_hits == len(again)
    assert [e.model_dump() for e in again] == [e.model_dump() for e in fresh]
    assert [e.growth is None for e in again] == [target is None] * len(again)


def test_a_switch_without_an_embedded_subnet_manager_keeps_its_design_under_sharp_and_routing() -> (
    None
):
    """The designer reads SHARP and routing only for a switch whose embedded SM may run the
    subnet: a RoCE design is the same under a SHARP or routing what-if, and is reused."""
    base = {"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}}
    valid = parse_spec(base)
    cache = SearchCache()
    choice = default_choice(valid, "roce_v2")
    assert choice.switch.embedded_sm_max_nodes is None
    first = cache.design(valid, "roce_v2", choice)
    for fabric in ({"sharp": "on"}, {"routing": {"roce_v2": "static"}}):
        other = replace_spec(valid, {**base, "fabric": {**base["fabric"], **fabric}})
        assert cache.design(other, "roce_v2", choice) is first
        assert first == design_fabric(other, "roce_v2", choice)
    assert (cache.design_misses, cache.design_hits) == (1, 2)


@pytest.mark.parametrize("field", ["infiniband", "ethernet_dcb"])
def test_a_team_change_reuses_the_other_familys_search_and_remakes_its_own(field: str) -> None:
    """The cost reads one experience per technology (its switch family's): a change of the
    InfiniBand team reuses the RoCE search, and the RoCE team's the InfiniBand one, while the
    changed family's search is made again (its operations money moved)."""
    base = {"cluster": {"gpus": 256}, "team": {"infiniband": "some", "ethernet_dcb": "some"}}
    valid = parse_spec(base)
    other = replace_spec(valid, {**base, "team": {**base["team"], field: "none"}})
    request = PerfRequest(step=True, collectives=())
    cache = SearchCache()
    first, _ = evaluate_feasible(valid, "analytic", request, cache=cache)
    misses = cache.search_misses
    again, _ = evaluate_feasible(other, "analytic", request, cache=cache)
    fresh, _ = evaluate_feasible(other, "analytic", request)
    assert [e.model_dump() for e in again] == [e.model_dump() for e in fresh]
    assert (cache.search_misses - misses, cache.search_hits) == (1, 1)
    changed = "infiniband" if field == "infiniband" else "roce_v2"
    before = {e.technology: e.cost.tco_usd for e in first}
    after = {e.technology: e.cost.tco_usd for e in again}
    assert after[changed] != before[changed]
