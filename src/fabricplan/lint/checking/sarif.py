"""Lint findings as a SARIF 2.1.0 log, the format CI systems read (GitHub code scanning,
GitLab, Azure DevOps).

One run, one driver (``fabricplan``) whose ``rules`` are the rule registry; one result per
finding with its rule id, level, message and location (file, line when known, and the device and
setting as a logical location).

>>> from fabricplan.lint.checking.rule import LintFinding
>>> item = LintFinding("L05", "error", "leaf1", "Ethernet0 pfc watchdog", "off", "no watchdog",
...                    "leaf1.json", 12)
>>> log = sarif_log([item])
>>> log["version"], log["runs"][0]["results"][0]["ruleId"]
('2.1.0', 'L05')
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fabricplan import __version__
from fabricplan.lint.checking.rule import RULES, LintFinding
from fabricplan.model.fabric import Severity

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL_BY_SEVERITY: dict[Severity, str] = {"error": "error", "warning": "warning", "info": "note"}


def _uri(file: str) -> str:
    path = Path(file)
    return path.as_posix() if not path.is_absolute() else path.as_uri()


def sarif_log(findings: Iterable[LintFinding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log (a JSON-ready dict) for ``findings``."""
    rule_ids = sorted(RULES)
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    rules = [
        {
            "id": rule_id,
            "name": RULES[rule_id].title,
            "shortDescription": {"text": RULES[rule_id].title},
            "fullDescription": {"text": RULES[rule_id].why},
            "help": {"text": f"{RULES[rule_id].fix} Source: {RULES[rule_id].source}"},
            "defaultConfiguration": {"level": LEVEL_BY_SEVERITY[RULES[rule_id].severity]},
            "properties": {"source": RULES[rule_id].source},
        }
        for rule_id in rule_ids
    ]
    results = []
    for item in findings:
        region = {"startLine": item.line} if item.line else None
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(item.file)}}
        if region:
            physical["region"] = region
        results.append(
            {
                "ruleId": item.rule,
                "ruleIndex": index[item.rule],
                "level": LEVEL_BY_SEVERITY[item.severity],
                "message": {"text": f"{item.device}: {item.message}. {item.fix}"},
                "locations": [
                    {
                        "physicalLocation": physical,
                        "logicalLocations": [
                            {
                                "fullyQualifiedName": f"{item.device}/{item.setting}",
                                "kind": "member",
                            }
                        ],
                    }
                ],
                "properties": {
                    "device": item.device,
                    "setting": item.setting,
                    "value": item.value,
                    "key": item.key,
                },
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "fabricplan",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
