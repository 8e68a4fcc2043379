"""Engineer-years a year to run a fabric, from what its mechanisms ask the team to run.

A fabric is run as a list of tasks. Every fabric has the hardware life cycle (firmware, RMAs,
cabling faults, monitoring). Then each of the technology's mechanisms adds what it asks of the
operators:

- link-level flow control: ``pfc`` is configured and kept consistent on every hop (priority
  maps, ETS, per-port headroom from cable length, PFC watchdog); ``credit`` is exchanged by the
  link layer and asks for nothing; ``none`` asks for nothing;
- congestion control: ``dcqcn`` needs ECN marking thresholds on every switch queue and DCQCN
  parameters on every NIC, tuned together; ``ib_cc`` is one policy in the subnet manager;
- scope and routing: ``ib_subnet`` needs a subnet manager (an HA pair, UFM or OpenSM) that computes
  all routes; ``routed_ip`` needs a BGP underlay and ECMP on every switch; ``l2_domain`` needs
  one large L2 domain kept loop-free.

Each task costs ``base + per_switch * switches`` engineer-years per year, and the sum is scaled by
the team's experience with the technology's switch family (``team.infiniband`` for InfiniBand
switches, ``team.ethernet_dcb`` for Ethernet).

**Every figure here is an estimate**, not a measurement: no citable study of network operations
staffing per switch was found (catalog.md section F). They are named so that the output can
show them, and ``cost.operations_engineer_years`` in the spec replaces the total per technology.

>>> round(LINK_FLOW_CONTROL_EFFORT["pfc"].engineer_years_per_switch_year * 1000, 3)
1.0
>>> LINK_FLOW_CONTROL_EFFORT["credit"].base_engineer_years_per_year
0.0
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.hardware import SwitchFamily, TechnologySpec
from fabricplan.model.scenario import Experience, TechnologyName, ValidScenario

HOURS_PER_ENGINEER_YEAR = 1800.0
"""Working hours in one engineer-year (estimate: about 45 weeks of 40 hours; the OECD's average
annual hours actually worked per worker range 1,350-2,200 across member countries, OECD
Employment Outlook). Used to say each task's effort in hours."""


@dataclass(frozen=True)
class TaskEffort:
    """What one operations task costs, before the team's experience factor."""

    task: str
    """What must be configured and kept right, in words."""
    base_engineer_years_per_year: float
    """Fixed share: design, automation and validation of the task for the whole fabric."""
    engineer_years_per_switch_year: float
    """Share that grows with the switch count: per-device state to deploy, audit and repair."""


@dataclass(frozen=True)
class EffortRecord:
    """One task's effort for one design, after the experience factor."""

    task: str
    switches: int
    experience: Experience
    engineer_years_per_year: float

    @property
    def hours_per_year(self) -> float:
        """The same effort in engineer-hours a year."""
        return self.engineer_years_per_year * HOURS_PER_ENGINEER_YEAR


HARDWARE_LIFECYCLE_EFFORT = TaskEffort(
    task="switch hardware life cycle: firmware upgrades, RMAs, cabling faults, monitoring",
    base_engineer_years_per_year=0.10,
    engineer_years_per_switch_year=0.002,
)
"""Estimate: a tenth of an engineer for tooling and on-call, plus about 3.5 h per switch a year
(0.002 engineer-years of ~1,800 working hours)."""

