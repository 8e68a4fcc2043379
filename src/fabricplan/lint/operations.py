"""What running a designed fabric asks of the team: tasks, burden, effort, ecosystem fit.

The burden is counted, not asserted. Each lint rule (:data:`~fabricplan.lint.rule.RULES`) says
how many settings it checks on a switch and on a NIC, of what kind, and which mechanism needs it
(PFC, DCQCN, any RoCE Ethernet link, adaptive routing). A technology's mechanisms
(``link_flow_control``, ``congestion_control``, ``switch_family``, ``routing``, ``scope``,
in-network reduction) select the rules and the fabric services that apply; the design gives the
number of switches, NICs and (speed, cable) port classes. Then::

    points = sum over settings  KIND_WEIGHT[kind] * settings * log2(1 + devices holding it)
    base   = points / (points + BURDEN_HALF_POINTS)
    burden = base * EXPERIENCE_BURDEN_FACTOR[experience] + NEW_STACK_BURDEN[experience]
             (the second term only where the team field covers the family's whole stack)

Physical settings (headroom, cable length, buffers) are counted once per (speed, cable) class,
because each class needs its own values. Nothing here says "InfiniBand is easier": an IB fabric
scores lower only because credit-based flow control and a subnet manager leave no per-hop
lossless settings for the operators.

References
----------
catalog.md C.9 (the rules), D (InfiniBand operations), B.4 (LID limit, routers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.analytic.operations_effort import engineer_years_per_year
from fabricplan.lint.baselines.generator import SWITCH_MTU_BYTES, baseline_spec, port_classes
from fabricplan.lint.checking.rule import RULES, Mechanism, SettingKind
from fabricplan.model.fabric import FabricDesign, Finding
from fabricplan.model.hardware import TechnologySpec
from fabricplan.model.results import OpsAssessment
from fabricplan.model.scenario import Deployment, Experience, TechnologyName, ValidScenario

KIND_WEIGHT: dict[SettingKind, float] = {
    "agreement": 1.0,
    "physical": 1.0,
    "safety": 0.5,
    "tuning": 1.5,
}
"""Estimate. Settings that need judgement (ECN thresholds, ETS weights, DCQCN parameters) weigh
half again as much as settings that only have to match; safety nets (watchdog, pause off) that are
set once and left weigh half."""

BURDEN_HALF_POINTS = 250.0
"""Points at which the base burden is 0.5 (estimate): about those of a 64-GPU RoCE fabric (two
leaves, 64 NICs), the smallest fabric in which every lossless setting is in play. Larger RoCE
fabrics rise slowly above it; fabrics without per-hop lossless settings stay far below."""

EXPERIENCE_BURDEN_FACTOR: dict[Experience, float] = {"none": 1.0, "some": 0.75, "expert": 0.5}
"""Estimate: experience halves the burden at best; a team new to the family carries all of it."""

NEW_STACK_BURDEN: dict[Experience, float] = {"none": 0.35, "some": 0.10, "expert": 0.0}
"""Estimate: the burden of running a network family whose whole stack the team does not run yet —
its own management plane and diagnostics (catalog.md D: subnet manager, UFM, ibdiagnet instead of
the IP tools), monitoring integration, optics and spares, a second vendor relationship. It applies
where the team field measures the whole stack (``team.infiniband``); ``team.ethernet_dcb``
measures only the lossless layer on top of the IP Ethernet every data-centre team already runs,
whose per-hop settings the rule points above already count."""

WHOLE_STACK_TEAM_FIELDS = frozenset({"infiniband"})
"""Team fields that describe experience with a family's whole stack (see NEW_STACK_BURDEN)."""

CLOUD_AVAILABILITY_FIT: dict[str, float] = {"none": 0.0, "some": 0.5, "wide": 1.0}
"""How well a technology's availability in public clouds fits a cloud or hybrid deployment."""
CLOUD_WEIGHT_BY_DEPLOYMENT: dict[Deployment, float] = {
    "on_premises": 0.0,
    "hybrid": 0.5,
    "cloud": 1.0,
}
"""Share of the ecosystem fit that comes from cloud availability (the rest from vendor choice)."""
VENDOR_FIT_HALF = 1.0
"""Vendor fit is ``vendors / (vendors + 1)``: one vendor 0.5, nine vendors 0.9 (more sources,
more competition, no single supplier to wait for)."""

