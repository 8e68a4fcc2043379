"""The one backend seam: ``analytic`` (instant), ``flow`` (fluid), ``packet`` (mechanisms).

A backend turns a designed fabric into a :class:`~fabricplan.model.results.PerformanceResult`.
``flow`` and ``packet`` are the two simulation levels through one template
(:func:`fabricplan.sim.run.simulated_backend`); ``fake`` returns simple, predictable numbers so
that everything above the seam (the decision, reports, the CLI) can be tested without a model.
The mapping of names to backends is fixed at import (:data:`BACKENDS`, read-only): two
evaluations in one process always see the same backends.

>>> get_backend("fake").name
'fake'
>>> backend_names()
['analytic', 'fake', 'flow', 'packet']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Protocol

from fabricplan.errors import SpecError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import (
    CollectivePoint,
    PerformanceResult,
    PerfRequest,
    StepTimeResult,
)
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import gbps_to_GBps, transfer_time_us

__all__ = [
    "BACKENDS",
    "AnalyticBackend",
    "Backend",
    "FakeBackend",
    "FlowBackend",
    "PacketBackend",
    "backend_names",
    "get_backend",
]


def _checked(result: PerformanceResult, valid: ValidScenario) -> PerformanceResult:
    """Every model backend's answer passes the sense checks before it leaves the seam
    (:func:`fabricplan.sim.sense.check_performance`, FP1402)."""
    from fabricplan.sim.sense import check_performance

    return check_performance(result, valid.spec.cluster.nic_speed_gbps)


class Backend(Protocol):
    """What every backend offers."""

    name: str

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult: ...


class AnalyticBackend:
    """Closed-form models (:mod:`fabricplan.analytic.performance`)."""

    name = "analytic"

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        from fabricplan.analytic.performance import analytic_performance

        return _checked(analytic_performance(valid, design, request), valid)


class FlowBackend:
    """Fluid flow-level simulation on the designed fabric (:mod:`fabricplan.sim.flow`): the
    fabric time of each collective under the technology's routing, flow control and congestion
    control; latencies, perftest tables and the training step from the analytic model."""

    name = "flow"

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        from fabricplan.sim.run import simulated_backend

        return _checked(simulated_backend("flow", valid, design, request), valid)


class PacketBackend:
    """Packet-level simulation on the designed fabric (:mod:`fabricplan.sim.packet`): credits,
    PFC, ECN/DCQCN, HPCC, IB CC and routing acting packet by packet; fabric sizes up to
    :data:`fabricplan.sim.packet.performance.PACKET_MAX_HOSTS` host ports. Latencies,
    perftest tables and the training step are the analytic model's."""

    name = "packet"

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        from fabricplan.sim.run import simulated_backend

        return _checked(simulated_backend("packet", valid, design, request), valid)


class FakeBackend:
    """Predictable numbers for tests of the layers above: busbw is the NIC line rate times the
    technology's payload share, latency is 1 µs per switch hop; nothing about congestion."""

    name = "fake"

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        tech = valid.technologies[design.technology]
        share = tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)
        busbw = gbps_to_GBps(valid.spec.cluster.nic_speed_gbps) * share
        points = tuple(
            CollectivePoint(
                collective=op,
                size_bytes=size,
                algorithm="fake",
                time_us=transfer_time_us(size, busbw),
                algbw_GBps=busbw,
                busbw_GBps=busbw,
            )
            for op in request.collectives
            for size in request.sizes_bytes
        )
        step = StepTimeResult(
            compute_s=1.0,
            comm_total_s=0.1 / share,
            comm_exposed_s=0.05 / share,
            step_s=1.0 + 0.05 / share,
            comm_by_dimension_s={"dp": 0.1 / share},
            exposed_fraction=0.05 / share / (1.0 + 0.05 / share),
            gpu_hours_lost_per_year=0.0,
        )
        return PerformanceResult(
            backend="fake",
            technology=design.technology,
            base_latency_us=float(design.worst_case_switch_hops),
            collectives=points,
            step=step,
        )


BACKENDS: Mapping[str, Callable[[], Backend]] = MappingProxyType(
    {
        "analytic": AnalyticBackend,
        "fake": FakeBackend,
        "flow": FlowBackend,
        "packet": PacketBackend,
    }
)
"""Every backend by name (read-only)."""


def backend_names() -> list[str]:
    """Names of the backends.

    Returns
    -------
    list of str
        Sorted names.

    Examples
    --------
    >>> "flow" in backend_names()
    True
    """
    return sorted(BACKENDS)


USER_BACKENDS = ("analytic", "flow", "packet")
"""The backends a user chooses from (``--backend``); ``fake`` is the tests' stand-in."""
TEST_BACKEND_ENV = "FABRICPLAN_TEST_BACKENDS"
"""Set to ``1`` to let a command line choose ``fake`` (the command-line tests do)."""


def user_backend(name: str) -> str:
    """A backend name given on the command line, checked before any work.

    Raises
    ------
    SpecError
        FP117 naming the user's choices for a name that is not one of :data:`USER_BACKENDS`
        (``fake`` only where :data:`TEST_BACKEND_ENV` is ``1``).

    Examples
    --------
    >>> user_backend("flow")
    'flow'
    >>> try:
    ...     user_backend("fluid")
    ... except SpecError as exc:
    ...     str(exc)
    "--backend: unknown backend ('fluid'); use one of analytic, flow, packet [FP117]"
    """
    if name in USER_BACKENDS or (name == "fake" and os.environ.get(TEST_BACKEND_ENV) == "1"):
        return name
    raise SpecError(
        "FP117", "--backend", "unknown backend", name, f"use one of {', '.join(USER_BACKENDS)}"
    )


def get_backend(name: str) -> Backend:
    """A backend by name.

    Parameters
    ----------
    name
        One of :func:`backend_names`.

    Returns
    -------
    Backend
        A fresh instance.

    Raises
    ------
    SpecError
        FP117 naming the choices for an unknown name.

    Examples
    --------
    >>> get_backend("analytic").name
    'analytic'
    """
    try:
        return BACKENDS[name]()
    except KeyError:
        raise SpecError(
            "FP117",
            "--backend",
            "unknown backend",
            name,
            f"use one of {', '.join(USER_BACKENDS)}",
        ) from None
