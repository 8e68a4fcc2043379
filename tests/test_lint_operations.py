"""``assess_operations``: the burden comes from the settings the rules check, the team's
experience, and the fabric services the mechanisms need."""

from __future__ import annotations

import pytest

from fabricplan.analytic.operations_effort import engineer_years_per_year
from fabricplan.lint.checking.rule import RULES
from fabricplan.lint.operations import (
    BURDEN_HALF_POINTS,
    EXPERIENCE_BURDEN_FACTOR,
    NEW_STACK_BURDEN,
    WHOLE_STACK_TEAM_FIELDS,
    assess_operations,
    burden_points,
    ecosystem_fit,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric


def scenario(gpus: int = 1024, team: dict[str, str] | None = None) -> ValidScenario:
    return parse_spec({"cluster": {"gpus": gpus}, "team": team or {}})


@pytest.mark.parametrize("technology", ["roce_v2", "infiniband"])
def test_burden_falls_with_experience(technology: TechnologyName) -> None:
    family = "ethernet_dcb" if technology == "roce_v2" else "infiniband"
    burdens = {}
    for level in ("none", "some", "expert"):
        valid = scenario(team={family: level})
        burdens[level] = assess_operations(valid, design_fabric(valid, technology)).burden
    assert burdens["none"] > burdens["some"] > burdens["expert"] > 0
    # The per-setting part scales by the experience factor (none/expert = 1.0/0.5); a team field
    # that covers the whole stack adds the new-stack burden on top.
    ratio = EXPERIENCE_BURDEN_FACTOR["none"] / EXPERIENCE_BURDEN_FACTOR["expert"]
    new_stack = NEW_STACK_BURDEN["none"] if family in WHOLE_STACK_TEAM_FIELDS else 0.0
    assert (burdens["none"] - new_stack) / burdens["expert"] == pytest.approx(ratio)


def test_a_team_new_to_infiniband_carries_its_whole_stack() -> None:
    # The same InfiniBand fabric: the subnet manager and tooling are new to a team with no IB
    # experience, so the difference is at least the new-stack burden, not just a factor.
    novice, expert = scenario(team={"infiniband": "none"}), scenario(team={"infiniband": "expert"})
    burden = [assess_operations(v, design_fabric(v, "infiniband")).burden for v in (novice, expert)]
    assert burden[0] - burden[1] >= NEW_STACK_BURDEN["none"]


def test_dcb_team_matters_for_roce_only() -> None:
    novice, expert = (
        scenario(team={"ethernet_dcb": "none"}),
        scenario(team={"ethernet_dcb": "expert"}),
    )
    ib = [assess_operations(v, design_fabric(v, "infiniband")).burden for v in (novice, expert)]
    assert ib[0] == ib[1]


def test_burden_is_the_settings_count_formula() -> None:
    valid = scenario(team={"ethernet_dcb": "some"})
    design = design_fabric(valid, "roce_v2")
    points = burden_points(valid, design)
    ops = assess_operations(valid, design)
    assert ops.burden == pytest.approx(
        points / (points + BURDEN_HALF_POINTS) * EXPERIENCE_BURDEN_FACTOR["some"]
    )


def test_lossless_mechanisms_are_what_cost() -> None:
    """Take PFC and DCQCN away from RoCE (same topology): its lint rules leave the burden."""
    valid = scenario()
    design = design_fabric(valid, "roce_v2")
    roce = valid.technologies["roce_v2"]
    lossy = roce.model_copy(update={"link_flow_control": "none", "congestion_control": "none"})
    changed = valid.model_copy(update={"technologies": {**valid.technologies, "roce_v2": lossy}})
    before, after = burden_points(valid, design), burden_points(changed, design)
    assert after < before
    tasks = assess_operations(changed, design).tasks
    assert not any(t.startswith(("L01", "L04", "L05", "L11")) for t in tasks)
    assert any(t.startswith("L08") for t in tasks)  # the MTU chain remains for any RoCE link


def test_roce_has_more_per_hop_settings_than_ib_on_the_same_cluster() -> None:
    valid = scenario()
    roce = burden_points(valid, design_fabric(valid, "roce_v2"))
    ib = burden_points(valid, design_fabric(valid, "infiniband"))
    assert roce > ib > 0


def test_points_grow_with_the_fabric_but_slowly() -> None:
    small, large = scenario(256), scenario(8192)
    p_small = burden_points(small, design_fabric(small, "roce_v2"))
    p_large = burden_points(large, design_fabric(large, "roce_v2"))
    # 32x the NICs: more points, but per setting only log2(1 + n) more, far from 32x.
    assert p_small < p_large < 2 * p_small


def test_tasks_come_from_the_mechanisms() -> None:
    valid = scenario()
    roce = assess_operations(valid, design_fabric(valid, "roce_v2"))
    ib = assess_operations(valid, design_fabric(valid, "infiniband"))
    assert [t.split(":")[0] for t in roce.tasks[: len(RULES)]] == sorted(RULES)
    assert any("subnet manager" in t for t in ib.tasks)
    assert any("credits" in t for t in ib.tasks)
    assert not any(t.startswith("L0") for t in ib.tasks)


def test_effort_vendors_and_ecosystem() -> None:
    valid = parse_spec({"cluster": {"gpus": 512}, "deployment": "cloud"})
    design = design_fabric(valid, "roce_v2")
    ops = assess_operations(valid, design)
    tech = valid.technologies["roce_v2"]
    assert ops.engineer_years_per_year == engineer_years_per_year(valid, design)
    assert ops.vendors == len(tech.vendors)
    assert ops.ecosystem_fit == 1.0  # cloud deployment, "wide" availability
    ib = valid.technologies["infiniband"]
    # On premises only the vendor count counts: n / (n + 1).
    n = len(ib.vendors)
    assert ecosystem_fit(ib, "on_premises") == pytest.approx(n / (n + 1))
    assert ecosystem_fit(ib, "hybrid") == pytest.approx(0.5 * 0.5 + 0.5 * n / (n + 1))


def test_no_experience_is_a_finding() -> None:
    valid = scenario(team={"ethernet_dcb": "none"})
    codes = [f.code for f in assess_operations(valid, design_fabric(valid, "roce_v2")).findings]
    assert codes == ["OPS001"]
