"""The one entry point: design, price, model and assess every technology of a scenario.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [e.technology for e in evaluate(valid, backend="fake")]
['infiniband', 'roce_v2']
"""

from __future__ import annotations

from fabricplan.analytic.cost import fabric_cost, with_gpu_idle_cost
from fabricplan.backends import get_backend
from fabricplan.errors import DesignError, InputFileError, ModelError
from fabricplan.lint.operations import assess_operations
from fabricplan.model.results import Evaluation, InfeasibleOption, PerformanceResult, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric

__all__ = ["evaluate", "evaluate_feasible", "evaluate_one"]


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str = "analytic",
    request: PerfRequest | None = None,
) -> Evaluation:
    """Everything known about one technology's fabric for this scenario.

    Parameters
    ----------
    valid
        The validated scenario.
    technology
        One of its technologies.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model (default: every collective at the default sizes, the training step).

    Returns
    -------
    Evaluation
        Design, cost, performance and operations of that technology.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> e = evaluate_one(parse_spec({"cluster": {"gpus": 256}}), "roce_v2", backend="fake")
    >>> e.technology, e.performance.backend
    ('roce_v2', 'fake')
    """
    design = design_fabric(valid, technology)
    performance = get_backend(backend).perform(valid, design, request or PerfRequest())
    return Evaluation(
        technology=technology,
        design=design,
        cost=with_gpu_idle_cost(valid, fabric_cost(valid, design), performance.step),
        performance=performance,
        ops=assess_operations(valid, design),
    )


def evaluate(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> list[Evaluation]:
    """One :class:`Evaluation` per technology in the spec, in the spec's order.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model.

    Returns
    -------
    list of Evaluation
        One per technology.

    Raises
    ------
    DesignError
        The first, if a technology cannot be designed; :func:`evaluate_feasible` keeps going
        instead.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> [e.technology for e in evaluate(parse_spec({"cluster": {"gpus": 256}}), backend="fake")]
    ['infiniband', 'roce_v2']
    """
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]


def evaluate_feasible(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> tuple[list[Evaluation], list[InfeasibleOption]]:
    """Evaluations of the technologies that can be designed, and the others with the reason.

    A spec asking for something no technology can build still raises the first design error.

    Parameters
    ----------
    valid
        The validated scenario.
    backend
        A name of :func:`fabricplan.backends.backend_names`.
    request
        What to model.

    Returns
    -------
    tuple of (list of Evaluation, list of InfeasibleOption)
        The designable technologies' evaluations and the others with their error.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> evals, infeasible = evaluate_feasible(valid, backend="fake")
    >>> len(evals), infeasible
    (2, [])
    """
    evaluations: list[Evaluation] = []
    infeasible: list[InfeasibleOption] = []
    first_error: DesignError | None = None
    for tech in valid.spec.fabric.technologies:
        try:
            evaluations.append(evaluate_one(valid, tech, backend, request))
        except DesignError as exc:
            first_error = first_error or exc
            infeasible.append(InfeasibleOption(technology=tech, code=exc.code, message=str(exc)))
    if not evaluations and first_error is not None:
        raise first_error
    return evaluations, infeasible


PER_TECHNOLOGY_CODES = frozenset(("FP509", "FP513"))
"""Errors that concern one technology's hardware (a forced algorithm or in-network reduction it
lacks): the other technologies still run, and the skipped one is named."""


def perform_each(
    valid: ValidScenario, request: PerfRequest, backend: str = "analytic"
) -> tuple[list[PerformanceResult], dict[TechnologyName, ModelError]]:
    """The performance of every technology's designed fabric (what ``perf`` prints).

    A technology lacking what the request forces (:data:`PER_TECHNOLOGY_CODES`) is skipped with
    its error; when every technology is skipped, the first error is raised.

    >>> from fabricplan.spec import parse_spec
    >>> results, skipped = perform_each(parse_spec({"cluster": {"gpus": 64}}), PerfRequest())
    >>> [r.technology for r in results], skipped
    (['infiniband', 'roce_v2'], {})
    """
    model = get_backend(backend)
    results: list[PerformanceResult] = []
    skipped: dict[TechnologyName, ModelError] = {}
    for tech in valid.spec.fabric.technologies:
        try:
            results.append(model.perform(valid, design_fabric(valid, tech), request))
        except ModelError as exc:
            if exc.code not in PER_TECHNOLOGY_CODES:
                raise
            skipped[tech] = exc
    if not results:
        raise next(iter(skipped.values()))
    return results, skipped


def roce_baseline_files(valid: ValidScenario, vendor: str, origin: str = "spec") -> dict[str, str]:
    """The baseline lossless configuration of the spec's RoCE fabric (``roce-config``'s files).

    FP420 when the spec names no RoCE technology.

    >>> from fabricplan.spec import parse_spec
    >>> files = roce_baseline_files(parse_spec({"cluster": {"gpus": 64}}), "sonic")
    >>> "host-nic-expected.txt" in files
    True
    """
    from fabricplan.lint.baselines.generator import baseline_spec, roce_baseline

    technology = next((t for t in ("roce_v2", "roce_v1") if t in valid.technologies), None)
    if technology is None:
        raise InputFileError(
            "FP420",
            f"{origin}: fabric.technologies",
            "names no RoCE technology",
            list(valid.technologies),
            "add roce_v2 to fabric.technologies",
        )
    return roce_baseline(baseline_spec(valid, design_fabric(valid, technology)), vendor)
