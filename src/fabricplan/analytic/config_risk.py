"""The expected cost of configuration risk: how often a lossless setting is wrong, times what it
costs until it is found.

A lossless Ethernet fabric (link-level flow control ``pfc``) is correct only when every hop and
every NIC agree on the PFC priority, the DSCP map, the headroom and the ECN/DCQCN settings (lint
rules L01-L17). A mistake is often silent: RoCE keeps working, lossy (drops and go-back-N) or
with spreading pauses, and the jobs slow down until someone finds it. Over the horizon::

    incidents        = MISCONFIG_INCIDENTS_PER_YEAR[experience] x years
    gpu_hours        = incidents x DETECTION_HOURS x GPUs x step slowdown of the misconfiguration
    staff_usd        = incidents x FIX_ENGINEER_HOURS x engineer rate
    expected cost    = gpu_hours x price(GPU-hour) + staff_usd

The step slowdown is what the lossless model (:mod:`.lossless`) gives for PFC off on the RoCE
priority, the commonest mistake (a hop or NIC without PFC on that priority, or the DSCP mapped
elsewhere, lint L01/L02). A fabric whose link-level flow control is credit-based has no per-hop
lossless setting to get wrong: its risk here is 0 (subnet-manager faults are not modelled).

Each mechanism that rests on settings every device must agree on is one *class* of silent
mistakes, with incidents at the team's rate (:func:`risk_classes`):

- ``pfc`` (RoCEv2, RoCEv1, Spectrum-X): the lossless settings above, priced with the PFC-off
  slowdown;
- per-packet adaptive routing on Ethernet with NIC reordering (Spectrum-X): adaptive routing on
  the RoCE priority, out-of-order placement on the SuperNIC and CC on switch telemetry and NIC
  must all be on (lint L20-L22); a half-configured pair falls back to ECMP or goes back N. Its
  GPU time is priced when the caller gives that slowdown, else staff only (said in the basis);
- packet trimming and link-level retry (UEC profiles): trimming off on one switch turns its
  overflows into timeouts, an LLR/CBFC mismatch on a link disables them (lint L23-L24); the
  slowdown depends on how often queues overflow, which the analytic level does not know, so
  only the staff time is priced;
- a ``scheduled`` (VOQ) fabric and a ``credit`` fabric have no per-hop setting to get wrong.

A PFC fabric also carries the risk of a **pause storm** (:func:`pause_storm_risk`), whatever
its settings: a NIC that stops taking packets off the wire while its PFC stays asserted pauses
its leaf, which pauses every upstream port, until the whole fabric stops (Guo et al. 2016,
section 4.3, figure 5). The PFC watchdog (``fabric.lossless.pfc_watchdog``, lint L05) sees the
stuck queue and drops its packets after its detection time, so the fabric stalls for a fraction
of a second; without it the fabric stays stopped until someone finds the NIC::

    storms     = PAUSE_STORMS_PER_NIC_YEAR x NICs x years
    gpu_hours  = storms x (WATCHDOG_DETECTION_S / 3600 if watchdog else UNWATCHED_STORM_HOURS)
                 x GPUs                                      (a synchronous job waits for all)
    staff_usd  = storms x STORM_FIND_ENGINEER_HOURS x rate   (without the watchdog only)

The watchdog's own cost is the packets it drops when it fires: that queue's, whose NIC is
lost either way (the job restarts on both sides, so that is no difference).

**The rates are estimates.** Production reports describe these incidents but publish no rates:
Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016 (PFC deadlocks, pause storms,
misconfigured priorities in Microsoft's RoCE fleet); Gangidi et al., "RDMA over Ethernet for
Distributed AI Training at Meta Scale", SIGCOMM 2024 (tuning DCQCN/PFC per fabric, turning DCQCN
off). The spec's ``cost.prices`` and team fields move every figure here.

>>> round(MISCONFIG_INCIDENTS_PER_YEAR["none"] / MISCONFIG_INCIDENTS_PER_YEAR["expert"], 1)
8.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabricplan.model.hardware import TechnologySpec
from fabricplan.model.scenario import Experience

MISCONFIG_INCIDENTS_PER_YEAR: dict[Experience, float] = {"none": 2.0, "some": 1.0, "expert": 0.25}
"""Silent lossless misconfigurations a year that reach production (estimate): a team new to
DCB about one every six months (every change window touches PFC/ECN on many devices), a team
that has run it about one a year, an expert team with automated lint gates one every four years.
Basis: the failure classes in Guo et al. 2016, section 4 (no rates published)."""

DETECTION_HOURS = 48.0
"""Hours a silent misconfiguration degrades jobs before it is found (estimate: a weekend; it
shows as a slower step, not an error, until someone compares busbw with the expected figure)."""

FIX_ENGINEER_HOURS = 16.0
"""Engineer-hours to locate and fix one misconfiguration across the fabric (estimate: two
engineer-days of counters, lint runs and a change window)."""


PAUSE_STORMS_PER_NIC_YEAR = 1.0e-5
"""NIC pause storms a year per RDMA NIC on a PFC fabric (estimate: one a year per 100,000 NICs).
Basis: Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016, section 4.3: storms
from a bug in a NIC's receive pipeline were seen "multiple times" in one and a half years of
RoCEv2 in Microsoft's data centres; no rate or fleet size is published."""

