"""One named traffic pattern on a technology's designed fabric, at the flow or packet level.

``fabricplan simulate`` and the web app's simulation jobs both run scenarios through here: the
fabric is designed, failures applied (random cables drawn from each seed, named switches), the
pattern built for every seed and simulated; the record is the first seed's summary plus the spread
of completion times over the seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.flow.failure import fail_random_cables, switch_vertex
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.pattern import PatternName, scenario_traffic
from fabricplan.sim.flow.routing import bytes_per_us
from fabricplan.sim.flow.traffic import GpuLayout, Placement
from fabricplan.sim.flow.transport import CongestionControl, RoutingName, transport_for
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import fabric_graph, with_failures

RunProgress = Callable[[str, float], None]
"""Told ``(label of the run, share of its bytes delivered)`` as each seed's run goes; it may raise
to stop the run (the web app cancels a job so)."""


def _labelled(progress: RunProgress | None, label: str) -> Callable[[float], None] | None:
    if progress is None:
        return None
    return lambda done: progress(label, done)


@dataclass(frozen=True)
class ScenarioOptions:
    """What the flow backend runs, from the command line."""

    pattern: PatternName
    size_bytes: int | None
    seeds: list[int]
    routing: RoutingName | None
    congestion_control: CongestionControl | None
    senders: int | None
    jobs: int
    placement: Placement
    qps: int
    background_load: float
    background_us: float
    fail_links: int
    fail_switches: list[str]
    tolerance: float


def flow_record(
    valid: ValidScenario,
    tech: TechnologyName,
    options: ScenarioOptions,
    progress: RunProgress | None = None,
) -> dict[str, Any]:
    """One technology's flow-level run of the options' pattern over every seed (``simulate``'s
    JSON record)."""
    design = design_fabric(valid, tech)
    graph = fabric_graph(design, valid)
    if options.fail_switches:
        graph = with_failures(
            graph, switches=[switch_vertex(graph, name) for name in options.fail_switches]
        )
    cluster = valid.spec.cluster
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    transport = transport_for(
        valid.technologies[tech],
        valid.switches[tech],
        routing=options.routing,
        congestion_control=options.congestion_control,
    )
    nic_rate = float(bytes_per_us(cluster.nic_speed_gbps)) * transport.payload_share
    runs = []
    for seed in options.seeds:
        fabric = (
            fail_random_cables(graph, options.fail_links, seed) if options.fail_links else graph
        )
        traffic = scenario_traffic(
            options.pattern,
            layout,
            options.size_bytes,
            seed,
            jobs=options.jobs,
            placement=options.placement,
            senders=options.senders,
            workload=valid.spec.workload,
            qps=options.qps,
            background_load=options.background_load,
            background_us=options.background_us,
            nic_bytes_per_us=nic_rate,
        )
        runs.append(
            simulate(
                fabric,
                traffic,
                transport,
                seed,
                options.tolerance,
                progress=_labelled(progress, f"{tech} {options.pattern} seed {seed}"),
            )
        )
    stats = runs[0].stats()
    record: dict[str, Any] = {
        "pattern": options.pattern,
        "size_bytes": options.size_bytes,
        **stats.model_dump(),
    }
    completions = np.array([r.completion_us for r in runs])
    record["seeds"] = {
        "seeds": options.seeds,
        "completion_us": {
            "min": float(completions.min()),
            "p50": float(np.percentile(completions, 50)),
            "max": float(completions.max()),
        },
    }
    record["jobs"] = {"count": options.jobs, "placement": options.placement}
    record["failed"] = {"cables": options.fail_links, "switches": options.fail_switches}
    return record


def packet_record(
    valid: ValidScenario,
    tech: TechnologyName,
    options: ScenarioOptions,
    progress: RunProgress | None = None,
) -> dict[str, Any]:
    """The same scenario as :func:`flow_record`, packet by packet."""
    from fabricplan.sim.packet.scenario import packet_scenario

    graph = fabric_graph(design_fabric(valid, tech), valid)
    if options.fail_switches:
        graph = with_failures(
            graph, switches=[switch_vertex(graph, name) for name in options.fail_switches]
        )
    runs = []
    for seed in options.seeds:
        fabric = (
            fail_random_cables(graph, options.fail_links, seed) if options.fail_links else graph
        )
        label = f"{tech} {options.pattern} seed {seed} (packet)"
        runs.append(
            packet_scenario(
                valid,
                tech,
                fabric,
                options.pattern,
                options.size_bytes,
                seed,
                routing=options.routing,
                congestion_control=options.congestion_control,
                senders=options.senders,
                jobs=options.jobs,
                placement=options.placement,
                qps=options.qps,
                background_load=options.background_load,
                background_us=options.background_us,
                progress=_labelled(progress, label),
            )
        )
    record: dict[str, Any] = {
        "pattern": options.pattern,
        "size_bytes": options.size_bytes,
        **runs[0].stats().model_dump(),
    }
    completions = np.array([r.completion_us for r in runs])
    record["seeds"] = {
        "seeds": options.seeds,
        "completion_us": {
            "min": float(np.nanmin(completions)),
            "p50": float(np.nanpercentile(completions, 50)),
            "max": float(np.nanmax(completions)),
        },
    }
    record["jobs"] = {"count": options.jobs, "placement": options.placement}
    record["failed"] = {"cables": options.fail_links, "switches": options.fail_switches}
    return record
