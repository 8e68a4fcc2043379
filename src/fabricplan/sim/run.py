"""One named traffic pattern on one technology's designed fabric, at a chosen level.

:func:`run_pattern` is what ``fabricplan simulate`` (and any other caller: backends, sweeps,
the web app) runs: it designs the fabric, applies failed switches, runs the pattern once per
seed (children of one :class:`numpy.random.SeedSequence`, :func:`~fabricplan.sim.seed.
spawn_seeds`), each with its own random failed cables, at the ``flow`` or ``packet`` level,
or answers a collective pattern from the ``analytic`` model, and returns a
:class:`PatternRun` whose :meth:`~PatternRun.record` is the JSON the command prints.

:func:`simulated_backend` gives the flow or packet level's answer to the performance seam
(:mod:`fabricplan.sim.performance`), for :mod:`fabricplan.backends`.

Both levels (numba kernels) are imported only when a run at that level is asked for; what a
run is asked for (:class:`RunOptions`, the names) is :mod:`fabricplan.sim.run_options`, which
imports neither.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 32}, "fabric": {"technologies": ["roce_v2"]}})
>>> run = run_pattern(valid, "roce_v2", "flow", RunOptions(pattern="permutation",
...     size_bytes=2**20, seeds=2))
>>> len(run.seeds), run.record()["backend"], run.record()["flows"]
(2, 'flow', 32)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from fabricplan.analytic.link_error import traffic_link_error_us
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import fabric_profile, nvlink_domain_gpus
from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import CollectiveName, PerformanceResult, PerfRequest
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.failure import fail_random_cables, switch_vertex
from fabricplan.sim.mechanism import CONGESTION_CONTROLS, CongestionControl
from fabricplan.sim.memory import (
    available_memory_bytes,
    check_performance_memory,
    check_run_memory,
)
from fabricplan.sim.pattern import scenario_traffic
from fabricplan.sim.run_options import (
    LEVELS,
    RunOptions,
    SimLevel,
)
from fabricplan.sim.seed import spawn_seeds
from fabricplan.sim.sense import RunFacts, check_fabric_traffic, check_finished, check_run
from fabricplan.sim.traffic import GpuLayout, Traffic
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import FabricGraph, fabric_graph, with_failures
from fabricplan.units import gbps_to_bytes_per_us

if TYPE_CHECKING:
    from fabricplan.sim.flow.transport import TransportSpec

ANALYTIC_PATTERNS: dict[str, CollectiveName] = {
    "all_to_all": "all_to_all",
    "ring_all_reduce": "all_reduce",
    "tree_all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
}
"""Patterns the analytic model answers, and their collective."""

RunProgress = Callable[[str, float], None]
"""Called with a run's label and the share of its bytes delivered so far."""


@dataclass(frozen=True, eq=False)
class PatternRun:
    """The runs of one pattern on one technology at one level."""

    level: SimLevel
    technology: TechnologyName
    options: RunOptions
    seeds: tuple[int, ...]
    results: tuple[Any, ...]
    """One :class:`~fabricplan.sim.flow.result.FlowSimResult` or
    :class:`~fabricplan.sim.packet.result.PacketSimResult` per seed (none at the analytic
    level)."""
    analytic: PerformanceResult | None = None
    wall_s: float = 0.0
    link_error_us: tuple[float, ...] = ()
    """The flow level's expected delay of ``fabric.frame_error_ratio`` per seed (empty at ratio
    0 and at the packet level, which corrupts its frames itself), added to each completion."""

    @property
    def completions_us(self) -> np.ndarray:
        """Completion of every run (nan for a packet run that did not finish), with the flow
        level's expected link-error delay."""
        done = np.array([r.completion_us for r in self.results], dtype=np.float64)
        return done + np.asarray(self.link_error_us) if self.link_error_us else done

    def record(self) -> dict[str, Any]:
        """The JSON record: the first run's summary, the spread over seeds, jobs and failures."""
        options = self.options
        if self.analytic is not None:
            point = self.analytic.collectives[0]
            return {
                "backend": "analytic",
                "technology": self.technology,
                "pattern": options.pattern,
                "size_bytes": options.size_bytes,
                "completion_us": point.time_us,
                "fct_us": None,
                "flows": None,
                "wall_s": self.wall_s,
                "algorithm": point.algorithm,
                "busbw_GBps": point.busbw_GBps,
                "notes": list(self.analytic.notes),
            }
        done = self.completions_us
        errors = {}
        if self.link_error_us:
            errors = {"completion_us": float(done[0]), "link_error_us": self.link_error_us[0]}
        return {
            "pattern": options.pattern,
            "size_bytes": options.size_bytes,
            **self.results[0].stats().model_dump(),
            **errors,
            "seeds": {
                "parent": options.seed,
                "seeds": list(self.seeds),
                "completion_us": {
                    "min": float(np.nanmin(done)),
                    "p50": float(np.nanpercentile(done, 50)),
                    "max": float(np.nanmax(done)),
                },
            },
            "jobs": {"count": options.jobs, "placement": options.placement},
            "failed": {"cables": options.fail_links, "switches": list(options.fail_switches)},
        }