UNWATCHED_STORM_HOURS = 1.0
"""Hours a pause storm stops the fabric without a watchdog (estimate: the time for the on-call
engineer to follow the pause counters hop by hop to the storming NIC and shut its port)."""

WATCHDOG_DETECTION_S = 0.2
"""Seconds a storm lasts with the watchdog on: its detection time, the default of SONiC's
``pfcwd`` (``DEFAULT_DETECTION_TIME`` 200 ms, sonic-net/sonic-utilities ``pfcwd/main.py``) and
of Junos (two 100 ms polling intervals); the queue then drops instead of pausing."""

STORM_FIND_ENGINEER_HOURS = 4.0
"""Engineer-hours to find and isolate a storming NIC without a watchdog (estimate: half a day
of pause counters across the fabric; with the watchdog the switch logs the port)."""


@dataclass(frozen=True, slots=True)
class PauseStormRisk:
    """The expected pause storms over the horizon and what they idle."""

    storms: float
    gpu_hours: float
    staff_hours: float
    words: str


def pause_storm_risk(nics: int, gpus: int, years: int, watchdog: bool) -> PauseStormRisk:
    """Pause storms a PFC fabric should expect and the GPU time they stop (module docstring).

    >>> on, off = (pause_storm_risk(100_000, 100_000, 5, w) for w in (True, False))
    >>> on.storms, round(on.gpu_hours, 3), off.gpu_hours, off.staff_hours  # 5 storms x 1 h
    (5.0, 27.778, 500000.0, 20.0)
    """
    storms = PAUSE_STORMS_PER_NIC_YEAR * nics * years
    hours = WATCHDOG_DETECTION_S / 3600.0 if watchdog else UNWATCHED_STORM_HOURS
    lasting = (
        f"{WATCHDOG_DETECTION_S:g} s (the PFC watchdog's detection time)"
        if watchdog
        else f"{UNWATCHED_STORM_HOURS:g} h (no PFC watchdog: until the NIC is found, estimate)"
    )
    return PauseStormRisk(
        storms,
        storms * hours * gpus,
        0.0 if watchdog else storms * STORM_FIND_ENGINEER_HOURS,
        f"pause storms: {storms:.2g} expected ({PAUSE_STORMS_PER_NIC_YEAR:g} a NIC-year x"
        f" {nics:,} NICs x {years} years, estimate), each stopping {gpus:,} GPUs {lasting}",
    )


RiskClass = Literal["lossless", "adaptive_routing", "transport_profile"]
"""A family of settings that must agree across devices and fail silently when they do not."""

RISK_CLASS_WORDS: dict[RiskClass, str] = {
    "lossless": "PFC/DSCP/headroom",
    "adaptive_routing": "adaptive routing + NIC reordering + telemetry CC (switch and SuperNIC)",
    "transport_profile": "UEC profile (packet trimming, LLR/CBFC per link)",
}


UNPRICED_REASON: dict[RiskClass, str] = {
    "lossless": "no PFC-off slowdown given",
    "adaptive_routing": "no AR-off slowdown given",
    "transport_profile": "depends on the overflow rate",
}


def risk_classes(tech: TechnologySpec) -> tuple[RiskClass, ...]:
    """The silent-misconfiguration classes a technology's mechanisms open.

    >>> from fabricplan.spec import parse_spec
    >>> techs = parse_spec({"cluster": {"gpus": 16}}).technologies
    >>> risk_classes(techs["roce_v2"]), risk_classes(techs["infiniband"])
    (('lossless',), ())
    """
    classes: list[RiskClass] = []
    if tech.link_flow_control == "pfc":
        classes.append("lossless")
    if (
        tech.switch_family == "ethernet"
        and tech.routing == "adaptive"
        and tech.delivery == "nic_reorder"
    ):
        classes.append("adaptive_routing")
    if tech.packet_trimming or tech.link_level_retry:
        classes.append("transport_profile")
    return tuple(classes)


