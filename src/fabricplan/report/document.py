"""The machine-readable document behind every output (JSON, and what tables and pages render).

The JSON shape is stable and documented in docs/output.md: a list ``options``, one per
technology, each with ``technology``, ``design``, ``cost``, ``performance`` and ``ops`` (the parts a
command computed), and for ``compare`` the key ``recommendation``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from fabricplan.analytic.workload import resolve_workload
from fabricplan.errors import FabricPlanError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    Evaluation,
    InfeasibleOption,
    PerformanceResult,
    Recommendation,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario

SCHEMA_VERSION = 2


def design_document(design: FabricDesign) -> dict[str, Any]:
    """A design as JSON-ready data, with the per-tier switch and link counts spelled out."""
    data = design.model_dump(mode="json")
    data["switches"] = design.switches
    data["links"] = design.links
    data["links_total"] = sum(design.links.values())
    data["switches_total"] = sum(design.switches.values())
    return data


def option_document(evaluation: Evaluation, parts: Sequence[str]) -> dict[str, Any]:
    """One technology's option with the requested parts (``design``, ``cost``, ...)."""
    data: dict[str, Any] = {"technology": evaluation.technology}
    for part in parts:
        if part == "design":
            data["design"] = design_document(evaluation.design)
            data["growth"] = (
                evaluation.growth.model_dump(mode="json") if evaluation.growth else None
            )
        else:
            data[part] = getattr(evaluation, part).model_dump(mode="json")
    return data


def scenario_document(valid: ValidScenario) -> dict[str, Any]:
    """The effective spec (every default filled in), the hardware it resolved to and the workload
    as the step model runs it."""
    try:
        job = resolve_workload(valid.spec.workload, valid.spec.cluster.gpus)
        workload: dict[str, Any] | None = dataclasses.asdict(job)
    except FabricPlanError:
        workload = None
    return {
        "workload": workload,
        "name": valid.spec.name,
        "spec": valid.spec.model_dump(mode="json"),
        "hardware": {
            "node": valid.node.id,
            "nics": {tech: nic.id for tech, nic in valid.nics.items()},
            "switches": {tech: sw.id for tech, sw in valid.switches.items()},
        },
        "assumptions": list(valid.assumptions),
    }


def options_document(
    valid: ValidScenario,
    evaluations: Sequence[Evaluation],
    parts: Sequence[str],
    recommendation: Recommendation | None = None,
    infeasible: Sequence[InfeasibleOption] = (),
) -> dict[str, Any]:
    """The whole document for ``design``, ``cost``, ``compare``."""
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, **scenario_document(valid)}
    # The design search may choose another switch than the resolver's default: say the chosen.
    doc["hardware"]["switches"].update({e.technology: e.design.switch_id for e in evaluations})
    doc["options"] = [option_document(e, parts) for e in evaluations]
    doc["infeasible"] = [o.model_dump(mode="json") for o in infeasible]
    if recommendation is not None:
        doc["recommendation"] = recommendation.model_dump(mode="json")
    return doc


def perf_document(
    backend: str,
    gpus: int,
    results: Sequence[PerformanceResult],
    skipped: Mapping[TechnologyName, Exception],
    p2p: bool,
) -> dict[str, Any]:
    """The ``perf --format json`` document: one record per (technology, point)."""
    records = [
        {"technology": r.technology, **point.model_dump()}
        for r in results
        for point in (r.p2p if p2p else r.collectives)
    ]
    document: dict[str, Any] = {"backend": backend, "gpus": gpus, "results": records}
    if skipped:
        document["skipped"] = {tech: str(exc) for tech, exc in skipped.items()}
    return document
