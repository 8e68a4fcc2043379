"""The mechanisms a technology moves bytes with, as both simulation levels name them.

Routing (``static`` destination tables, ``ecmp`` per-flow 5-tuple hash, ``flowlet`` the hash
re-drawn after an idle gap, ``adaptive`` per-packet choice of the least-loaded output, ``spray``
per-packet or per-cell spraying), link-level flow control (``credit``, ``pfc``, ``scheduled``
VOQ admission, ``none``) and congestion control. Nothing here names a technology: each comes
from the technology's entry in the catalog and from what its switch can do. A level that does
not model one of these names refuses it with FP538 (:func:`refuse_unmodelled`).

>>> from fabricplan.spec import parse_spec
>>> valid = parse_spec({"cluster": {"gpus": 256}})
>>> [default_routing(valid.technologies[t], valid.switches[t]) for t in valid.technologies]
['adaptive', 'ecmp']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from fabricplan.errors import ModelError

if TYPE_CHECKING:  # the names below are read by `simulate --help`, which imports no model
    from fabricplan.model.hardware import SwitchSpec, TechnologySpec
    from fabricplan.model.load_balancing import AdaptiveRouting

RoutingName = Literal["static", "ecmp", "adaptive", "spray", "flowlet"]
CongestionControl = Literal["none", "dcqcn", "ib_cc", "spectrum_x_cc", "uec_nscc", "voq_scheduled"]
LinkFlowControl = Literal["credit", "pfc", "none", "scheduled"]
# The catalog's vocabulary (model.hardware); the flow level models every name, the packet level
# refuses the ones it has no model of yet (FP538, ``refuse_unmodelled``).

ROUTING_NAMES: tuple[RoutingName, ...] = get_args(RoutingName)
CONGESTION_CONTROLS: tuple[CongestionControl, ...] = get_args(CongestionControl)


def adaptive_routing_of(switch: SwitchSpec) -> AdaptiveRouting:
    """The adaptive-routing implementation of ``switch`` (by its catalog ASIC): the records,
    their limits and sources are :mod:`fabricplan.model.load_balancing` (the analytic level,
    a layer below the simulators, reads them too).

    Parameters
    ----------
    switch
        A catalog or generic switch.

    Returns
    -------
    AdaptiveRouting
        Its implementation, efficiency and the source of the efficiency.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> [adaptive_routing_of(valid.switches[t]).efficiency for t in valid.technologies]
    [0.77, 0.77]
    """
    from fabricplan.model.load_balancing import adaptive_routing_for_asic

    return adaptive_routing_for_asic(switch.asic)


@dataclass(frozen=True)
class SimulatedMechanisms:
    """A technology's flow control and congestion control in the simulators' vocabulary."""

    link_flow_control: LinkFlowControl
    congestion_control: CongestionControl


def simulated_mechanisms(tech: TechnologySpec) -> SimulatedMechanisms:
    """The technology's mechanisms as the simulators name them; FP538 for one they do not model.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> simulated_mechanisms(valid.technologies["infiniband"])
    SimulatedMechanisms(link_flow_control='credit', congestion_control='ib_cc')
    """
    flow_control = tech.link_flow_control
    congestion_control = tech.congestion_control
    if flow_control not in get_args(LinkFlowControl):
        _not_modelled(tech, "link_flow_control", flow_control)
    if congestion_control not in CONGESTION_CONTROLS:
        _not_modelled(tech, "congestion_control", congestion_control)
    return SimulatedMechanisms(flow_control, congestion_control)


def refuse_unmodelled(
    tech: TechnologySpec, field: str, value: str, modelled: tuple[str, ...]
) -> None:
    """FP538 when ``value`` of ``field`` is not among the names one level ``modelled``.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> refuse_unmodelled(valid.technologies["roce_v2"], "routing", "ecmp", ("ecmp",))
    """
    if value not in modelled:
        _not_modelled(tech, field, value)


def _not_modelled(tech: TechnologySpec, field: str, value: str) -> None:
    raise ModelError(
        "FP538",
        f"technology {tech.id}: {field}",
        "the simulators have no model of this mechanism yet",
        value,
        "compare it at the analytic level, or leave it out of fabric.technologies",
    )


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
    if tech.routing not in ROUTING_NAMES:
        _not_modelled(tech, "routing", tech.routing)
    return tech.routing


def placed_routing(routing: RoutingName, switch: SwitchSpec) -> RoutingName:
    """What ``routing`` places on ``switch``: adaptive routing on an ASIC whose implementation
    places flowlets (Broadcom DLB in flowlet mode,
    :attr:`~fabricplan.model.load_balancing.AdaptiveRouting.granularity`) is flowlet switching
    on the switch's own timer; every other routing is itself. Both simulators call it, so a
    flow that never idles longer than the timer is one flowlet, pinned like an ECMP flow, at
    either level.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> switch = valid.switches["roce_v2"]
    >>> tomahawk = switch.model_copy(update={"asic": "Tomahawk 5"})
    >>> placed_routing("adaptive", switch), placed_routing("adaptive", tomahawk)
    ('adaptive', 'flowlet')
    >>> placed_routing("spray", tomahawk)
    'spray'
    """
    if routing == "adaptive" and adaptive_routing_of(switch).granularity == "flowlet":
        return "flowlet"
    return routing