@dataclass(frozen=True, slots=True)
class ConfigRisk:
    """The expected cost of configuration risk over the horizon, in its two currencies."""

    incidents: float
    gpu_hours: float
    """GPU-hours lost to degraded steps (priced at the GPU-hour price by the caller)."""
    staff_usd: float
    basis: str


def config_risk(
    tech: TechnologySpec,
    experience: Experience,
    years: int,
    gpus: int,
    misconfigured_step_slowdown: float,
    engineer_usd_per_hour: float,
    adaptive_off_step_slowdown: float | None = None,
    nics: int = 0,
    pfc_watchdog: bool = True,
) -> ConfigRisk:
    """The expected configuration-risk cost of one fabric (see the module docstring).

    Parameters
    ----------
    tech
        The technology (its mechanisms open the risk classes, :func:`risk_classes`).
    experience
        The team's experience with the technology's switch family.
    years
        The horizon.
    gpus
        GPUs whose steps slow down (the whole cluster: a synchronous job runs at its slowest
        link).
    misconfigured_step_slowdown
        Relative step-time increase with PFC off on the RoCE priority (0.04 = +4 %).
    engineer_usd_per_hour
        Fully loaded engineer rate.
    adaptive_off_step_slowdown
        Relative step-time increase when the Ethernet adaptive-routing settings are half
        configured (the fabric falls back to ECMP); ``None``: that class's GPU time is not
        priced.
    nics
        RDMA NICs on the fabric (the pause-storm risk of a PFC fabric, :func:`pause_storm_risk`;
        0 leaves it out).
    pfc_watchdog
        The PFC watchdog is on (storms last its detection time, not an hour).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> techs = parse_spec({"cluster": {"gpus": 16}}).technologies
    >>> r = config_risk(techs["roce_v2"], "some", 5, 1000, 0.05, 100.0)
    >>> r.incidents, r.gpu_hours, r.staff_usd    # 5 x 48 h x 1000 GPUs x 5 %; 5 x 16 h x 100
    (5.0, 12000.0, 8000.0)
    >>> config_risk(techs["infiniband"], "none", 5, 1000, 0.05, 100.0).gpu_hours
    0.0
    """
    classes = risk_classes(tech)
    if not classes:
        return ConfigRisk(
            0.0,
            0.0,
            0.0,
            f"configuration risk: {tech.link_flow_control} link-level flow control has no per-hop"
            " setting to get wrong (subnet-manager and fabric-controller faults are not"
            " modelled)",
        )
    rate = MISCONFIG_INCIDENTS_PER_YEAR[experience]
    slowdown_by_class: dict[RiskClass, float | None] = {
        "lossless": max(0.0, misconfigured_step_slowdown),
        "adaptive_routing": adaptive_off_step_slowdown,
        "transport_profile": None,
    }
    incidents = gpu_hours = 0.0
    parts: list[str] = []
    for risk_class in classes:
        class_incidents = rate * years
        incidents += class_incidents
        slowdown = slowdown_by_class[risk_class]
        words = RISK_CLASS_WORDS[risk_class]
        if slowdown is None:
            parts.append(f"{words}: GPU time not priced ({UNPRICED_REASON[risk_class]})")
            continue
        gpu_hours += class_incidents * DETECTION_HOURS * gpus * max(0.0, slowdown)
        parts.append(f"{words}: step {slowdown:+.1%}")
    staff = incidents * FIX_ENGINEER_HOURS * engineer_usd_per_hour
    storm = None
    if tech.link_flow_control == "pfc" and nics:
        storm = pause_storm_risk(nics, gpus, years, pfc_watchdog)
        gpu_hours += storm.gpu_hours
        staff += storm.staff_hours * engineer_usd_per_hour
    basis = (
        f"configuration risk: {rate:g} silent misconfigurations a year per class for a team"
        f" with {experience!r} experience (estimate) x {years} years x {len(classes)}"
        f" class(es) ({'; '.join(parts)}), each {DETECTION_HOURS:g} h until found on"
        f" {gpus:,} GPUs, plus {FIX_ENGINEER_HOURS:g} engineer-hours to fix"
    )
    if classes == ("lossless",):
        basis = (
            f"configuration risk: {rate:g} silent lossless"
            f" misconfigurations a year for a team with {experience!r} DCB experience (estimate) x"
            f" {years} years, each {DETECTION_HOURS:g} h until found at a step"
            f" {misconfigured_step_slowdown:+.1%} (PFC off on the RoCE priority, lossless model) on"
            f" {gpus:,} GPUs, plus {FIX_ENGINEER_HOURS:g} engineer-hours to fix"
        )
    if storm is not None:
        basis += f"; {storm.words}"
    return ConfigRisk(incidents, gpu_hours, staff, basis)
