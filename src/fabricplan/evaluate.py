"""The one entry point: design, price, model and assess every technology of a scenario.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [e.technology for e in evaluate(valid, backend="fake")]
['infiniband', 'roce_v2']
"""

from __future__ import annotations

from fabricplan.analytic.cost import fabric_cost, with_gpu_idle_cost
from fabricplan.analytic.uncertainty import with_uncertainty
from fabricplan.backends import get_backend
from fabricplan.errors import DesignError
from fabricplan.lint.operations import assess_operations
from fabricplan.measure.calibration import calibration_changes
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    CalibrationEffect,
    Evaluation,
    InfeasibleOption,
    PerformanceResult,
    PerfRequest,
)
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.topology.designer import design_fabric

__all__ = ["evaluate", "evaluate_feasible", "evaluate_one"]


def calibrated_performance(
    valid: ValidScenario, design: FabricDesign, backend: str, request: PerfRequest
) -> PerformanceResult:
    """The backend's result with the request's calibration profile where it applies, and what
    the profile changed; then the uncertainty bands of every predicted value.

    A profile applies only to the technology, NIC and switch it was fitted on
    (:meth:`~fabricplan.model.results.CalibrationProfile.applies_to`): one fitted on RoCE runs
    leaves the InfiniBand prediction as it was, and the result says so.

    >>> from fabricplan.model.results import CalibrationProfile
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 64}})
    >>> roce = CalibrationProfile(nic_bw_efficiency=0.5, technology="roce_v2")
    >>> ib = calibrated_performance(valid, design_fabric(valid, "infiniband"), "analytic",
    ...     PerfRequest(calibration=roce, step=False))
    >>> ib.calibration is None, "not applied" in ib.notes[-1]
    (True, True)
    """
    model = get_backend(backend)
    technology = design.technology
    profile = request.calibration
    nic = valid.nics[technology].id
    if profile is None or profile.applies_to(technology, nic, design.switch_id):
        result = model.perform(valid, design, request)
    else:
        result = model.perform(valid, design, request.model_copy(update={"calibration": None}))
        fitted = "/".join(x for x in (profile.technology, profile.nic, profile.switch) if x)
        note = (
            f"calibration profile not applied: fitted on {fitted}, this fabric is"
            f" {technology}/{nic}/{design.switch_id}"
        )
        result = result.model_copy(update={"notes": (*result.notes, note)})
        profile = None
    if profile is not None:
        before = None
        if backend == "analytic":  # instant: say what the profile moved
            before = model.perform(valid, design, request.model_copy(update={"calibration": None}))
        effect = CalibrationEffect(
            source=profile.source,
            technology=technology,
            changes=calibration_changes(profile, valid, technology),
            base_latency_us_before=before.base_latency_us if before else None,
            step_s_before=before.step.step_s if before and before.step else None,
        )
        result = result.model_copy(update={"calibration": effect})
    return with_uncertainty(result)


def evaluate_one(
    valid: ValidScenario,
    technology: TechnologyName,
    backend: str = "analytic",
    request: PerfRequest | None = None,
) -> Evaluation:
    """Everything known about one technology's fabric for this scenario."""
    design = design_fabric(valid, technology)
    performance = calibrated_performance(valid, design, backend, request or PerfRequest())
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

    Raises the first :class:`~fabricplan.errors.DesignError` if a technology cannot be designed;
    :func:`evaluate_feasible` keeps going instead.
    """
    return [evaluate_one(valid, tech, backend, request) for tech in valid.spec.fabric.technologies]


def evaluate_feasible(
    valid: ValidScenario, backend: str = "analytic", request: PerfRequest | None = None
) -> tuple[list[Evaluation], list[InfeasibleOption]]:
    """Evaluations of the technologies that can be designed, and the others with the reason.

    A spec asking for something no technology can build still raises the first design error.

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