def _graph(valid: ValidScenario, design: FabricDesign, options: RunOptions) -> FabricGraph:
    graph = fabric_graph(design, valid)
    if options.fail_switches:
        switches = [switch_vertex(graph, name) for name in options.fail_switches]
        graph = with_failures(graph, switches=switches)
    return graph


def _traffic(valid: ValidScenario, options: RunOptions, seed: int, payload_share: float) -> Traffic:
    cluster = valid.spec.cluster
    return scenario_traffic(
        options.pattern,
        GpuLayout(
            cluster.gpus,
            cluster.gpus_per_node,
            cluster.nics_per_node,
            nvlink_domain_gpus(valid.node, cluster.gpus_per_node, cluster.host.nvlink_domain_gpus),
        ),
        options.size_bytes,
        seed,
        jobs=options.jobs,
        placement=options.placement,
        senders=options.senders,
        workload=valid.spec.workload,
        qps=options.qps,
        background_load=options.background_load,
        background_us=options.background_us,
        nic_bytes_per_us=gbps_to_bytes_per_us(cluster.nic_speed_gbps) * payload_share,
    )


def _analytic(
    valid: ValidScenario, technology: TechnologyName, options: RunOptions
) -> PerformanceResult:
    pattern = options.pattern
    if pattern not in ANALYTIC_PATTERNS:
        raise ModelError(
            "FP535",
            "--pattern",
            "has no analytic model",
            pattern,
            f"use --backend flow or one of {', '.join(ANALYTIC_PATTERNS)}",
        )
    if options.size_bytes is None:
        raise ModelError(
            "FP533", "--size", f"pattern {pattern} needs a size", None, "give --size, e.g. 64M"
        )
    request = PerfRequest(
        collectives=(ANALYTIC_PATTERNS[pattern],),
        sizes_bytes=(options.size_bytes,),
        p2p=False,
        step=False,
        seed=options.seed,
    )
    return analytic_performance(valid, design_fabric(valid, technology), request)


def _host_links(level: SimLevel, result: Any) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the links out of hosts and into hosts."""
    if level == "flow":
        tier = result.graph.link_tier
        return tier == 0, tier == 1
    net = result.network
    return net.link_src < net.hosts, net.link_dst < net.hosts


def run_facts(level: SimLevel, result: Any) -> RunFacts:
    """What a flow or packet result says, for :func:`fabricplan.sim.sense.check_run`."""
    out_of_hosts, into_hosts = _host_links(level, result)
    traffic = result.traffic
    if level == "flow":
        carried = result.link_bytes
        delivered = float(carried[into_hosts].sum())
        rates = result.link_capacity_bytes_per_us[out_of_hosts]
    else:
        carried = result.link_tx_bytes.astype(np.float64)
        delivered = float(result.counters["delivered_bytes"])
        speeds = result.network.link_speed_gbps[out_of_hosts]
        rates = np.array([gbps_to_bytes_per_us(float(g)) for g in speeds])
    return RunFacts(
        flows=traffic.flows,
        traffic_bytes=float(traffic.total_bytes),
        sent_bytes=float(carried[out_of_hosts].sum()),
        delivered_bytes=delivered,
        flow_bytes=np.asarray(traffic.size_bytes, dtype=np.float64),
        start_us=result.start_us,
        finish_us=result.finish_us,
        step_start_us=result.step_start_us,
        step_finish_us=result.step_finish_us,
        link_utilisation=result.utilisation(),
        line_rate_bytes_per_us=float(rates.max(initial=0.0)),
    )


def checked(level: SimLevel, result: Any) -> Any:
    """``result`` once it passed the sense checks (FP1401 unfinished, FP1402 broken)."""
    if level == "packet":
        unfinished = int(np.isnan(result.finish_us).sum())
        check_finished(result.status, unfinished, result.traffic.flows, result.end_us)
    check_run(level, run_facts(level, result))
    return result


def _expected(traffic: Traffic, spec: Any, graph: FabricGraph) -> str:
    """A packet run's packets and estimated CPU time, for its progress label."""
    from fabricplan.sim.flow.duration import format_seconds
    from fabricplan.sim.packet.duration import packet_run_seconds, path_links

    packets = int(traffic.packet_counts(spec.mtu_bytes).sum())
    seconds = packet_run_seconds(packets, path_links(graph.tiers))
    return f", {packets:,} packets, estimated {format_seconds(seconds)} of CPU"


