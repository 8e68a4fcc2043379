"""Engineer-years a year to run a fabric, from what its mechanisms ask the team to run.

A fabric is run as a list of tasks. Every fabric has the hardware life cycle (firmware, RMAs,
cabling faults, monitoring). Then each of the technology's mechanisms adds what it asks of the
operators:

- link-level flow control: ``pfc`` is configured and kept consistent on every hop (priority
  maps, ETS, per-port headroom from cable length, PFC watchdog); ``credit`` is exchanged by the
  link layer and asks for nothing; ``scheduled`` (a VOQ fabric) is set up by the fabric itself
  (cell links and credit scheduler; no PFC or ECN to tune), but its fabric elements are devices
  to run; ``none`` asks for nothing;
- congestion control: ``dcqcn`` needs ECN marking thresholds on every switch queue and DCQCN
  parameters on every NIC, tuned together; ``ib_cc`` is one policy in the subnet manager;
  ``spectrum_x_cc`` needs the telemetry on every switch and the CC on every SuperNIC enabled and
  matched; ``uec_nscc`` is a NIC profile with ECN marking on the switches; ``voq_scheduled`` is
  the fabric's own scheduling;
- transport features a technology relies on: packet trimming on every switch queue, link-level
  retry (and credit-based flow control) matched on both ends of every link (UEC profiles);
  per-packet adaptive routing on Ethernet on the RoCE priority of every switch, with
  out-of-order placement on every NIC (Spectrum-X);
- scope and routing: ``ib_subnet`` needs a subnet manager (an HA pair: UFM, OpenSM or the
  embedded SM of a managed switch) that computes all routes; ``routed_ip`` needs a BGP
  underlay and ECMP on every switch; ``l2_domain`` needs one large L2 domain kept loop-free
  (spanning tree or MLAG pairs) and, without an IP header, PFC by the VLAN tag's PCP on every
  host port;
- in-network reduction, when ``fabric.sharp`` is ``on``: the SHARP aggregation manager beside the
  subnet manager, and what it needs on the switches and hosts.

Each task costs ``base + per_switch * switches`` engineer-years per year, and the sum is scaled by
the team's experience with the technology's switch family (``team.infiniband`` for InfiniBand
switches, ``team.ethernet_dcb`` for Ethernet).

**Every figure here is an estimate**, not a measurement: no citable study of network operations
staffing per switch was found (docs/refs.md section F). They are named so that the output can
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
from fabricplan.model.load_balancing import adaptive_routing_for_asic
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
    "scheduled": TaskEffort(
        task="scheduled (VOQ) fabric: fabric elements and cell links run as one system; "
        "credit scheduling needs no PFC, ECN or headroom tuning",
        base_engineer_years_per_year=0.03,
        engineer_years_per_switch_year=0.0005,
    ),
    "none": TaskEffort(
        task="no link-level flow control: nothing to configure",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
}
"""Estimates. PFC is a per-hop, per-priority setting whose lossless guarantee holds only when
every switch and NIC agree (docs/refs.md C, lint rules); credits need no operator action
(docs/refs.md D, "Ethernet-side equivalents"); a scheduled fabric's credits are the fabric's own
(Broadcom Jericho3-AI press release, 2023-04-11: end-to-end VOQ scheduling), but its fabric
elements are a tier of devices to upgrade and monitor, a third of a PFC fabric's share."""

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
    "spectrum_x_cc": TaskEffort(
        task="Spectrum-X congestion control: in-band telemetry on every switch and the CC "
        "algorithm on every SuperNIC, enabled and matched on the RoCE priority",
        base_engineer_years_per_year=0.03,
        engineer_years_per_switch_year=0.0003,
    ),
    "uec_nscc": TaskEffort(
        task="UEC NSCC: the congestion-control profile on every NIC, ECN marking on every "
        "switch queue",
        base_engineer_years_per_year=0.03,
        engineer_years_per_switch_year=0.0003,
    ),
    "voq_scheduled": TaskEffort(
        task="VOQ credit scheduling: the fabric's own, nothing to tune",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
    "none": TaskEffort(
        task="no congestion control: nothing to configure",
        base_engineer_years_per_year=0.0,
        engineer_years_per_switch_year=0.0,
    ),
}
"""Estimates. DCQCN has switch-side (ECN) and NIC-side parameters (docs/refs.md C); IB CC is
enabled and profiled centrally in the SM (docs/refs.md D, ``mlnx_congestion_control``);
Spectrum-X CC has a switch half and a NIC half with no thresholds to tune (NVIDIA Spectrum-X
whitepaper, 2023); NSCC has ECN on the switches and a NIC profile (UE Specification 1.0); the
VOQ scheduler is part of the fabric."""

