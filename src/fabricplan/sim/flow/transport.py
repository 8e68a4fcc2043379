"""How a technology moves bytes, as the flow-level model sees it: routing, link-level flow
control, congestion control and the payload share of the line rate.

Nothing here names a technology: a :class:`TransportSpec` is built from the technology's
mechanisms in the catalog (``routing``, ``link_flow_control``, ``congestion_control``, MTU and
header bytes) and from whether the switch can route adaptively.

Congestion control is modelled by its *settling time*: after new flows start, a sender keeps
its line rate until the congestion signal has come back and its rate cuts have brought the
offered load down to the bottleneck's capacity. Each cut multiplies the rate by at most
``decrease_factor`` and cuts are at least ``decrease_period_us`` apart, so an overload ``x``
takes ``ceil(log(x) / log(1 / decrease_factor))`` cuts; before that the fabric behaves as if
there were no congestion control (lossless back-pressure spreads), after it rates are the
max-min fair shares the controller converges to (Zhu et al. 2015, §5).

>>> settle_time_us("dcqcn", overload=64.0, base_rtt_us=4.0)
32.0
>>> settle_time_us("none", overload=64.0, base_rtt_us=4.0)
inf
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.mechanism import (
    CONGESTION_CONTROLS,
    ROUTING_NAMES,
    CongestionControl,
    LinkFlowControl,
    RoutingName,
    adaptive_routing_of,
    default_routing,
    simulated_mechanisms,
)

__all__ = [
    "CONGESTION_CONTROLS",
    "ROUTING_NAMES",
    "CongestionControl",
    "LinkFlowControl",
    "RoutingName",
    "TransportSpec",
    "default_routing",
    "settle_time_us",
    "transport_for",
]

DCQCN_DECREASE_PERIOD_US = 4.0
"""Shortest time between two rate cuts of a DCQCN reaction point: ConnectX
``RATE_REDUCE_MONITOR_PERIOD`` default 4 µs (docs/refs.md C.2)."""
DCQCN_CNP_INTERVAL_US = 4.0
"""Shortest time between two CNPs of a notification point: ConnectX ``MIN_TIME_BETWEEN_CNPS``,
4 µs default per Peng et al. (Barre), USENIX ATC 2025, Table 2 (docs/refs.md C.2)."""
DCQCN_DECREASE_FACTOR = 0.5
"""Largest cut per CNP: the rate becomes ``R(1 - alpha/2)`` with alpha starting at 1
(``INITIAL_ALPHA_VALUE`` 1023/1024), so at most a halving; Zhu et al., "Congestion Control for
Large-Scale RDMA Deployments", SIGCOMM 2015, §4, and ``RPG_MIN_DEC_FAC`` 50 % (docs/refs.md C.2)."""
IB_CC_DECREASE_PERIOD_US = 4.0
"""Time between two injection-rate increases of the congestion-control table index of an
InfiniBand sender (one BECN per marked packet train). Estimate: the IBTA Annex A10 mechanism
reacts per BECN; NVIDIA does not publish its HCA timer defaults, so the DCQCN period is used
until the packet-level model or a measurement says otherwise (Gran et al., "First experiences
with congestion control in InfiniBand hardware", IPDPS 2010, see convergence within tens of
microseconds)."""
IB_CC_DECREASE_FACTOR = 0.5
"""Rate cut per IB CC reaction (estimate, as above: a CCT whose delays double per step)."""

_CC_LAW: dict[CongestionControl, tuple[float, float, float]] = {
    "dcqcn": (DCQCN_DECREASE_PERIOD_US, DCQCN_DECREASE_FACTOR, DCQCN_CNP_INTERVAL_US),
    "ib_cc": (IB_CC_DECREASE_PERIOD_US, IB_CC_DECREASE_FACTOR, 0.0),
}


@dataclass(frozen=True)
class TransportSpec:
    """The mechanisms the fluid model applies to one fabric."""

    routing: RoutingName
    """``static``: destination-based forwarding tables (D-mod-K); ``ecmp``: per-flow 5-tuple
    hash at every switch; ``adaptive``: per-packet adaptive routing, which the fluid model
    treats as a split over the equal-cost paths that delivers ``adaptive_efficiency`` of each
    multi-link trunk; ``spray``: per-packet (or flowlet) spraying over the equal-cost paths,
    an ideal split on a symmetric fabric."""
    link_flow_control: LinkFlowControl
    congestion_control: CongestionControl
    payload_share: float
    """MTU / (MTU + header bytes): the share of the line rate that carries payload."""
    adaptive_efficiency: float = 1.0
    """Share of a loaded multi-link trunk that adaptive routing delivers
    (:func:`fabricplan.sim.mechanism.adaptive_routing_of`); 1 for the other routings."""

    @property
    def lossless(self) -> bool:
        """Hop-by-hop back-pressure (credits or PFC) instead of drops."""
        return self.link_flow_control != "none"


def transport_for(
    tech: TechnologySpec,
    switch: SwitchSpec,
    routing: RoutingName | None = None,
    congestion_control: CongestionControl | None = None,
) -> TransportSpec:
    """The transport of a technology on a switch, with optional overrides.

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> t = transport_for(valid.technologies["roce_v2"], valid.switches["roce_v2"])
    >>> t.routing, t.congestion_control, round(t.payload_share, 3)
    ('ecmp', 'dcqcn', 0.98)
    >>> ib = transport_for(valid.technologies["infiniband"], valid.switches["infiniband"])
    >>> ib.routing, ib.adaptive_efficiency
    ('adaptive', 0.77)
    """
    share = tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)
    chosen = routing or default_routing(tech, switch)
    mechanisms = simulated_mechanisms(tech)
    return TransportSpec(
        routing=chosen,
        link_flow_control=mechanisms.link_flow_control,
        congestion_control=congestion_control or mechanisms.congestion_control,
        payload_share=share,
        adaptive_efficiency=adaptive_routing_of(switch).efficiency if chosen == "adaptive" else 1.0,
    )


def settle_time_us(cc: CongestionControl, overload: float, base_rtt_us: float) -> float:
    """Time congestion control needs to bring an ``overload`` (offered / capacity) down to 1.

    The signal needs one round trip (and the notification interval) to come back; then each
    cut is at most ``decrease_factor``, one per ``decrease_period_us``. ``inf`` without
    congestion control; 0 when nothing is overloaded.

    >>> settle_time_us("dcqcn", 1.0, 4.0), settle_time_us("dcqcn", 2.0, 4.0)
    (0.0, 12.0)
    """
    if cc == "none":
        return math.inf
    if overload <= 1.0:
        return 0.0
    period, factor, interval = _CC_LAW[cc]
    cuts = math.ceil(math.log(overload) / math.log(1.0 / factor) - 1e-12)
    return base_rtt_us + interval + period * cuts
