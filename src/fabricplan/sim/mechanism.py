"""The mechanisms a technology moves bytes with, as both simulation levels name them.

Routing (``static`` destination tables, ``ecmp`` per-flow 5-tuple hash, ``adaptive`` per-packet
choice of the least-loaded output, ``spray`` per-packet spraying), link-level flow control
(``credit``, ``pfc``, ``none``) and congestion control. Nothing here names a technology: each
comes from the technology's entry in the catalog and from what its switch can do.

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [default_routing(valid.technologies[t], valid.switches[t]) for t in valid.technologies]
['adaptive', 'ecmp']
"""

from __future__ import annotations

from typing import Literal, get_args

from fabricplan.model.hardware import SwitchSpec, TechnologySpec

RoutingName = Literal["static", "ecmp", "adaptive", "spray"]
CongestionControl = Literal["none", "dcqcn", "ib_cc"]
LinkFlowControl = Literal["credit", "pfc", "none"]

ROUTING_NAMES: tuple[RoutingName, ...] = get_args(RoutingName)
CONGESTION_CONTROLS: tuple[CongestionControl, ...] = get_args(CongestionControl)


def default_routing(tech: TechnologySpec, switch: SwitchSpec) -> RoutingName:
    """The technology's routing, unless it is adaptive and the switch cannot route adaptively:
    then what the technology's scope forwards with (ECMP for routed IP, static tables else).

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> [default_routing(valid.technologies[t], valid.switches[t]) for t in valid.technologies]
    ['adaptive', 'ecmp']
    """
    if tech.routing == "adaptive" and not (
        switch.adaptive_routing and tech.adaptive_routing_available
    ):
        return "ecmp" if tech.scope == "routed_ip" else "static"
    return tech.routing