TRIMMING_EFFORT = TaskEffort(
    task="packet trimming on every switch queue the transport relies on (UEC profile), "
    "checked after every upgrade",
    base_engineer_years_per_year=0.02,
    engineer_years_per_switch_year=0.0003,
)
"""Estimate: one switch setting per queue, but a silent one (UE Specification 1.0: without it an
overflow is a drop and the transport's timer)."""
LINK_LEVEL_RETRY_EFFORT = TaskEffort(
    task="link-level retry and credit-based flow control matched on both ends of every link "
    "(UEC link profile)",
    base_engineer_years_per_year=0.02,
    engineer_years_per_switch_year=0.0005,
)
"""Estimate: a per-link agreement like PFC's, with fewer settings (UE Specification 1.0, LLR
and CBFC negotiated per link)."""
ETHERNET_ADAPTIVE_ROUTING_EFFORT = TaskEffort(
    task="per-packet adaptive routing on the RoCE priority of every switch and out-of-order "
    "placement on every NIC (Spectrum-X RoCE settings on switch and SuperNIC)",
    base_engineer_years_per_year=0.02,
    engineer_years_per_switch_year=0.0005,
)
"""Estimate: a switch-side and a NIC-side setting that must agree (Cumulus Linux 'Adaptive
Routing': on L3 interfaces only, not on bonds; the SuperNIC reorders), fewer settings than PFC."""
PCP_PFC_EFFORT = TaskEffort(
    task="PFC by the VLAN tag's PCP: RoCE VLAN-tagged on every host port, PCP trust on every hop",
    base_engineer_years_per_year=0.02,
    engineer_years_per_switch_year=0.0005,
)
"""Estimate: without an IP header RoCEv1 carries its priority in the 802.1Q tag (IBTA Annex
A16), so every host port needs the VLAN and every hop PCP trust, beside the PFC settings."""

SCOPE_EFFORT: dict[str, TaskEffort] = {
    "ib_subnet": TaskEffort(
        task="subnet manager (HA pair: UFM, OpenSM or the managed switches' embedded SM): "
        "routing engine, failover, upgrades, "
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
        task="one L2 domain: VLANs, loop prevention (spanning tree or MLAG pairs), MAC/ARP scale",
        base_engineer_years_per_year=0.05,
        engineer_years_per_switch_year=0.0015,
    ),
}
"""Estimates. The SM computes every route, so the per-switch share is small but the central
component must be run (docs/refs.md D); a routed fabric carries routing state on every switch
(docs/refs.md B.5); one L2 domain grows harder to keep loop-free and within table sizes."""

SHARP_AGGREGATION_EFFORT = TaskEffort(
    task="SHARP in-network reduction: the aggregation manager (sharp_am) beside the master subnet "
    "manager, SHARP enabled in the SM and on every switch, a tree-based routing engine, IPoIB on "
    "the compute nodes, the NCCL SHARP plugin, and sharp_am re-registered at every upgrade",
    base_engineer_years_per_year=0.03,
    engineer_years_per_switch_year=0.0002,
)
"""Estimate, asked only when ``fabric.sharp`` is ``on`` for a technology whose switches reduce in
the network (what NCCL's CollNet needs; ``auto`` runs without it). The steps are NVIDIA's: the
SHARP Deployment Guide (Rev 3.2.0, "Setting up NVIDIA SHARP Environment": sharp_am runs as root
on a dedicated server with the master SM, never on a compute node nor beside a switch's embedded
SM; the SM uses updn, ar_updn, ftree or ar_ftree on a tree; IPoIB on every compute server for the
UD-multicast result; TCP/IP between the AM and the jobs), SHARP Rev 3.4.0 ("Running NVIDIA SHARP
Aggregation Manager (AM) Daemons": ``sharp_daemons_setup.sh -s -d sharp_am``, and an upgrade
removes and re-registers it) and the UFM Enterprise User Manual v6.23.1 ("Appendix - NVIDIA
SHARP Integration": ``sharp_enabled = true``; AM builds its trees from the SM's subnet.lst and
assigns and frees the switches' SHARP resources per job). A second central daemon that rides
the SM's host and topology: a third of the subnet manager's fixed share (0.10) and less than
half its per-switch share (the switches' SHARP capability and firmware checked at upgrades):
54 h a year plus about 0.36 h per switch."""

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
    tasks = [
        HARDWARE_LIFECYCLE_EFFORT,
        LINK_FLOW_CONTROL_EFFORT[tech.link_flow_control],
        CONGESTION_CONTROL_EFFORT[tech.congestion_control],
        SCOPE_EFFORT[tech.scope],
    ]
    if tech.link_flow_control == "pfc" and tech.scope == "l2_domain":
        tasks.append(PCP_PFC_EFFORT)
    if tech.switch_family == "ethernet" and _per_packet_adaptive(valid, design.technology):
        tasks.append(ETHERNET_ADAPTIVE_ROUTING_EFFORT)
    if tech.packet_trimming:
        tasks.append(TRIMMING_EFFORT)
    if tech.link_level_retry:
        tasks.append(LINK_LEVEL_RETRY_EFFORT)
    if _sharp_on(valid, design.technology):
        tasks.append(SHARP_AGGREGATION_EFFORT)
    return tuple(tasks)


def _per_packet_adaptive(valid: ValidScenario, technology: TechnologyName) -> bool:
    """Whether the fabric routes adaptively packet by packet: the routing it runs (the spec's
    ``fabric.routing``, else the catalog's) is adaptive and its switch places packets, not
    flowlets (Tomahawk DLB keeps a flow in order, so no out-of-order work follows)."""
    tech = _technology(valid, technology)
    routing = valid.spec.fabric.routing.get(technology) or tech.routing
    switch = valid.switches.get(technology)
    granularity = adaptive_routing_for_asic(switch.asic).granularity if switch else "per_packet"
    return routing == "adaptive" and granularity == "per_packet"


def _sharp_on(valid: ValidScenario, technology: TechnologyName) -> bool:
    """Whether the fabric runs in-network reduction: ``fabric.sharp: on`` and switches that
    have it (the same test as the performance model's, :mod:`fabricplan.analytic.profile`)."""
    tech = _technology(valid, technology)
    switch = valid.switches[technology]
    capable = tech.in_network_reduction and switch.in_network_reduction
    return capable and valid.spec.fabric.sharp_for(technology) == "on"


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