LINK_FLOW_CONTROL_EFFORT: dict[str, TaskEffort] = {
    "pfc": TaskEffort(
        task="lossless Ethernet on every hop: PFC priority, DSCP trust, ETS, per-port buffer "
        "headroom from cable length, PFC watchdog, and keeping NICs and switches consistent",
        base_engineer_years_per_year=0.10,
        engineer_years_per_switch_year=0.001,
    ),
    "credit": TaskEffort(
        task="link-level credits: exchanged by the link layer, nothing to configure",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
    "none": TaskEffort(
        task="no link-level flow control: nothing to configure",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
}
"""Estimates. PFC is a per-hop, per-priority setting whose lossless guarantee holds only when
every switch and NIC agree (catalog.md C, lint rules); credits need no operator action
(catalog.md D, "Ethernet-side equivalents")."""

CONGESTION_CONTROL_EFFORT: dict[str, TaskEffort] = {
    "dcqcn": TaskEffort(
        task="ECN/DCQCN: marking thresholds on every switch queue and rate-control parameters "
        "on every NIC, tuned together",
        base_engineer_years_per_year=0.05,
        engineer_years_per_switch_year=0.0005,
    ),
    "ib_cc": TaskEffort(
        task="InfiniBand congestion control: one policy set in the subnet manager",
        base_engineer_years_per_year=0.02,
        engineer_years_per_switch_year=0.0,
    ),
    "none": TaskEffort(
        task="no congestion control: nothing to configure",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
}
"""Estimates. DCQCN has switch-side (ECN) and NIC-side parameters (catalog.md C); IB CC is
enabled and profiled centrally in the SM (catalog.md D, ``mlnx_congestion_control``)."""

SCOPE_EFFORT: dict[str, TaskEffort] = {
    "ib_subnet": TaskEffort(
        task="subnet manager (HA pair, UFM or OpenSM): routing engine, failover, upgrades, "
        "LID space",
        base_engineer_years_per_year=0.10,
        engineer_years_per_switch_year=0.0005,
    ),
    "routed_ip": TaskEffort(
        task="BGP underlay and ECMP on every switch: ASNs, neighbours, hashing, route policy",
        base_engineer_years_per_year=0.05,
        engineer_years_per_switch_year=0.001,
    ),
    "l2_domain": TaskEffort(
        task="one L2 domain: VLANs, loop prevention, MAC/ARP scale",
        base_engineer_years_per_year=0.05,
        engineer_years_per_switch_year=0.0015,
    ),
}
"""Estimates. The SM computes every route, so the per-switch share is small but the central
component must be run (catalog.md D); a routed fabric carries routing state on every switch
(catalog.md B.5); one L2 domain grows harder to keep loop-free and within table sizes."""

EXPERIENCE_EFFORT_FACTOR: dict[Experience, float] = {"none": 2.0, "some": 1.0, "expert": 0.6}
"""Estimate: a team new to a technology needs about twice the time of a team that has run it
(learning, mistakes, slower triage); an expert team about 60 %."""

TEAM_FIELD_BY_FAMILY: dict[SwitchFamily, str] = {
    "infiniband": "infiniband",
    "ethernet": "ethernet_dcb",
}
"""Which ``team`` field describes experience with a switch family."""


def team_experience(valid: ValidScenario, technology: TechnologyName) -> Experience:
    """The team's experience with the switch family ``technology`` runs on.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "team": {"ethernet_dcb": "expert"}})
    >>> team_experience(valid, "roce_v2"), team_experience(valid, "infiniband")
    ('expert', 'some')
    """
    family = _technology(valid, technology).switch_family
    experience: Experience = getattr(valid.spec.team, TEAM_FIELD_BY_FAMILY[family])
    return experience


def _technology(valid: ValidScenario, technology: TechnologyName) -> TechnologySpec:
    try:
        return valid.technologies[technology]
    except KeyError:
        raise ModelError(
            "FP561",
            "design.technology",
            "the design's technology is not in the scenario",
            technology,
            f"design with one of {sorted(valid.technologies)}",
        ) from None


def operations_tasks(valid: ValidScenario, design: FabricDesign) -> tuple[TaskEffort, ...]:
    """The tasks running ``design`` asks for, from its technology's mechanisms.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.model.fabric import FabricDesign
    >>> valid = parse_spec({"cluster": {"gpus": 16}})
    >>> design = FabricDesign(technology="roce_v2", topology="fat_tree", switch_id="sn5600",
    ...     port_speed_gbps=400, radix=128, tiers=1, planes=1, spine_groups=1, nodes=2, gpus=16,
    ...     endpoints=16, hosts_per_leaf=16, leaves_per_pod=1, rail_aligned=False,
    ...     tier_designs=(), link_groups=(), bisection_tbps=3.2, worst_case_switch_hops=1,
    ...     max_endpoints=128, headroom_gpus=112)
    >>> [t.task.split(":")[0] for t in operations_tasks(valid, design)][1:]
    ['lossless Ethernet on every hop', 'ECN/DCQCN', 'BGP underlay and ECMP on every switch']
    """
    tech = _technology(valid, design.technology)
    return (
        HARDWARE_LIFECYCLE_EFFORT,
        LINK_FLOW_CONTROL_EFFORT[tech.link_flow_control],
        CONGESTION_CONTROL_EFFORT[tech.congestion_control],
        SCOPE_EFFORT[tech.scope],
    )


def effort_records(valid: ValidScenario, design: FabricDesign) -> tuple[EffortRecord, ...]:
    """Engineer-years per year of each task for ``design``, after the experience factor.

    Tasks that ask for nothing (e.g. link-level credits) are kept with 0, so that the output
    says why they cost nothing.
    """
    switches = sum(tier.switches for tier in design.tier_designs)
    experience = team_experience(valid, design.technology)
    factor = EXPERIENCE_EFFORT_FACTOR[experience]
    return tuple(
        EffortRecord(
            task=task.task,
            switches=switches,
            experience=experience,
            engineer_years_per_year=factor
            * (task.base_engineer_years_per_year + task.engineer_years_per_switch_year * switches),
        )
        for task in operations_tasks(valid, design)
    )


def engineer_years_per_year(valid: ValidScenario, design: FabricDesign) -> float:
    """Network engineer-years a year to run ``design`` (the spec's override when given).

    ``sum over tasks (base + per_switch * switches) * experience factor``; the figures are
    estimates (see the module docstring). ``cost.operations_engineer_years[technology]`` in the
    spec replaces the result.

    Parameters
    ----------
    valid
        The scenario (team experience, technology mechanisms, overrides).
    design
        The designed fabric (its switch count).

    Returns
    -------
    float
        Engineer-years per year.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.model.fabric import FabricDesign
    >>> valid = parse_spec({"cluster": {"gpus": 16}})
    >>> design = FabricDesign(technology="infiniband", topology="fat_tree", switch_id="qm9700",
    ...     port_speed_gbps=400, radix=64, tiers=1, planes=1, spine_groups=1, nodes=2, gpus=16,
    ...     endpoints=16, hosts_per_leaf=16, leaves_per_pod=1, rail_aligned=False,
    ...     tier_designs=(), link_groups=(), bisection_tbps=3.2, worst_case_switch_hops=1,
    ...     max_endpoints=64, headroom_gpus=48)
    >>> round(engineer_years_per_year(valid, design), 2)  # 0.10 + 0 + 0.02 + 0.10, no switches
    0.22
    """
    override = valid.spec.cost.operations_engineer_years.get(design.technology)
    if override is not None:
        return override
    return sum(record.engineer_years_per_year for record in effort_records(valid, design))