TEAM_FIELD_BY_FAMILY = {"infiniband": "infiniband", "ethernet": "ethernet_dcb"}


@dataclass(frozen=True, slots=True)
class FabricTask:
    """A fabric-wide service the mechanisms need (not a per-hop lint rule)."""

    task: str
    kind: SettingKind
    settings: int
    """Settings to keep right on each device that runs the service."""
    holders: str
    """Which devices hold them: ``switches``, ``nics``, ``managers`` (SM/UFM hosts), ``routers``."""


FIRMWARE_TASK = FabricTask(
    "firmware and OS versions kept consistent on every switch and NIC", "agreement", 1, "all"
)
"""Every fabric, whatever the technology (catalog.md C.7: firmware-specific behaviour)."""

SUBNET_MANAGER_TASKS = (
    FabricTask(
        "subnet manager: master and standby (sm_priority), routing engine, sweep",
        "agreement",
        3,
        "managers",
    ),
    FabricTask("UFM or OpenSM monitoring of the subnet", "safety", 1, "managers"),
)
"""catalog.md D (OpenSM defaults, UFM)."""
IB_CC_TASK = FabricTask(
    "congestion control policy in the subnet manager (mlnx_congestion_control)",
    "tuning",
    1,
    "managers",
)
IB_AR_TASK = FabricTask(
    "adaptive routing groups programmed by the subnet manager (ar_updn)", "agreement", 1, "managers"
)
SHARP_TASK = FabricTask(
    "SHARP aggregation manager beside the master SM, NCCL collnet plugin",
    "agreement",
    2,
    "managers",
)
ROUTER_TASK = FabricTask(
    "IB routers between subnets (the LID space is exhausted)", "agreement", 2, "routers"
)
ROUTED_IP_TASK = FabricTask(
    "BGP underlay and ECMP on every switch (ASN, neighbours, paths)", "agreement", 3, "switches"
)
L2_DOMAIN_TASK = FabricTask(
    "one L2 domain: VLANs and loop prevention on every switch", "agreement", 2, "switches"
)
SUBNET_MANAGER_HOSTS = 2
"""Master and standby subnet manager (catalog.md D)."""


def _mechanisms(
    valid: ValidScenario, tech: TechnologySpec, technology: TechnologyName
) -> set[Mechanism]:
    mechanisms: set[Mechanism] = set()
    if tech.link_flow_control == "pfc":
        mechanisms.add("pfc")
    if tech.congestion_control == "dcqcn":
        mechanisms.add("dcqcn")
    if tech.switch_family == "ethernet":
        mechanisms.add("ethernet")
        switch = valid.switches.get(technology)
        if tech.adaptive_routing_available and switch is not None and switch.adaptive_routing:
            mechanisms.add("adaptive")
    return mechanisms


def _fabric_tasks(
    valid: ValidScenario, design: FabricDesign, tech: TechnologySpec
) -> list[FabricTask]:
    tasks = [FIRMWARE_TASK]
    if tech.scope == "ib_subnet":
        tasks.extend(SUBNET_MANAGER_TASKS)
        if tech.congestion_control == "ib_cc":
            tasks.append(IB_CC_TASK)
        if tech.routing == "adaptive":
            tasks.append(IB_AR_TASK)
        switch = valid.switches.get(design.technology)
        if tech.in_network_reduction and switch is not None and switch.in_network_reduction:
            tasks.append(SHARP_TASK)
        if _routers(design):
            tasks.append(ROUTER_TASK)
    elif tech.scope == "routed_ip":
        tasks.append(ROUTED_IP_TASK)
    elif tech.scope == "l2_domain":
        tasks.append(L2_DOMAIN_TASK)
    return tasks


