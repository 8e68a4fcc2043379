"""The flow-level simulator: fluid max-min rates on every link of the designed fabric.

Build a :class:`~fabricplan.topology.graph.FabricGraph`, some :class:`Traffic` (the shared
floor's, :mod:`fabricplan.sim.traffic`) and a :class:`TransportSpec`, then :func:`simulate`;
see docs/models.md, "Flow-level simulator". Traffic, patterns and failures belong to the shared
floor (:mod:`fabricplan.sim.traffic`, :mod:`fabricplan.sim.pattern`, :mod:`fabricplan.sim.failure`).

The names below load on first use: importing a light submodule such as
:mod:`fabricplan.sim.flow.duration` (the analytic ``compare`` asks it for the cluster sizes the
decision tries) must not import the solver and numba (about 0.5 s of start-up).

>>> from fabricplan.sim.flow import simulate, transport_for
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

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabricplan.sim.flow.fluid import simulate
    from fabricplan.sim.flow.result import FlowSimResult, FlowSimStats
    from fabricplan.sim.flow.transport import TransportSpec, transport_for

__all__ = ["FlowSimResult", "FlowSimStats", "TransportSpec", "simulate", "transport_for"]

_HOME = {
    "simulate": "fabricplan.sim.flow.fluid",
    "FlowSimResult": "fabricplan.sim.flow.result",
    "FlowSimStats": "fabricplan.sim.flow.result",
    "TransportSpec": "fabricplan.sim.flow.transport",
    "transport_for": "fabricplan.sim.flow.transport",
}
"""Where each public name lives (PEP 562: ``__getattr__`` imports it when first asked for)."""


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
