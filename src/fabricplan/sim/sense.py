"""Sense checks on a simulator's answer before anyone reads it.

A flow or packet run ends in arrays of times and bytes; :func:`check_run` checks them against
what any correct run satisfies, so that a wrong answer is one clear line, never a number:

- every time is finite and non-negative, and no flow or step finishes before it starts;
- bytes are conserved: what the traffic sends is what the hosts put on the fabric and what
  the receivers get (:data:`BYTES_RELATIVE_TOLERANCE`);
- no link carries more than its capacity over the run, and no flow moves faster than the
  fastest host link (:data:`RATE_RELATIVE_TOLERANCE`).

A run with no flow on the fabric (every rank in one NVLink domain) and a packet run that did
not finish are refused before these checks with what the user can do (FP1400, FP1401); a
failed check is a bug of the level and says so (FP1402).

>>> import numpy as np
>>> check_run("flow", RunFacts(
...     flows=1, traffic_bytes=1e6, sent_bytes=1e6, delivered_bytes=1e6,
...     flow_bytes=np.array([1e6]), start_us=np.array([0.0]), finish_us=np.array([25.0]),
...     step_start_us=np.array([0.0]), step_finish_us=np.array([25.0]),
...     link_utilisation=np.array([0.9]), line_rate_bytes_per_us=50_000.0))
>>> try:
...     check_run("flow", RunFacts(
...         flows=1, traffic_bytes=1e6, sent_bytes=1e6, delivered_bytes=1e6,
...         flow_bytes=np.array([1e6]), start_us=np.array([0.0]), finish_us=np.array([5.0]),
...         step_start_us=np.array([0.0]), step_finish_us=np.array([5.0]),
...         link_utilisation=np.array([0.9]), line_rate_bytes_per_us=50_000.0))
... except ModelError as exc:
...     print(exc.code, exc.what)
FP1402 a flow moved faster than the fastest host link
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.model.results import PerformanceResult
from fabricplan.units import transfer_rate_GBps

BYTES_RELATIVE_TOLERANCE = 1e-6
"""Relative difference allowed between bytes sent, carried and delivered (float sums of up to
millions of flows; a lost or doubled flow is far above it)."""
RATE_RELATIVE_TOLERANCE = 1e-6
"""Relative excess allowed over a link's capacity or a host link's line rate (rounding of the
fluid solver's rates and of picosecond clocks)."""


@dataclass(frozen=True)
class RunFacts:
    """What a level's result says, in the floor's units (µs, bytes)."""

    flows: int
    traffic_bytes: float
    """Payload bytes the traffic asks to move."""
    sent_bytes: float
    """Payload bytes that entered the fabric (the flow level: bytes on host-to-leaf links);
    at least ``traffic_bytes`` (the packet level adds headers and retransmissions)."""
    delivered_bytes: float
    """Payload bytes the receivers got."""
    flow_bytes: NDArray[np.float64]
    start_us: NDArray[np.float64]
    finish_us: NDArray[np.float64]
    step_start_us: NDArray[np.float64]
    step_finish_us: NDArray[np.float64]
    link_utilisation: NDArray[np.float64]
    """Bytes each link carried over its capacity for the run."""
    line_rate_bytes_per_us: float
    """The fastest host link's rate."""


def _broken(level: str, what: str, value: object) -> ModelError:
    return ModelError(
        "FP1402",
        f"{level} simulator",
        what,
        value,
        "this is a bug of the simulator, not of the spec: report the spec and the command",
    )


def _times(level: str, name: str, values: NDArray[np.float64]) -> None:
    finite = np.isfinite(values)
    if not finite.all():
        raise _broken(level, f"a {name} time is not a number", int((~finite).sum()))
    if values.size and values.min() < 0:
        raise _broken(level, f"a {name} time is negative", float(values.min()))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= BYTES_RELATIVE_TOLERANCE * max(abs(a), abs(b), 1.0)


def check_run(level: str, facts: RunFacts) -> None:
    """Refuse a run whose answer breaks a law every run obeys (FP1402; module docstring)."""
    for name, values in (
        ("flow start", facts.start_us),
        ("flow finish", facts.finish_us),
        ("step start", facts.step_start_us),
        ("step finish", facts.step_finish_us),
    ):
        _times(level, name, values)
    if (facts.finish_us < facts.start_us).any():
        raise _broken(level, "a flow finishes before it starts", None)
    if (facts.step_finish_us < facts.step_start_us).any():
        raise _broken(level, "a step finishes before it starts", None)
    if not _close(facts.delivered_bytes, facts.traffic_bytes):
        raise _broken(
            level,
            "the receivers got other bytes than the traffic sent",
            f"{facts.delivered_bytes:.0f} of {facts.traffic_bytes:.0f}",
        )
    if facts.sent_bytes < facts.traffic_bytes * (1 - BYTES_RELATIVE_TOLERANCE):
        raise _broken(
            level,
            "fewer bytes entered the fabric than the traffic sent",
            f"{facts.sent_bytes:.0f} of {facts.traffic_bytes:.0f}",
        )
    limit = 1 + RATE_RELATIVE_TOLERANCE
    if facts.link_utilisation.size and not np.isfinite(facts.link_utilisation).all():
        raise _broken(level, "a link's utilisation is not a number", None)
    if facts.link_utilisation.size and facts.link_utilisation.max() > limit:
        raise _broken(
            level,
            "a link carried more than its capacity",
            f"utilisation {float(facts.link_utilisation.max()):.6f}",
        )
    fct_us = facts.finish_us - facts.start_us
    moved = facts.flow_bytes > 0
    if moved.any():
        if (fct_us[moved] <= 0).any():
            raise _broken(level, "a flow with bytes took no time", None)
        rate = facts.flow_bytes[moved] / fct_us[moved]
        if rate.max() > facts.line_rate_bytes_per_us * limit:
            raise _broken(
                level,
                "a flow moved faster than the fastest host link",
                f"{float(rate.max()):.0f} > {facts.line_rate_bytes_per_us:.0f} B/us",
            )


def check_fabric_traffic(level: str, flows: int, pattern: str, gpus: int) -> None:
    """Refuse a run whose traffic never leaves the NVLink domain (FP1400): there is nothing for
    a fabric simulator to answer, and its completion would read as an infinitely fast fabric."""
    if flows == 0:
        raise ModelError(
            "FP1400",
            "--pattern",
            f"no flow of {pattern} crosses the fabric: all {gpus} GPUs talk over NVLink",
            None,
            "use --backend analytic, or a cluster (or --jobs, --placement) that spans nodes",
        )


def check_finished(status: str, unfinished: int, flows: int, end_us: float) -> None:
    """Refuse a packet run that did not deliver every flow (FP1401): its completion is not
    known, so no time is reported."""
    if unfinished:
        raise ModelError(
            "FP1401",
            "packet simulator",
            f"{unfinished} of {flows} flows never finished (status {status} at {end_us:.1f} us:"
            " a deadlock, a pause storm or a receiver that never drains)",
            None,
            "look at the lossless settings (PFC watchdog), or run --backend flow",
        )


ALGBW_RELATIVE_TOLERANCE = 1e-6
"""Relative difference allowed between a collective's algbw and its size over its time
(nccl-tests' definition: algbw = size / time)."""


def check_performance(result: PerformanceResult, nic_speed_gbps: float) -> PerformanceResult:
    """``result`` once every number of it makes sense (FP1402), for any backend.

    Times and bandwidths are non-negative and a collective takes time; algbw is the size over
    the time (nccl-tests' definition, :data:`ALGBW_RELATIVE_TOLERANCE`); no perftest row moves
    more than the NIC's line rate; the exposed communication is part of the communication and
    of the step.

    >>> from fabricplan.model.results import CollectivePoint
    >>> point = CollectivePoint(collective="all_reduce", size_bytes=10**6, algorithm="x",
    ...     time_us=100.0, algbw_GBps=10.0, busbw_GBps=17.5)
    >>> good = PerformanceResult(backend="fake", technology="roce_v2", base_latency_us=2.0,
    ...     collectives=(point,))
    >>> check_performance(good, 400.0) is good
    True
    """
    level = f"{result.backend} backend"
    if result.base_latency_us < 0:
        raise _broken(level, "the base latency is negative", result.base_latency_us)
    for c in result.collectives:
        where = f"{c.collective} at {c.size_bytes} B"
        if c.time_us <= 0 or c.algbw_GBps < 0 or c.busbw_GBps < 0:
            raise _broken(level, f"{where} has a time or bandwidth at or below zero", c.time_us)
        expected = transfer_rate_GBps(c.size_bytes, c.time_us)
        if abs(c.algbw_GBps - expected) > ALGBW_RELATIVE_TOLERANCE * expected:
            raise _broken(level, f"{where}: algbw is not size / time", f"{c.algbw_GBps} GB/s")
    for p in result.p2p:
        if p.latency_us < 0 or p.bw_gbps < 0:
            raise _broken(level, f"{p.test} at {p.size_bytes} B is negative", p.latency_us)
        if p.bw_gbps > nic_speed_gbps * (1 + RATE_RELATIVE_TOLERANCE):
            raise _broken(
                level,
                f"{p.test} at {p.size_bytes} B is faster than the NIC",
                f"{p.bw_gbps:.1f} > {nic_speed_gbps:g} Gb/s",
            )
    step = result.step
    if step is not None:
        parts = (step.compute_s, step.comm_total_s, step.comm_exposed_s, step.step_s)
        slack = 1 + RATE_RELATIVE_TOLERANCE
        if (
            min(parts) < 0
            or step.comm_exposed_s > step.comm_total_s * slack
            or step.comm_exposed_s > step.step_s * slack
            or not 0 <= step.exposed_fraction <= slack
        ):
            raise _broken(level, "the training step's parts do not add up", step.step_s)
    return result


__all__ = [
    "ALGBW_RELATIVE_TOLERANCE",
    "BYTES_RELATIVE_TOLERANCE",
    "RATE_RELATIVE_TOLERANCE",
    "RunFacts",
    "check_fabric_traffic",
    "check_finished",
    "check_performance",
    "check_run",
]
