"""``assess_operations``: the tasks come from the mechanisms' lint rules and fabric services, and
their effort is the one operations model (engineer-years and hours), never a second measure."""

from __future__ import annotations

import pytest

from fabricplan.analytic.operations_effort import (
    EXPERIENCE_EFFORT_FACTOR,
    HOURS_PER_ENGINEER_YEAR,
    engineer_years_per_year,
)
from fabricplan.lint.checking.rule import RULES
from fabricplan.lint.operations import assess_operations
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric


def scenario(gpus: int = 1024, team: dict[str, str] | None = None) -> ValidScenario:
    return parse_spec({"cluster": {"gpus": gpus}, "team": team or {}})


@pytest.mark.parametrize("technology", ["roce_v2", "infiniband"])
def test_effort_falls_with_experience_by_the_factor(technology: TechnologyName) -> None:
    family = "ethernet_dcb" if technology == "roce_v2" else "infiniband"
    years = {}
    for level in ("none", "some", "expert"):
        valid = scenario(team={family: level})
        years[level] = assess_operations(valid, design_fabric(valid, technology))
    assert years["none"].engineer_years_per_year > years["expert"].engineer_years_per_year > 0
    ratio = EXPERIENCE_EFFORT_FACTOR["none"] / EXPERIENCE_EFFORT_FACTOR["expert"]
    assert years["none"].engineer_years_per_year / years[
        "expert"
    ].engineer_years_per_year == pytest.approx(ratio)


def test_the_assessment_is_the_one_operations_model_in_hours_too() -> None:
    valid = scenario()
    for tech in ("roce_v2", "infiniband"):
        design = design_fabric(valid, tech)  # type: ignore[arg-type]
        ops = assess_operations(valid, design)
        assert ops.engineer_years_per_year == engineer_years_per_year(valid, design)
        assert ops.hours_per_year == pytest.approx(ops.engineer_years_per_year * 1800.0)
        assert HOURS_PER_ENGINEER_YEAR == 1800.0
        assert not hasattr(ops, "burden")


def test_dcb_team_matters_for_roce_only() -> None:
    novice, expert = (
        scenario(team={"ethernet_dcb": "none"}),
        scenario(team={"ethernet_dcb": "expert"}),
    )
    ib = [
        assess_operations(v, design_fabric(v, "infiniband")).engineer_years_per_year
        for v in (novice, expert)
    ]
    assert ib[0] == ib[1]


def test_lossless_rules_leave_with_the_mechanisms() -> None:
    """Take PFC and DCQCN away from RoCE (same topology): their lint rules leave the tasks."""
    valid = scenario()
    design = design_fabric(valid, "roce_v2")
    roce = valid.technologies["roce_v2"]
    lossy = roce.model_copy(update={"link_flow_control": "none", "congestion_control": "none"})
    changed = valid.model_copy(update={"technologies": {**valid.technologies, "roce_v2": lossy}})
    tasks = assess_operations(changed, design).tasks
    assert not any(t.startswith(("L01", "L04", "L05", "L11")) for t in tasks)
    assert any(t.startswith("L08") for t in tasks)  # the MTU chain remains for any RoCE link
    assert engineer_years_per_year(changed, design) < engineer_years_per_year(valid, design)


def test_tasks_come_from_the_mechanisms() -> None:
    valid = scenario()
    roce = assess_operations(valid, design_fabric(valid, "roce_v2"))
    ib = assess_operations(valid, design_fabric(valid, "infiniband"))
    roce_rules = sorted(
        r.id for r in RULES.values() if r.mechanism in {"pfc", "dcqcn", "ethernet", "adaptive"}
    )
    assert [t.split(":")[0] for t in roce.tasks[: len(roce_rules)]] == roce_rules
    assert not any(t.startswith(("L20", "L21", "L22", "L23", "L24")) for t in roce.tasks)
    assert any("subnet manager" in t for t in ib.tasks)
    assert any("credits" in t for t in ib.tasks)
    assert not any(t.startswith("L0") for t in ib.tasks)


def test_vendors_and_clouds_are_reported_not_scored() -> None:
    valid = parse_spec({"cluster": {"gpus": 512}, "deployment": "cloud"})
    ops = assess_operations(valid, design_fabric(valid, "roce_v2"))
    tech = valid.technologies["roce_v2"]
    assert ops.vendors == len(tech.vendors)
    assert ops.cloud_availability == tech.cloud_availability == "wide"
    assert not hasattr(ops, "ecosystem_fit")


def test_no_experience_is_a_finding() -> None:
    valid = scenario(team={"ethernet_dcb": "none"})
    codes = [f.code for f in assess_operations(valid, design_fabric(valid, "roce_v2")).findings]
    assert codes == ["OPS001"]
