"""The flow-level simulator: fluid max-min rates on every link of the designed fabric.

Build a :class:`~fabricplan.topology.graph.FabricGraph`, some :class:`Traffic` (the shared
floor's, :mod:`fabricplan.sim.traffic`) and a :class:`TransportSpec`, then :func:`simulate`;
see docs/models.md, "Flow-level simulator". Traffic, patterns and failures belong to the shared
floor (:mod:`fabricplan.sim.traffic`, :mod:`fabricplan.sim.pattern`, :mod:`fabricplan.sim.failure`).

>>> from fabricplan.sim.traffic import GpuLayout, ring
>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["infiniband"]}})
>>> graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
>>> transport = transport_for(valid.technologies["infiniband"], valid.switches["infiniband"])
>>> result = simulate(graph, ring(GpuLayout(64, 8, 8), "all_reduce", 2**30), transport)
>>> stats = result.stats()
>>> stats.flows, stats.routing, round(stats.fct_us.p99) > 0
(64, 'adaptive', True)
"""

from __future__ import annotations

from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.result import FlowSimResult, FlowSimStats
from fabricplan.sim.flow.transport import TransportSpec, transport_for

__all__ = ["FlowSimResult", "FlowSimStats", "TransportSpec", "simulate", "transport_for"]
