"""``check-bench`` as a library call: read, judge, diagnose; and the JSON document it prints.

>>> from fabricplan.measure.reader import read_bench_text
>>> log = '''#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong
...  1073741824 268435456 float sum -1 9000 119.30 223.69 0 9000 119.30 223.69 0
... '''
>>> result = check_bench([read_bench_text(log, "allreduce.log")], how=JudgeSpec(min_busbw_GBps=300))
>>> result.failures, check_document(result)["measurements"][0]["status"]
(1, 'fail')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from fabricplan.measure.calibration import calibration_changes
from fabricplan.measure.diagnosis import Evidence, diagnose
from fabricplan.measure.expectation import (
    EXPECTED_BAND_FRACTION,
    JudgedRecord,
    JudgeSpec,
    Perform,
    judge_files,
)
from fabricplan.measure.measurement import BenchFileRecord
from fabricplan.model.base import Frozen
from fabricplan.model.fabric import Finding
from fabricplan.model.results import CalibrationProfile
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric


class BenchCheckResult(Frozen):
    """Everything ``check-bench`` found."""

    files: tuple[BenchFileRecord, ...]
    judged: tuple[JudgedRecord, ...]
    findings: tuple[Finding, ...]
    compared: bool
    """True when a spec was given (measurements have expectations)."""
    how: JudgeSpec
    calibration_notes: tuple[str, ...] = ()
    """Per technology judged: whether the calibration profile was applied and what it set."""

    @property
    def failures(self) -> int:
        """Measurements below a threshold the user set (exit code 1 when any)."""
        return sum(1 for j in self.judged if j.status == "fail")

    @property
    def thresholds_set(self) -> bool:
        how = self.how
        return any(v is not None for v in (how.threshold, how.min_busbw_GBps, how.min_bw_gbps))


def check_bench(
    files: Sequence[BenchFileRecord],
    valid: ValidScenario | None = None,
    how: JudgeSpec | None = None,
    perform: Perform | None = None,
) -> BenchCheckResult:
    """Judge every measurement against the model (when ``valid`` and ``perform`` are given) and
    the user's thresholds, then run the diagnosis rules."""
    how = how or JudgeSpec()
    judged = judge_files(files, valid, how, perform)
    notes: tuple[str, ...] = ()
    if valid is not None and how.calibration is not None:
        techs = sorted({j.technology for j in judged if j.technology is not None})
        notes = tuple(calibration_note(how.calibration, valid, tech) for tech in techs)
    fallback = how.band if how.band is not None else EXPECTED_BAND_FRACTION
    findings = diagnose(Evidence.of(files, judged, valid, fallback))
    return BenchCheckResult(
        files=tuple(files),
        judged=judged,
        findings=findings,
        compared=valid is not None and perform is not None,
        how=how,
        calibration_notes=notes,
    )


def calibration_note(
    profile: CalibrationProfile, valid: ValidScenario, technology: TechnologyName
) -> str:
    """Whether ``profile`` applies to the spec's ``technology`` fabric, and what it sets.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> calibration_note(CalibrationProfile(nic_bw_efficiency=0.9, technology="roce_v2"),
    ...     valid, "infiniband")
    'calibration not applied to infiniband: the profile was fitted on roce_v2'
    """
    nic = valid.nics[technology].id
    switch = design_fabric(valid, technology).switch_id
    if not profile.applies_to(technology, nic, switch):
        fitted = "/".join(x for x in (profile.technology, profile.nic, profile.switch) if x)
        return f"calibration not applied to {technology}: the profile was fitted on {fitted}"
    changes = ", ".join(
        f"{c.name} {'model' if c.default is None else f'{c.default:g}'} -> {c.calibrated:g}"
        for c in calibration_changes(profile, valid, technology)
    )
    return f"calibration applied to {technology} ({profile.source or 'no source'}): {changes}"


def measurement_document(judged: JudgedRecord, compared: bool, thresholds: bool) -> dict[str, Any]:
    """One measurement as JSON: the row's fields, then ``expected``/``status`` when judged."""
    doc: dict[str, Any] = judged.measurement.model_dump(exclude_none=True)
    if compared:
        doc["technology"] = judged.technology
        doc["expected"] = judged.expected.model_dump(exclude_none=True) if judged.expected else None
        doc["ratio"] = judged.ratio
        if judged.ratio_low is not None:
            doc["ratio_low"], doc["ratio_high"] = judged.ratio_low, judged.ratio_high
            doc["band_basis"] = judged.band_basis
    if compared or thresholds:
        doc["status"] = judged.status
        if judged.note:
            doc["note"] = judged.note
    return doc


def check_document(result: BenchCheckResult) -> dict[str, Any]:
    """The ``--format json`` document of ``check-bench``."""
    thresholds = result.thresholds_set
    return {
        "files": [
            {
                "path": f.path,
                "format": f.format,
                "runs": [r.model_dump(exclude_none=True) for r in f.runs],
                "warnings": list(f.warnings),
            }
            for f in result.files
        ],
        "measurements": [
            measurement_document(j, result.compared, thresholds) for j in result.judged
        ],
        "findings": [f.model_dump() for f in result.findings],
        "calibration": list(result.calibration_notes),
        "summary": {
            "measurements": len(result.judged),
            "status": dict(Counter(j.status for j in result.judged)),
            "failures": result.failures,
            "band": result.how.band if result.how.band is not None else "validation",
        },
    }