def _routers(design: FabricDesign) -> int:
    return sum(line.quantity for line in design.bom if line.kind == "router")


def _port_class_count(design: FabricDesign) -> int:
    """Distinct (speed, reach) classes among the design's links: each needs its own headroom."""
    return max(1, len({(g.speed_gbps, g.reach_m) for g in design.link_groups if g.count}))


def _spread(devices: int) -> float:
    """What deploying one setting to ``devices`` devices costs: written once, checked on each."""
    return math.log2(1 + max(devices, 0))


def burden_points(valid: ValidScenario, design: FabricDesign) -> float:
    """The unweighted-by-experience points of :func:`assess_operations` (see module docstring).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.model.fabric import FabricDesign, TierDesign
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> tiers = (TierDesign(name="leaf", switches=2, radix=128, down_ports=32, up_ports=0,
    ...     ports_used=32, ports_free=96),)
    >>> roce = FabricDesign(technology="roce_v2", topology="fat_tree", switch_id="sn5600",
    ...     port_speed_gbps=400, radix=128, tiers=1, planes=1, spine_groups=1, nodes=8, gpus=64,
    ...     endpoints=64, hosts_per_leaf=32, leaves_per_pod=2, rail_aligned=False,
    ...     tier_designs=tiers, link_groups=(), bisection_tbps=12.8, worst_case_switch_hops=1,
    ...     max_endpoints=256, headroom_gpus=192)
    >>> ib = roce.model_copy(update={"technology": "infiniband", "switch_id": "qm9700"})
    >>> burden_points(valid, roce) > burden_points(valid, ib) > 0
    True
    """
    tech = valid.technologies[design.technology]
    mechanisms = _mechanisms(valid, tech, design.technology)
    switches = sum(tier.switches for tier in design.tier_designs)
    nics = design.endpoints
    classes = _port_class_count(design)
    points = 0.0
    for rule in RULES.values():
        if rule.mechanism not in mechanisms:
            continue
        per_switch = rule.switch_settings * (classes if rule.kind == "physical" else 1)
        points += KIND_WEIGHT[rule.kind] * (
            per_switch * _spread(switches) + rule.nic_settings * _spread(nics)
        )
    holders = {
        "switches": switches,
        "nics": nics,
        "all": switches + nics,
        "managers": SUBNET_MANAGER_HOSTS,
        "routers": _routers(design),
    }
    for task in _fabric_tasks(valid, design, tech):
        points += KIND_WEIGHT[task.kind] * task.settings * _spread(holders[task.holders])
    return points


def _tasks(valid: ValidScenario, design: FabricDesign, tech: TechnologySpec) -> tuple[str, ...]:
    mechanisms = _mechanisms(valid, tech, design.technology)
    tasks = [f"{rule.id}: {rule.title}" for rule in RULES.values() if rule.mechanism in mechanisms]
    if tech.link_flow_control == "credit":
        tasks.append("link-level credits: exchanged by the link layer, nothing to configure")
    tasks.extend(task.task for task in _fabric_tasks(valid, design, tech))
    return tuple(tasks)


def ecosystem_fit(tech: TechnologySpec, deployment: Deployment) -> float:
    """Fit of a technology's cloud availability and vendor choice to the deployment.

    >>> from fabricplan.spec import parse_spec
    >>> techs = parse_spec({"cluster": {"gpus": 64}}).technologies
    >>> round(ecosystem_fit(techs["infiniband"], "on_premises"), 2)
    0.5
    >>> round(ecosystem_fit(techs["roce_v2"], "cloud"), 2)
    1.0
    """
    vendors = max(1, len(tech.vendors))
    vendor_fit = vendors / (vendors + VENDOR_FIT_HALF)
    weight = CLOUD_WEIGHT_BY_DEPLOYMENT[deployment]
    return weight * CLOUD_AVAILABILITY_FIT[tech.cloud_availability] + (1 - weight) * vendor_fit