def _check_memory(valid: ValidScenario, level: SimLevel, options: RunOptions) -> None:
    """Refuse, before anything is allocated, a run whose estimated memory exceeds the limit."""
    limit, source = options.max_memory_bytes, "--max-memory"
    if limit is None:
        limit, source = available_memory_bytes(), "the memory this machine has available"
    check_run_memory(
        level,
        options.pattern,
        valid.spec.cluster.gpus,
        options.qps,
        valid.spec.workload.ep,
        limit,
        source,
        options.jobs,
    )


def _flow_congestion(options: RunOptions) -> CongestionControl | None:
    cc = options.congestion_control
    if cc is None:
        return None
    for allowed in CONGESTION_CONTROLS:
        if cc == allowed:
            return allowed
    raise ModelError(
        "FP537",
        "--cc",
        "is not one of the allowed values",
        cc,
        f"use one of {', '.join(CONGESTION_CONTROLS)}",
    )


def run_pattern(
    valid: ValidScenario,
    technology: TechnologyName,
    level: SimLevel,
    options: RunOptions,
    progress: RunProgress | None = None,
) -> PatternRun:
    """Run ``options.pattern`` on ``technology``'s designed fabric at ``level``.

    Parameters
    ----------
    valid
        The validated scenario (cluster, workload, catalog entries).
    technology
        One of the scenario's technologies.
    level
        ``flow`` (fluid), ``packet`` (mechanisms packet by packet) or ``analytic``
        (collective patterns only, one answer).
    options
        Pattern, size, seeds, jobs, overrides and failures.
    progress
        Told each run's label and share of bytes delivered.

    Returns
    -------
    PatternRun
        One result per seed; :meth:`PatternRun.record` is the JSON summary.

    Raises
    ------
    ModelError
        FP533/FP535/FP537 for options the level cannot run; FP544 for a fabric too large
        for the packet level; FP1403 for a run whose estimated memory exceeds the limit
        (:mod:`fabricplan.sim.memory`), FP660 for a packet run whose tables would; FP1400
        for traffic that never leaves the NVLink domain, FP1401 for a packet run that did not
        finish, FP1402 for an answer that fails a sense check (:mod:`fabricplan.sim.sense`).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": ["roce_v2"]}})
    >>> r = run_pattern(valid, "roce_v2", "analytic",
    ...     RunOptions(pattern="ring_all_reduce", size_bytes=2**20))
    >>> r.record()["backend"], r.results
    ('analytic', ())
    """
    started = time.perf_counter()
    if level == "analytic":
        result = _analytic(valid, technology, options)
        wall = time.perf_counter() - started
        return PatternRun(level, technology, options, (options.seed,), (), result, wall)
    seeds = spawn_seeds(options.seed, options.seeds)
    design = design_fabric(valid, technology)
    graph = _graph(valid, design, options)
    if level == "packet":
        from fabricplan.sim.packet.performance import (
            check_size,
            network_for_graph,
            packet_spec_for_design,
            with_lossless_settings,
        )
        from fabricplan.sim.packet.simulation import simulate_packet

        check_size(graph)
        asked = packet_spec_for_design(
            valid, technology, options.routing, options.congestion_control
        )
        # The deployed lossless configuration (fabric.lossless), as packet_performance runs it;
        # a congestion control named on the command line stays what was asked.
        spec = with_lossless_settings(asked, valid)
        if options.congestion_control is not None:
            spec = replace(spec, congestion_control=asked.congestion_control, ecn=asked.ecn)
        share = spec.mtu_bytes / (spec.mtu_bytes + spec.header_bytes)
    else:
        from fabricplan.sim.flow.fluid import simulate
        from fabricplan.sim.flow.transport import transport_for, with_go_back_n

        tech = valid.technologies[technology]
        frame_bytes = tech.mtu_bytes + tech.header_bytes.value
        base: TransportSpec = transport_for(
            tech,
            valid.switches[technology],
            routing=options.routing,
            congestion_control=_flow_congestion(options),
        )
        # Paced patterns offer the payload rate of the contended law; each run's go-back-N
        # share then comes from its own traffic (with_go_back_n).
        share = with_go_back_n(base, graph, frame_bytes).payload_share
    _check_memory(valid, level, options)
    results: list[Any] = []
    for seed in seeds:
        fabric = (
            fail_random_cables(graph, options.fail_links, seed) if options.fail_links else graph
        )
        traffic = _traffic(valid, options, seed, share)
        check_fabric_traffic(level, traffic.flows, options.pattern, valid.spec.cluster.gpus)
        expected = _expected(traffic, spec, graph) if level == "packet" else ""
        label = f"{technology} {options.pattern} seed {seed} ({level}{expected})"

        def told(done: float, label: str = label) -> None:
            if progress is not None:
                progress(label, done)

        if level == "packet":
            network = network_for_graph(fabric, valid, technology)
            run: Any = simulate_packet(
                network,
                traffic,
                spec,
                seed=seed,
                progress=told,
                max_memory_bytes=options.max_memory_bytes,
            )
        else:
            transport = with_go_back_n(base, fabric, frame_bytes, traffic)
            run = simulate(fabric, traffic, transport, seed, options.tolerance, progress=told)
        results.append(checked(level, run))
    errors: tuple[float, ...] = ()
    if level == "flow" and valid.spec.fabric.frame_error_ratio > 0.0:
        # As compare's flow rows (analytic.link_error.with_link_errors): the expected delay.
        profile = fabric_profile(valid, design)
        errors = tuple(
            traffic_link_error_us(profile, r.traffic.src, r.traffic.size_bytes, r.completion_us)
            for r in results
        )
    wall = time.perf_counter() - started
    return PatternRun(level, technology, options, seeds, tuple(results), None, wall, errors)


