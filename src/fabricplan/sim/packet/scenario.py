"""One named traffic pattern on a scenario's designed fabric, packet by packet (what
``fabricplan simulate --backend packet`` runs): the same traffic objects as the flow level
(:func:`fabricplan.sim.flow.pattern.scenario_traffic`), the technology's mechanisms from the
catalog, optional overrides of routing and congestion control.
"""

from __future__ import annotations

from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.sim.flow.pattern import PatternName, scenario_traffic
from fabricplan.sim.flow.routing import bytes_per_us
from fabricplan.sim.flow.traffic import GpuLayout, Placement
from fabricplan.sim.packet.performance import (
    check_size,
    network_for_graph,
    packet_spec_for_design,
)
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import Progress, simulate_packet
from fabricplan.sim.packet.spec import PacketCongestionControl, PacketRouting
from fabricplan.topology.graph import FabricGraph

PACKET_CONGESTION_CONTROLS: tuple[PacketCongestionControl, ...] = ("none", "dcqcn", "hpcc", "ib_cc")
"""Congestion controls the packet backend runs (``--cc``)."""


def packet_scenario(
    valid: ValidScenario,
    technology: TechnologyName,
    graph: FabricGraph,
    pattern: PatternName,
    size_bytes: float | None,
    seed: int,
    *,
    routing: PacketRouting | None = None,
    congestion_control: PacketCongestionControl | None = None,
    senders: int | None = None,
    jobs: int = 1,
    placement: Placement = "packed",
    qps: int = 1,
    background_load: float = 0.0,
    background_us: float = 0.0,
    progress: Progress | None = None,
) -> PacketSimResult:
    """Simulate ``pattern`` on ``graph`` (the scenario's designed fabric, maybe with failures).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": ["infiniband"]}})
    >>> graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
    >>> r = packet_scenario(valid, "infiniband", graph, "permutation", 2**20, seed=0)
    >>> r.status, r.counters["drops"], r.spec.link_flow_control
    ('done', 0, 'credit')
    """
    check_size(graph)
    spec = packet_spec_for_design(valid, technology, routing, congestion_control)
    cluster = valid.spec.cluster
    layout = GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)
    share = spec.mtu_bytes / (spec.mtu_bytes + spec.header_bytes)
    traffic = scenario_traffic(
        pattern,
        layout,
        size_bytes,
        seed,
        jobs=jobs,
        placement=placement,
        senders=senders,
        workload=valid.spec.workload,
        qps=qps,
        background_load=background_load,
        background_us=background_us,
        nic_bytes_per_us=float(bytes_per_us(cluster.nic_speed_gbps)) * share,
    )
    network = network_for_graph(graph, valid, technology)
    return simulate_packet(network, traffic, spec, seed=seed, progress=progress)
