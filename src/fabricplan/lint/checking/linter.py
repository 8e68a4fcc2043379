"""Run every rule over a fabric of devices: the entry point of ``fabricplan lint``.

>>> from fabricplan.lint.model import DeviceConfig, PortConfig
>>> nic = DeviceConfig("gpu01", "nic", "mlnx_qos", "gpu01.txt", ports=(PortConfig("eth0",
...     trust="dscp", pfc_priorities=frozenset({3}), cable_length_m=3),))
>>> result = lint_devices([nic])
>>> result.findings, result.exit_code
((), 0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricplan.lint.checking.buffer import check_cable_length, check_headroom
from fabricplan.lint.checking.congestion import check_ecn, check_ets, check_nic_congestion_control
from fabricplan.lint.checking.fabric_check import check_dcbx, check_nic_cnp, check_nic_marking
from fabricplan.lint.checking.flow_control import (
    check_link_pause,
    check_lossless_buffers,
    check_lossless_capacity,
    check_pfc_directions,
    check_pfc_priorities,
    check_watchdog,
)
from fabricplan.lint.checking.marking import check_cnp_queue, check_roce_dscp, check_trust
from fabricplan.lint.checking.mtu import check_mtu
from fabricplan.lint.checking.routing import check_adaptive_routing
from fabricplan.lint.checking.rule import (
    Check,
    IntentSpec,
    LintContext,
    LintFinding,
    LosslessIntent,
    infer_intent,
    sort_findings,
)
from fabricplan.lint.checking.transport import (
    check_fabric_adaptive_routing,
    check_link_retry,
    check_nic_reordering,
    check_telemetry_cc,
    check_trimming,
)
from fabricplan.lint.model import DeviceConfig
from fabricplan.lint.reading.config_file import parse_device_config as _parse
from fabricplan.lint.reading.config_file import read_device_config, read_text
from fabricplan.lint.value import locate_line

CHECKS: tuple[Check, ...] = (
    check_pfc_priorities,
    check_roce_dscp,
    check_nic_marking,
    check_cnp_queue,
    check_nic_cnp,
    check_ecn,
    check_watchdog,
    check_headroom,
    check_cable_length,
    check_mtu,
    check_trust,
    check_link_pause,
    check_nic_congestion_control,
    check_dcbx,
    check_ets,
    check_lossless_capacity,
    check_adaptive_routing,
    check_lossless_buffers,
    check_pfc_directions,
    check_fabric_adaptive_routing,
    check_nic_reordering,
    check_telemetry_cc,
    check_trimming,
    check_link_retry,
)
"""Every check, in rule order (L01 ... L24); a rule may have a switch and a NIC half."""

EXIT_CLEAN = 0
EXIT_ERRORS = 1


@dataclass(frozen=True)
class LintResult:
    """The findings of one lint run, with the devices and the intent they were checked against."""

    devices: tuple[DeviceConfig, ...]
    intent: LosslessIntent
    findings: tuple[LintFinding, ...]

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0 when no error-severity finding exists, else 1 (input errors exit 2 earlier)."""
        return EXIT_ERRORS if self.has_errors else EXIT_CLEAN

    def as_dict(self) -> dict[str, object]:
        """The ``--format json`` document."""
        return {
            "findings": [f.as_dict() for f in self.findings],
            "devices": [
                {
                    "name": d.name,
                    "kind": d.kind,
                    "format": d.format,
                    "file": d.file,
                    "ports": len(d.ports),
                }
                for d in self.devices
            ],
            "intent": {
                "lossless_priorities": sorted(self.intent.lossless_priorities),
                "roce_dscp": self.intent.roce_dscp,
                "cnp_dscp": self.intent.cnp_dscp,
                "cnp_priority": self.intent.cnp_priority,
                "roce_mtu_bytes": self.intent.roce_mtu_bytes,
                "basis": dict(self.intent.basis),
            },
            "summary": {
                severity: sum(1 for f in self.findings if f.severity == severity)
                for severity in ("error", "warning", "info")
            },
        }


def lint_devices(
    devices: Sequence[DeviceConfig],
    intent: IntentSpec | None = None,
    texts: Mapping[str, str] | None = None,
) -> LintResult:
    """Check ``devices`` one by one and against each other.

    Parameters
    ----------
    devices
        The fabric's devices (switches and NICs), as the parsers return them.
    intent
        Lossless priorities, RoCE and CNP DSCP the user asks for; ``None`` infers them.
    texts
        File text by file name, used to turn JSON/YAML key paths into line numbers.

    Returns
    -------
    LintResult
        Every finding, with the devices and the intent they were checked against.

    Examples
    --------
    >>> from fabricplan.lint.model import DeviceConfig, PortConfig
    >>> nic = DeviceConfig("gpu01", "nic", "nic_cc", "gpu01.txt", ports=(PortConfig("eth0"),))
    >>> result = lint_devices([nic])
    >>> len(result.devices)
    1
    """
    resolved = infer_intent(devices, intent)
    ctx = LintContext(tuple(devices), resolved)
    findings: list[LintFinding] = []
    for check in CHECKS:
        findings.extend(check(ctx))
    if texts:
        findings = [_with_line(f, texts) for f in findings]
    return LintResult(tuple(devices), resolved, tuple(sort_findings(findings)))


def _with_line(item: LintFinding, texts: Mapping[str, str]) -> LintFinding:
    if item.line is not None or not item.path or item.file not in texts:
        return item
    return dataclasses.replace(item, line=locate_line(texts[item.file], item.path))


def lint_files(
    paths: Iterable[str | Path], device_type: str = "auto", intent: IntentSpec | None = None
) -> LintResult:
    """Read every file and lint them as one fabric.

    Parameters
    ----------
    paths
        Configuration files (SONiC config_db.json, NVUE YAML, EOS running-config, mlnx_qos or
        NIC congestion-control output).
    device_type
        ``auto`` (told apart by content) or one format for every file.
    intent
        Lossless priorities, RoCE and CNP DSCP the user asks for; ``None`` infers them.

    Returns
    -------
    LintResult
        As :func:`lint_devices`, with file lines on the findings.

    Raises
    ------
    InputFileError
        FP4xx on the first file that cannot be read or parsed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "gpu01.txt"
    ...     _ = path.write_text("ROCE_CC_PRIO_MASK_P1 255")
    ...     [d.name for d in lint_files([path], device_type="nic_cc").devices]
    ['gpu01']
    """
    return lint_texts({str(path): read_text(path) for path in paths}, device_type, intent)


def lint_texts(
    texts: Mapping[str, str], device_type: str = "auto", intent: IntentSpec | None = None
) -> LintResult:
    """Parse configuration texts (by file name) and lint them as one fabric.

    >>> result = lint_texts({"gpu01.txt": "CNP_DSCP_P1 48\\n"})
    >>> [d.name for d in result.devices]
    ['gpu01']
    """
    devices = [_parse(text, name, device_type) for name, text in texts.items()]
    return lint_devices(devices, intent, texts)


__all__ = [
    "CHECKS",
    "LintResult",
    "lint_devices",
    "lint_files",
    "lint_texts",
    "read_device_config",
]