def compile_kernels(level: Literal["flow", "packet"]) -> float:
    """Compile ``level``'s numba kernels (or load them from the disk cache) by running them once
    on a case too small to take time of its own, so that a command can show the compilation's
    progress before the real run (:func:`fabricplan.sim.kernel_cache.watching_compilation`).

    Parameters
    ----------
    level
        ``flow`` (the max-min solver) or ``packet`` (the event loop and its components: a
        100 kB transfer between the two hosts of a one-switch star).

    Returns
    -------
    float
        Seconds it took (about 40 for the packet level the first time, well under one later).

    Examples
    --------
    >>> compile_kernels("flow") >= 0.0
    True
    """
    started = time.perf_counter()
    if level == "packet":
        from fabricplan.sim.packet.network import star
        from fabricplan.sim.packet.simulation import simulate_packet
        from fabricplan.sim.packet.spec import packet_spec
        from fabricplan.sim.traffic import incast

        simulate_packet(
            star(2), incast(GpuLayout(2, 1, 1), 1, 100_000), packet_spec("pfc", "dcqcn", "ecmp")
        )
    else:
        from fabricplan.sim.flow.solver import add_along_paths, maxmin_rates

        paths = np.array([[0, 1], [1, -1]], dtype=np.int32)
        active = np.arange(2, dtype=np.int64)
        maxmin_rates(paths, active, np.ones(2), hol=True)
        add_along_paths(paths, active, np.ones(2), np.zeros(2))
    return time.perf_counter() - started


def simulated_backend(
    level: Literal["flow", "packet"],
    valid: ValidScenario,
    design: FabricDesign,
    request: PerfRequest,
) -> PerformanceResult:
    """The performance seam's answer of the flow or packet level.

    Parameters
    ----------
    level
        ``flow`` or ``packet``.
    valid, design, request
        As :meth:`fabricplan.backends.Backend.perform` receives them.

    Returns
    -------
    PerformanceResult
        nccl-tests-like tables (:func:`fabricplan.sim.performance.simulated_performance`).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": ["roce_v2"]}})
    >>> design = design_fabric(valid, "roce_v2")
    >>> simulated_backend("flow", valid, design, PerfRequest(collectives=("all_reduce",),
    ...     sizes_bytes=(2**20,), p2p=False, step=False)).backend
    'flow'
    """
    if level == "packet":
        from fabricplan.sim.packet.performance import PACKET_MAX_FLOWS

        budget = PACKET_MAX_FLOWS
    else:
        from fabricplan.sim.flow.performance import FLOW_MAX_FLOWS

        budget = FLOW_MAX_FLOWS
    check_performance_memory(  # before the graph and the flows are built
        level,
        request.gpus or valid.spec.cluster.gpus,
        request.collectives,
        valid.spec.nccl.qps_per_connection or 1,
        budget,
        available_memory_bytes(),
    )
    if level == "packet":
        from fabricplan.sim.packet.performance import packet_performance

        return packet_performance(valid, design, request)
    from fabricplan.sim.flow.performance import flow_performance

    return flow_performance(valid, design, request)


__all__ = [
    "ANALYTIC_PATTERNS",
    "LEVELS",
    "PatternRun",
    "RunOptions",
    "RunProgress",
    "SimLevel",
    "compile_kernels",
    "run_pattern",
    "simulated_backend",
]
