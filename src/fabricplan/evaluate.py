"""The one entry point: design, price, model and assess every technology of a scenario.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [e.technology for e in evaluate(valid, backend="fake")]
['infiniband', 'roce_v2']
"""

from __future__ import annotations

from fabricplan.analytic.cost import fabric_cost
from fabricplan.backends import get_backend
from fabricplan.lint.operations import assess_operations
from fabricplan.model.results import Evaluation, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str = "analytic",
    request: PerfRequest | None = None,
) -> Evaluation:
    """Everything known about one technology's fabric for this scenario."""
    design = design_fabric(valid, technology)
    return Evaluation(
        technology=technology,
        design=design,
        cost=fabric_cost(valid, design),
        performance=get_backend(backend).perform(valid, design, request or PerfRequest()),
        ops=assess_operations(valid, design),
    )


def evaluate(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> list[Evaluation]:
    """One :class:`Evaluation` per technology in the spec, in the spec's order."""
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]
