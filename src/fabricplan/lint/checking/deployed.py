"""Real switch and NIC configurations as the lossless settings the models take.

``compare SPEC --config FILE...`` (and ``perf``) lint the files (:func:`~.linter.lint_files`) and
turn every finding of a rule that changes how the fabric behaves into the
:class:`~fabricplan.model.scenario.LosslessSpec` (and routing) the analytic model carries:

=========================  ===========================================================
rules                      setting
=========================  ===========================================================
L01 L02 L09 L14 L16 L17    ``pfc: false`` — RoCE lands in a lossy queue somewhere on
                           the path (no PFC on its priority, DSCP mapped elsewhere or not
                           trusted, no lossless pool or buffer, PFC one way only)
L03 L11                    ``congestion_control: none`` — CNPs lost or NIC rate control off
L04                        ``ecn: false`` — no ECN marking on the RoCE queue
L05                        ``pfc_watchdog: false``
L06 L07                    ``pfc_headroom_bytes`` — the headroom read, or 1 B when only its
                           cable length is wrong (below what the cable needs either way)
L15 L20                    ``routing: ecmp`` — adaptive routing asked where links lack it, or
                           left off on fabric ports of an adaptive fabric
L22                        ``congestion_control: none`` — telemetry CC on one half only
L24                        ``fabric.uec``: ``link_level_retry: false`` or
                           ``credit_flow_control: false`` — link ends disagree on LLR or
                           CBFC, which disables it on that link (the models set both for
                           the whole fabric, so off everywhere, as one PFC-less hop is
                           ``pfc: false``)
=========================  ===========================================================

Rules not in the table change no modelled behaviour and are said as such: L08 (MTU chain: a
too-small MTU drops jumbo frames outright, a failure rather than a slowdown), L10 (global
802.3x pause), L12 (DCBX source of truth), L13 (ETS weights), L21 (a NIC that does not reorder
behind per-packet routing: the go-back-N cost of the analytic model, but no spec setting carries
a NIC's delivery) and L23 (trimming off: an overflow waits for the timer; its cost depends on
an overflow rate the models do not take). What LLR off costs comes from
``fabric.frame_error_ratio``.

>>> sorted({RULE_SETTING[r] for r in ("L01", "L02", "L05")})
['pfc', 'pfc_watchdog']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricplan.catalog.loader import load_catalog
from fabricplan.lint.checking.linter import LintResult, lint_files
from fabricplan.lint.checking.rule import LintFinding
from fabricplan.lint.checking.transport import LINK_FEATURES
from fabricplan.model.hardware import TechnologySpec
from fabricplan.model.scenario import (
    LosslessSpec,
    UecLinkSpec,
    ValidScenario,
    deployed_technology,
)

RULE_SETTING: dict[str, str] = {
    "L01": "pfc",
    "L02": "pfc",
    "L09": "pfc",
    "L14": "pfc",
    "L16": "pfc",
    "L17": "pfc",
    "L03": "congestion_control",
    "L11": "congestion_control",
    "L04": "ecn",
    "L05": "pfc_watchdog",
    "L06": "pfc_headroom_bytes",
    "L07": "pfc_headroom_bytes",
    "L15": "routing",
    "L20": "routing",
    "L22": "congestion_control",
    "L24": "uec",
}
"""Lint rule -> the setting its finding changes (see the module docstring)."""

UNMODELLED_RULES: dict[str, str] = {
    "L08": "an MTU below the RoCE frames drops them outright (a failure, not a slowdown)",
    "L10": "global 802.3x pause is not modelled",
    "L12": "DCBX source of truth: no modelled effect",
    "L13": "ETS weights are not modelled",
    "L21": "an in-order NIC behind per-packet routing goes back N; no spec setting carries it",
    "L23": "trimming off turns overflows into timeouts; the overflow rate is not modelled",
}

SHORT_HEADROOM_BYTES = 1
"""Headroom taken when a finding says it is too small without a number (cable length wrong)."""


@dataclass(frozen=True, slots=True)
class DeployedSettings:
    """What the configuration files say, as model settings."""

    lossless: LosslessSpec
    adaptive_routing_ok: bool
    notes: tuple[str, ...]
    findings: int
    uec: UecLinkSpec = field(default_factory=UecLinkSpec)
    """The UEC link features (``fabric.uec``) the findings leave on."""


def _uec_feature(finding: LintFinding) -> str | None:
    """The ``fabric.uec`` setting an L24 finding is about (its setting ends with the label)."""
    for name, label in LINK_FEATURES:
        if finding.setting.endswith(f" {label}") or finding.setting == label:
            return name
    return None


def deployed_settings(
    result: LintResult, base: LosslessSpec, base_uec: UecLinkSpec | None = None
) -> DeployedSettings:
    """The lossless settings (and UEC link features, from ``base_uec``) ``result``'s findings
    imply, starting from ``base``.

    Examples
    --------
    >>> from fabricplan.lint.checking.rule import LintFinding
    >>> f = LintFinding(rule="L01", severity="error", device="leaf1", setting="pfc_enable",
    ...     value="4", what="PFC not on priority 3", file="config_db.json")
    >>> s = deployed_settings(LintResult(devices=(), intent=None, findings=(f,)), LosslessSpec())
    >>> s.lossless.pfc, s.notes[0]
    (False, 'L01 leaf1 (config_db.json): pfc_enable = 4: PFC not on priority 3 -> pfc: false')
    """
    update: dict[str, object] = {}
    uec_update: dict[str, object] = {}
    notes: list[str] = []
    adaptive_ok = True
    counted = 0
    for finding in result.findings:
        if finding.severity == "info":
            continue
        counted += 1
        setting = RULE_SETTING.get(finding.rule)
        where = f"{finding.rule} {finding.device} ({finding.file}): {finding.message}"
        if setting is None:
            reason = UNMODELLED_RULES.get(finding.rule, "no modelled effect")
            notes.append(f"{where} -> not modelled ({reason})")
            continue
        if setting == "uec":
            feature = _uec_feature(finding)
            if feature is None:
                notes.append(f"{where} -> not modelled (names no UEC link feature)")
                continue
            uec_update[feature] = False
            notes.append(f"{where} -> uec.{feature}: false")
            continue
        if setting == "routing":
            adaptive_ok = False
            notes.append(f"{where} -> routing: ecmp")
            continue
        if setting == "pfc_headroom_bytes":
            value = int(finding.value) if finding.value.isdigit() else SHORT_HEADROOM_BYTES
            current = update.get(setting)
            update[setting] = min(value, current) if isinstance(current, int) else value
            notes.append(f"{where} -> pfc_headroom_bytes: {update[setting]}")
            continue
        value_text = "none" if setting == "congestion_control" else "false"
        update[setting] = "none" if setting == "congestion_control" else False
        notes.append(f"{where} -> {setting}: {value_text}")
    return DeployedSettings(
        lossless=base.model_copy(update=update),
        adaptive_routing_ok=adaptive_ok,
        notes=tuple(notes),
        findings=counted,
        uec=(base_uec or UecLinkSpec()).model_copy(update=uec_update),
    )


def read_deployed(
    paths: Iterable[str | Path], base: LosslessSpec, base_uec: UecLinkSpec | None = None
) -> DeployedSettings:
    """Lint the configuration files as one fabric and return the settings they imply."""
    return deployed_settings(lint_files(paths), base, base_uec)


def deployed_spec_data(
    valid: ValidScenario, deployed: DeployedSettings
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The spec document with the deployed lossless settings (and ECMP where adaptive routing is
    not supported on the links), and one assumption per mapped finding; the caller revises the
    scenario with :func:`fabricplan.spec.replace_spec`."""
    data = valid.spec.model_dump(exclude_unset=True)
    fabric = data.setdefault("fabric", {})
    fabric["lossless"] = deployed.lossless.model_dump(mode="json")
    routing = dict(valid.spec.fabric.routing)
    if not deployed.adaptive_routing_ok:
        for tech in valid.spec.fabric.technologies:
            if valid.technologies[tech].switch_family == "ethernet":
                routing.setdefault(tech, "ecmp")
    fabric["routing"] = routing
    uec = ""
    if deployed.uec != valid.spec.fabric.uec:
        fabric["uec"] = deployed.uec.model_dump(mode="json")
        uec = f", fabric.uec as {fabric['uec']}"
    said = (
        f"--config: {deployed.findings} lint finding(s) in the configuration files;"
        f" fabric.lossless taken as {deployed.lossless.model_dump(mode='json')}{uec}",
        *(f"--config: {note}" for note in deployed.notes),
    )
    return data, said


def with_deployed_uec(valid: ValidScenario) -> ValidScenario:
    """``valid`` whose ``uec`` technology carries its spec's ``fabric.uec`` again (after
    :func:`fabricplan.spec.replace_spec`, which keeps the resolved technologies); the switch
    chosen stays (one that states a feature runs without it)."""
    if "uec" not in valid.technologies:
        return valid
    catalog = load_catalog().get_typed("uec", TechnologySpec, "--config")
    tech = deployed_technology(catalog, "uec", valid.spec.fabric)
    return valid.model_copy(update={"technologies": {**valid.technologies, "uec": tech}})
