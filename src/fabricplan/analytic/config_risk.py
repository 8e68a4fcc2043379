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
) -> ConfigRisk:
    """The expected configuration-risk cost of one fabric (see the module docstring).

    Parameters
    ----------
    tech
        The technology (only its ``link_flow_control`` matters).
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
    if tech.link_flow_control != "pfc":
        return ConfigRisk(
            0.0,
            0.0,
            0.0,
            f"configuration risk: {tech.link_flow_control} link-level flow control has no per-hop"
            " lossless setting to get wrong (subnet-manager faults are not modelled)",
        )
    incidents = MISCONFIG_INCIDENTS_PER_YEAR[experience] * years
    gpu_hours = incidents * DETECTION_HOURS * gpus * max(0.0, misconfigured_step_slowdown)
    staff = incidents * FIX_ENGINEER_HOURS * engineer_usd_per_hour
    basis = (
        f"configuration risk: {MISCONFIG_INCIDENTS_PER_YEAR[experience]:g} silent lossless"
        f" misconfigurations a year for a team with {experience!r} DCB experience (estimate) x"
        f" {years} years, each {DETECTION_HOURS:g} h until found at a step"
        f" {misconfigured_step_slowdown:+.1%} (PFC off on the RoCE priority, lossless model) on"
        f" {gpus:,} GPUs, plus {FIX_ENGINEER_HOURS:g} engineer-hours to fix"
    )
    return ConfigRisk(incidents, gpu_hours, staff, basis)
