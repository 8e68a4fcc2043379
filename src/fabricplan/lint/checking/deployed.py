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
=========================  ===========================================================

Rules not in the table change no modelled behaviour and are said as such: L08 (MTU chain: a
too-small MTU drops jumbo frames outright, a failure rather than a slowdown), L10 (global
802.3x pause), L12 (DCBX source of truth), L13 (ETS weights), L21 (a NIC that does not reorder
behind per-packet routing: the go-back-N cost of the analytic model, but no spec setting carries
a NIC's delivery), L23 (trimming off: an overflow waits for the timer; its cost depends on an
overflow rate the models do not take) and L24 (an LLR/CBFC mismatch on some links: the models
set both for the whole fabric, ``fabric.uec``, with link errors from
``fabric.frame_error_ratio``).

>>> sorted({RULE_SETTING[r] for r in ("L01", "L02", "L05")})
['pfc', 'pfc_watchdog']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabricplan.lint.checking.linter import LintResult, lint_files
from fabricplan.model.scenario import LosslessSpec, ValidScenario

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
}
"""Lint rule -> the setting its finding changes (see the module docstring)."""

UNMODELLED_RULES: dict[str, str] = {
    "L08": "an MTU below the RoCE frames drops them outright (a failure, not a slowdown)",
    "L10": "global 802.3x pause is not modelled",
    "L12": "DCBX source of truth: no modelled effect",
    "L13": "ETS weights are not modelled",
    "L21": "an in-order NIC behind per-packet routing goes back N; no spec setting carries it",
    "L23": "trimming off turns overflows into timeouts; the overflow rate is not modelled",
    "L24": (
        "an LLR/CBFC mismatch disables them on that link; the models set them for the whole"
        " fabric (fabric.uec), not per link"
    ),
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


def deployed_settings(result: LintResult, base: LosslessSpec) -> DeployedSettings:
    """The lossless settings ``result``'s findings imply, starting from ``base``.

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
    )


def read_deployed(paths: Iterable[str | Path], base: LosslessSpec) -> DeployedSettings:
    """Lint the configuration files as one fabric and return the settings they imply."""
    return deployed_settings(lint_files(paths), base)


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
    said = (
        f"--config: {deployed.findings} lint finding(s) in the configuration files;"
        f" fabric.lossless taken as {deployed.lossless.model_dump(mode='json')}",
        *(f"--config: {note}" for note in deployed.notes),
    )
    return data, said