def _findings(
    valid: ValidScenario, design: FabricDesign, tech: TechnologySpec, experience: Experience
) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    if experience == "none":
        skill = "InfiniBand" if tech.switch_family == "infiniband" else "Ethernet DCB (PFC/ECN)"
        findings.append(
            Finding(
                code="OPS001",
                severity="warning",
                message=f"the team has no {skill} experience: plan training or a support contract"
                " before production",
            )
        )
    if tech.link_flow_control == "pfc" and design.tier_designs:
        findings.extend(_headroom_findings(valid, design))
    routers = _routers(design)
    if routers:
        findings.append(
            Finding(
                code="OPS002",
                severity="info",
                message=f"{routers} IB routers join subnets: each subnet needs its own SM and the"
                " routers their own configuration",
            )
        )
    return tuple(findings)


def _headroom_findings(valid: ValidScenario, design: FabricDesign) -> list[Finding]:
    """Lossless headroom of a switch's ports against its buffer (when the catalog gives one)."""
    switch = valid.switches.get(design.technology)
    if switch is None or switch.buffer_bytes is None:
        return []
    spec = baseline_spec(valid, design)
    findings = []
    for role in spec.switch_roles:
        classes = {
            (c.speed_gbps, c.cable_length_m): c
            for c in port_classes(spec, role, SWITCH_MTU_BYTES["sonic"])
        }
        reserved = sum(
            classes[(g.speed_gbps, g.cable_length_m)].headroom.size_bytes * g.count
            for g in role.port_groups
        )
        if reserved >= switch.buffer_bytes.value:
            findings.append(
                Finding(
                    code="L14",
                    severity="error",
                    message=f"{role.name}: lossless headroom of all ports ({reserved} B) does not"
                    f" fit the {switch.id} buffer ({switch.buffer_bytes.value:.0f} B)",
                )
            )
    return findings


def assess_operations(valid: ValidScenario, design: FabricDesign) -> OpsAssessment:
    """What running ``design`` asks of the team.

    Parameters
    ----------
    valid
        The scenario: technologies (mechanisms, vendors, cloud availability), team, deployment.
    design
        The designed fabric (switch and NIC counts, link classes, routers).

    Returns
    -------
    OpsAssessment
        Tasks (the lint rules and fabric services the mechanisms need), findings, the burden
        (0..1, weighted by the team's experience), engineer-years a year
        (:func:`fabricplan.analytic.operations_effort.engineer_years_per_year`), vendor count and
        ecosystem fit.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.model.fabric import FabricDesign
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "team": {"ethernet_dcb": "none"}})
    >>> design = FabricDesign(technology="roce_v2", topology="fat_tree", switch_id="sn5600",
    ...     port_speed_gbps=400, radix=128, tiers=1, planes=1, spine_groups=1, nodes=2, gpus=16,
    ...     endpoints=16, hosts_per_leaf=16, leaves_per_pod=1, rail_aligned=False,
    ...     tier_designs=(), link_groups=(), bisection_tbps=3.2, worst_case_switch_hops=1,
    ...     max_endpoints=128, headroom_gpus=112)
    >>> ops = assess_operations(valid, design)
    >>> ops.tasks[0], ops.vendors, [f.code for f in ops.findings]
    ('L01: PFC on exactly the RoCE priorities, on every port and NIC', 9, ['OPS001'])
    """
    tech = valid.technologies[design.technology]
    team_field = TEAM_FIELD_BY_FAMILY[tech.switch_family]
    experience: Experience = getattr(valid.spec.team, team_field)
    points = burden_points(valid, design)
    base = points / (points + BURDEN_HALF_POINTS)
    new_stack = NEW_STACK_BURDEN[experience] if team_field in WHOLE_STACK_TEAM_FIELDS else 0.0
    return OpsAssessment(
        tasks=_tasks(valid, design, tech),
        findings=_findings(valid, design, tech, experience),
        burden=min(1.0, base * EXPERIENCE_BURDEN_FACTOR[experience] + new_stack),
        engineer_years_per_year=engineer_years_per_year(valid, design),
        vendors=max(1, len(tech.vendors)),
        ecosystem_fit=ecosystem_fit(tech, valid.spec.deployment),
    )
