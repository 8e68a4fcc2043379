"""What running a designed fabric asks of the team: its tasks, their effort, what is not money.

The tasks are the lint rules (``lint.checking.rule.RULES``) the technology's mechanisms
(``link_flow_control``, ``congestion_control``, ``switch_family``, ``routing``, ``scope``,
in-network reduction) make apply, and the fabric services they need (subnet manager, BGP
underlay, IB routers). Their effort is the one operations model,
:mod:`fabricplan.analytic.operations_effort`, in engineer-years and hours a year, which the cost
turns into staff money: there is no second, unitless "burden" that could disagree with it.

Vendor count and cloud availability are reported as they are, not scored: they are not money,
and the decision takes them only as constraints the user sets (``decision.require``).

References
----------
docs/refs.md C.9 (the rules), D (InfiniBand operations), B.4 (LID limit, routers).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.analytic.operations_effort import HOURS_PER_ENGINEER_YEAR, engineer_years_per_year
from fabricplan.lint.baselines.generator import SWITCH_MTU_BYTES, baseline_spec, port_classes
from fabricplan.lint.checking.rule import RULES, Mechanism, SettingKind
from fabricplan.model.fabric import FabricDesign, Finding
from fabricplan.model.hardware import TechnologySpec
from fabricplan.model.load_balancing import adaptive_routing_for_asic
from fabricplan.model.results import OpsAssessment
from fabricplan.model.scenario import Experience, TechnologyName, ValidScenario

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
"""Every fabric, whatever the technology (docs/refs.md C.7: firmware-specific behaviour)."""

SUBNET_MANAGER_TASKS = (
    FabricTask(
        "subnet manager: master and standby (sm_priority), routing engine, sweep",
        "agreement",
        3,
        "managers",
    ),
    FabricTask("UFM, OpenSM or embedded-SM monitoring of the subnet", "safety", 1, "managers"),
)
"""docs/refs.md D (OpenSM defaults, UFM)."""
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
    "one L2 domain: VLANs and loop prevention (spanning tree or MLAG pairs) on every switch",
    "agreement",
    2,
    "switches",
)
PCP_PFC_TASK = FabricTask(
    "PFC by the VLAN tag's PCP: RoCE VLAN-tagged on every host port, PCP trust on every hop",
    "agreement",
    2,
    "switches",
)
"""RoCEv1 has no IP header: its priority rides in the 802.1Q tag (IBTA Annex A16)."""
SCHEDULED_FABRIC_TASK = FabricTask(
    "scheduled fabric: fabric elements and cell links run as one system (no PFC or ECN to tune)",
    "agreement",
    1,
    "switches",
)
"""A VOQ fabric's credits are its own (Broadcom Jericho3-AI, 2023-04-11); its fabric elements
are devices to upgrade and monitor."""
UEC_PROFILE_TASK = FabricTask(
    "UEC profiles: transport and congestion-control profile on every NIC, matched to the"
    " switches' trimming and link profiles",
    "agreement",
    2,
    "nics",
)
"""UE Specification 1.0: profiles select the transport features a fabric relies on."""
SUBNET_MANAGER_HOSTS = 2
"""Master and standby subnet manager (docs/refs.md D)."""


def _routing(valid: ValidScenario, tech: TechnologySpec, technology: TechnologyName) -> str:
    """The routing the fabric runs: the spec's ``fabric.routing`` for the technology, else the
    catalog's default (as the designer and the performance models read it)."""
    return valid.spec.fabric.routing.get(technology) or tech.routing


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
            per_packet = adaptive_routing_for_asic(switch.asic).granularity == "per_packet"
            if _routing(valid, tech, technology) == "adaptive" and per_packet:
                # Per-packet adaptive routing delivers out of order, so every port must route
                # adaptively and every NIC place out of order (L20, L21). Flowlet switching
                # (Tomahawk DLB) keeps a flow's packets in order: no such work.
                mechanisms.add("nic_reorder")
    if tech.congestion_control == "spectrum_x_cc":
        mechanisms.add("telemetry_cc")
    if tech.packet_trimming:
        mechanisms.add("trimming")
    if tech.link_level_retry:
        mechanisms.add("link_retry")
    return mechanisms


def _fabric_tasks(
    valid: ValidScenario, design: FabricDesign, tech: TechnologySpec
) -> list[FabricTask]:
    tasks = [FIRMWARE_TASK]
    if tech.scope == "ib_subnet":
        tasks.extend(SUBNET_MANAGER_TASKS)
        if tech.congestion_control == "ib_cc":
            tasks.append(IB_CC_TASK)
        if _routing(valid, tech, design.technology) == "adaptive":
            tasks.append(IB_AR_TASK)
        switch = valid.switches.get(design.technology)
        if (
            tech.in_network_reduction
            and switch is not None
            and switch.in_network_reduction
            and valid.spec.fabric.sharp_for(design.technology) == "on"
        ):
            # Only a fabric that runs SHARP keeps its aggregation manager and NCCL plugin:
            # ``auto`` is what NCCL does without them (CollNet off).
            tasks.append(SHARP_TASK)
        if _routers(design):
            tasks.append(ROUTER_TASK)
    elif tech.scope == "routed_ip":
        tasks.append(ROUTED_IP_TASK)
    elif tech.scope == "l2_domain":
        tasks.append(L2_DOMAIN_TASK)
        if tech.link_flow_control == "pfc":
            tasks.append(PCP_PFC_TASK)
    if tech.link_flow_control == "scheduled":
        tasks.append(SCHEDULED_FABRIC_TASK)
    if tech.congestion_control == "uec_nscc":
        tasks.append(UEC_PROFILE_TASK)
    return tasks


def _routers(design: FabricDesign) -> int:
    return sum(line.quantity for line in design.bom if line.kind == "router")


def _tasks(valid: ValidScenario, design: FabricDesign, tech: TechnologySpec) -> tuple[str, ...]:
    mechanisms = _mechanisms(valid, tech, design.technology)
    tasks = [f"{rule.id}: {rule.title}" for rule in RULES.values() if rule.mechanism in mechanisms]
    if tech.link_flow_control == "credit":
        tasks.append("link-level credits: exchanged by the link layer, nothing to configure")
    tasks.extend(task.task for task in _fabric_tasks(valid, design, tech))
    return tuple(tasks)


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
        Tasks (the lint rules and fabric services the mechanisms need), findings, engineer-years
        and hours a year (:func:`fabricplan.analytic.operations_effort.engineer_years_per_year`),
        vendor count and cloud availability.

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
    years = engineer_years_per_year(valid, design)
    return OpsAssessment(
        tasks=_tasks(valid, design, tech),
        findings=_findings(valid, design, tech, experience),
        engineer_years_per_year=years,
        hours_per_year=years * HOURS_PER_ENGINEER_YEAR,
        vendors=max(1, len(tech.vendors)),
        cloud_availability=tech.cloud_availability,
    )
