"""What corrupted frames (``fabric.frame_error_ratio``) cost the collectives of one fabric, with
and without Ultra Ethernet's link-level retry (``fabric.uec.link_level_retry``).

The packet level runs every frame through its links and corrupts each with the spec's ratio
(:mod:`fabricplan.sim.packet.llr`); the analytic and flow levels add the expected delay of
:func:`~fabricplan.analytic.lossless.link_error_delay_us` to each nccl-tests row, over the
frames the row's collective puts on the fabric:

- frames: every rank's bus bytes (``busbw x time``, the bytes nccl-tests counts each rank to
  move) in packets of the MTU, all counted as crossing the fabric (an upper estimate: a
  ring's NVLink hops carry part of them), each over the design's longest path
  (``worst_case_switch_hops + 1`` links);
- flows: one per rank for rings and trees, ``ranks - 1`` per rank for all_to_all;
- a replay costs the longest link's round trip (cable and switch each way) plus one frame; a
  go-back-N two round trips of the longest path; a timer NCCL's RC timeout
  (:data:`~fabricplan.analytic.lossless.RC_RETRANSMIT_TIMEOUT_NS`) for an RC receiver, the
  UET estimate (:data:`~fabricplan.analytic.lossless.UET_RETRANSMIT_TIMEOUT_NS`) for an
  unordered transport.

Nothing is added within one NVLink domain. The training step (:mod:`.step`) charges every
collective it times the same delay (:func:`collective_link_error_us`, over the collective's own
group), and every pipeline send between stages in different NVLink domains the same law over
the send's own frames and path (:func:`send_link_error_us`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from fabricplan.analytic.lossless import (
    RC_RETRANSMIT_TIMEOUT_NS,
    UET_RETRANSMIT_TIMEOUT_NS,
    LinkErrorExposure,
    link_error_delay_us,
)
from fabricplan.analytic.profile import FabricProfile, fabric_profile, path_latency_ns
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectivePoint, PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import BYTES_PER_GB_US, ns_to_us, serialization_ns


def _exposure(
    point: CollectivePoint, ranks: int, path_links: int, mtu_bytes: int
) -> LinkErrorExposure:
    per_rank = point.busbw_GBps * point.time_us * BYTES_PER_GB_US
    frames = math.ceil(per_rank / mtu_bytes) if per_rank > 0 else 0
    flows = ranks * (ranks - 1 if point.collective == "all_to_all" else 1)
    return LinkErrorExposure(
        crossings=float(ranks * frames * path_links),
        critical_crossings=float(frames * path_links),
        tail_crossings=float(flows * path_links),
        duration_us=point.time_us,
        path_links=float(path_links),
    )


def link_error_times(profile: FabricProfile, switch_hops: int) -> tuple[float, float, float]:
    """The replay, round trip (of a path of ``switch_hops`` switches) and timer of one fabric,
    µs (see the module docstring).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["uec"]}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "uec"))
    >>> replay, rtt, timer = link_error_times(profile, 3)
    >>> bool(replay < rtt < timer), timer
    (True, 1000.0)
    """
    frame = profile.mtu_bytes + profile.header_bytes
    frame_ns = serialization_ns(frame, profile.link_speed_gbps)
    replay_ns = 2 * (max(profile.cable_ns) + profile.switch_latency_ns) + frame_ns
    rtt_ns = 2 * path_latency_ns(profile, switch_hops, profile.mtu_bytes)
    timer_ns = (
        UET_RETRANSMIT_TIMEOUT_NS
        if profile.delivery == "out_of_order"
        else RC_RETRANSMIT_TIMEOUT_NS
    )
    return ns_to_us(replay_ns), ns_to_us(rtt_ns), ns_to_us(timer_ns)


def collective_link_error_us(profile: FabricProfile, point: CollectivePoint, ranks: int) -> float:
    """Expected delay ``profile.frame_error_ratio`` adds to one collective of ``ranks`` GPUs
    that leaves the NVLink domain, µs (0 at ratio 0).

    >>> from fabricplan.analytic.collective import collective_point
    >>> from fabricplan.analytic.traffic import CommGroup
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> delays = []
    >>> for llr in (False, True):
    ...     valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["uec"],
    ...         "frame_error_ratio": 1e-7, "uec": {"link_level_retry": llr}}})
    ...     profile = fabric_profile(valid, design_fabric(valid, "uec"))
    ...     point = collective_point(profile, CommGroup(1024, 8, 8), "all_reduce", 2**30)
    ...     delays.append(collective_link_error_us(profile, point, 1024))
    >>> lost, replayed = delays
    >>> bool(lost > 500.0 > 1.0 > replayed > 0.0)   # about a UET timer; a few link replays
    True
    """
    ratio = profile.frame_error_ratio
    if ratio <= 0.0:
        return 0.0
    exposure = _exposure(point, ranks, profile.worst_case_switch_hops + 1, profile.mtu_bytes)
    return _expected_delay_us(profile, exposure)


def _expected_delay_us(
    profile: FabricProfile, exposure: LinkErrorExposure, switch_hops: int | None = None
) -> float:
    """:func:`link_error_delay_us` of ``exposure`` with ``profile``'s ratio, retry and times
    (the round trip over ``switch_hops`` switches, the design's longest path by default)."""
    hops = profile.worst_case_switch_hops if switch_hops is None else switch_hops
    replay_us, rtt_us, timer_us = link_error_times(profile, hops)
    return link_error_delay_us(
        profile.frame_error_ratio,
        exposure,
        profile.link_level_retry,
        profile.delivery,
        replay_us,
        rtt_us,
        timer_us,
    )


def send_link_error_us(
    profile: FabricProfile,
    size_bytes: float,
    senders: int,
    switch_hops: int,
    duration_us: float,
) -> float:
    """Expected delay ``profile.frame_error_ratio`` adds to one point-to-point send, µs: the
    law of :func:`collective_link_error_us` over the send's own frames. ``senders`` ranks
    each send ``size_bytes`` at once (a pipeline stage's TP ranks) over a path of
    ``switch_hops`` switches (``switch_hops + 1`` links) in ``duration_us`` clean; the send
    waits for its slowest rank (one rank's frames are the critical flow) and each rank's last
    frame, which no later frame reveals, is the tail.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> delays = []
    >>> for llr in (False, True):
    ...     valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["uec"],
    ...         "frame_error_ratio": 1e-6, "uec": {"link_level_retry": llr}}})
    ...     profile = fabric_profile(valid, design_fabric(valid, "uec"))
    ...     delays.append(send_link_error_us(profile, 2**24, 8, 3, 400.0))
    >>> lost, replayed = delays
    >>> # 8 x 4,096 frames x 4 links x 1e-6: 0.13 losses, each found by the 1 ms UET timer
    >>> bool(lost > 50.0 > 1.0 > replayed > 0.0)   # or the critical rank's few link replays
    True
    """
    if profile.frame_error_ratio <= 0.0 or size_bytes <= 0 or senders <= 0:
        return 0.0
    links = switch_hops + 1
    frames = math.ceil(size_bytes / profile.mtu_bytes)
    exposure = LinkErrorExposure(
        crossings=float(senders * frames * links),
        critical_crossings=float(frames * links),
        tail_crossings=float(senders * links),
        duration_us=duration_us,
        path_links=float(links),
    )
    return _expected_delay_us(profile, exposure, switch_hops)


def traffic_link_error_us(
    profile: FabricProfile, src: ArrayLike, size_bytes: ArrayLike, duration_us: float
) -> float:
    """Expected delay ``profile.frame_error_ratio`` adds to a run of flows (``src`` and
    ``size_bytes`` per flow) that took ``duration_us`` clean, µs: the exposure of the
    nccl-tests rows (:func:`collective_link_error_us`) counted from the flows themselves:
    every flow's frames over the longest path, the busiest sender's frames as the critical
    flow, one last frame per flow.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["uec"],
    ...     "frame_error_ratio": 1e-5}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "uec"))
    >>> delay = traffic_link_error_us(profile, [0, 1], [2**20, 2**20], 100.0)
    >>> bool(0.0 < delay < 1000.0)   # a timer, but only if a frame is lost: 2 x 256 x 3 x 1e-5
    True
    >>> traffic_link_error_us(profile, [], [], 100.0)
    0.0
    """
    ratio = profile.frame_error_ratio
    sizes = np.asarray(size_bytes, dtype=np.float64)
    if ratio <= 0.0 or sizes.size == 0:
        return 0.0
    links = profile.worst_case_switch_hops + 1
    frames = np.ceil(sizes / profile.mtu_bytes)
    per_sender = np.bincount(np.asarray(src, dtype=np.int64), weights=frames)
    exposure = LinkErrorExposure(
        crossings=float(frames.sum()) * links,
        critical_crossings=float(per_sender.max()) * links,
        tail_crossings=float(sizes.size * links),
        duration_us=duration_us,
        path_links=float(links),
    )
    return _expected_delay_us(profile, exposure)


def with_link_errors(
    valid: ValidScenario, design: FabricDesign, performance: PerformanceResult, request: PerfRequest
) -> PerformanceResult:
    """``performance`` with the expected delay of ``fabric.frame_error_ratio`` on every
    nccl-tests row that leaves the NVLink domain, and a note (unchanged at ratio 0).

    Examples
    --------
    >>> from fabricplan.analytic.performance import analytic_performance
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> spec = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["uec"],
    ...     "frame_error_ratio": 1e-7}}
    >>> request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**30,), p2p=False,
    ...     step=False)
    >>> times = []
    >>> for llr in (False, True):
    ...     spec["fabric"]["uec"] = {"link_level_retry": llr}
    ...     valid = parse_spec(spec)
    ...     design = design_fabric(valid, "uec")
    ...     clean = analytic_performance(valid, design, request)
    ...     times.append(with_link_errors(valid, design, clean, request).collectives[0].time_us
    ...         - clean.collectives[0].time_us)
    >>> lost, replayed = times
    >>> bool(lost > 500.0 > 1.0 > replayed > 0.0)   # about a UET timer; a few link replays
    True
    """
    ratio = valid.spec.fabric.frame_error_ratio
    if ratio <= 0.0 or not performance.collectives:
        return performance
    profile = fabric_profile(valid, design, request)
    ranks = request.gpus or valid.spec.cluster.gpus
    if ranks <= profile.nvlink_domain_gpus:
        return performance
    replay_us, rtt_us, timer_us = link_error_times(profile, profile.worst_case_switch_hops)
    points = []
    for point in performance.collectives:
        time = point.time_us + collective_link_error_us(profile, point, ranks)
        scale = point.time_us / time if time > 0 else 1.0
        points.append(
            point.model_copy(
                update={
                    "time_us": time,
                    "algbw_GBps": point.algbw_GBps * scale,
                    "busbw_GBps": point.busbw_GBps * scale,
                }
            )
        )
    largest = max(zip(performance.collectives, points, strict=True), key=lambda x: x[0].size_bytes)
    before, after = largest
    how = (
        f"each corrupted frame is replayed by its link (LLR: {replay_us:.2f} µs)"
        if profile.link_level_retry
        else (
            f"each corrupted frame is dropped and recovered end to end ({profile.delivery}:"
            f" timer {timer_us:,.0f} µs"
            + ("" if profile.delivery == "out_of_order" else f", go-back-N {2 * rtt_us:.1f} µs")
            + ")"
        )
    )
    note = (
        f"link errors: {ratio:g} of frames corrupted per link (fabric.frame_error_ratio); {how};"
        f" {before.collective} {before.size_bytes:,} B {before.time_us:,.1f} ->"
        f" {after.time_us:,.1f} µs (expected); the training step's collectives and pipeline"
        " sends are charged the same way"
    )
    return performance.model_copy(
        update={"collectives": tuple(points), "notes": (*performance.notes, note)}
    )
