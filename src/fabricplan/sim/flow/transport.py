"""How a technology moves bytes, as the flow-level model sees it: routing, link-level flow
control, congestion control, loss recovery and the payload share of the line rate.

Nothing here names a technology: a :class:`TransportSpec` is built from the technology's
mechanisms in the catalog (``routing``, ``link_flow_control``, ``congestion_control``,
``delivery``, ``packet_trimming``, MTU, header and cell bytes) and from what the switch can do
(adaptive routing, trimming, buffer).

Congestion control is modelled by its *settling time*: after new flows start, a sender keeps
its line rate until the congestion signal has come back and its rate cuts have brought the
offered load down to the bottleneck's capacity. Each cut multiplies the rate by at most
``decrease_factor`` and cuts are at least ``decrease_period_us`` apart, so an overload ``x``
takes ``ceil(log(x) / log(1 / decrease_factor))`` cuts; a controller that reads the
bottleneck's load from telemetry (factor 0) reaches it in one cut. Before that the fabric
behaves as if there were no congestion control (lossless back-pressure spreads, a lossy
fabric overflows), after it rates are the max-min fair shares the controller converges to
(Zhu et al. 2015, §5).

>>> settle_time_us("dcqcn", overload=64.0, base_rtt_us=4.0)
32.0
>>> settle_time_us("spectrum_x_cc", overload=64.0, base_rtt_us=4.0)
8.0
>>> settle_time_us("none", overload=64.0, base_rtt_us=4.0)
inf
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from fabricplan.analytic.collision import overtaking_share, overtaking_share_of_delays
from fabricplan.analytic.lossless import PER_PACKET_ROUTINGS
from fabricplan.analytic.profile import VOQ_SCHEDULER_DECISION_NS
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.mechanism import (
    CONGESTION_CONTROLS,
    ROUTING_NAMES,
    CongestionControl,
    LinkFlowControl,
    RoutingName,
    adaptive_routing_of,
    default_routing,
    placed_routing,
    simulated_mechanisms,
)
from fabricplan.sim.traffic import Traffic
from fabricplan.topology.graph import (
    CORE_TO_SPINE,
    LEAF_TO_SPINE,
    SPINE_TO_CORE,
    SPINE_TO_LEAF,
    FabricGraph,
)
from fabricplan.topology.routing import trunk_route
from fabricplan.units import ns_to_us

__all__ = [
    "CONGESTION_CONTROLS",
    "ROUTING_NAMES",
    "CongestionControl",
    "LinkFlowControl",
    "LossRecovery",
    "RoutingName",
    "TransportSpec",
    "cell_payload_share",
    "default_routing",
    "fabric_shared_by_sources",
    "request_grant_us",
    "settle_time_us",
    "transport_for",
    "with_go_back_n",
]

LossRecovery = Literal["ideal", "timeout", "trim_nack"]
"""What a lossy fabric pays for a packet its queue could not hold: ``ideal`` nothing (the
fluid idealisation: rates are max-min and no byte is lost), ``timeout`` the sender's
retransmission timeout, ``trim_nack`` one round trip (the switch trims the packet to its
header, the receiver NACKs it at once, the sender retransmits)."""

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
TELEMETRY_CC_PERIOD_RTTS = 1.0
"""Spectrum-X congestion control: one window update per base round trip, set from the
bottleneck's load carried back in the acknowledgements, so one update reaches the target
(factor 0). Estimate: NVIDIA describes the mechanism (NIC rate control from switch in-band
telemetry; Spectrum-X Network Platform Architecture whitepaper, 2023-05) but publishes no
timers; the figure is the published control law of that class, HPCC (Li et al., "HPCC: High
Precision Congestion Control", SIGCOMM 2019, §3.2: ``W = W / (U / eta) + W_AI`` once per RTT)."""
NSCC_QUICK_ADAPT_PERIOD_RTTS = 1.0
"""UEC NSCC: on heavy congestion (trims or a delay far above target) the sender's "quick adapt"
sets its window to the bytes acknowledged over the last base round trip, one step to the
achieved rate (factor 0); finer fair sharing follows by per-ACK increase and decrease.
The period is the UEC's public reference model's: quick adapt runs once per ``base RTT +
target delay``, on a trim, a loss or a delay above four targets, and sets the window to the
bytes acknowledged in that period (uet-htsim htsim/sim/uec.cpp, ``UecSrc::quick_adapt``, as
forked in HLC-Lab/uet-htsim @35962f13); the target's share of the period is left out here, so
one base round trip is a lower estimate. Control law: UE Specification 1.0 (2025-06-11), NSCC;
its precursor Bonato et al., "SMaRTT-REPS: Sender-based Marked Rapidly-adapting Trimmed & Timed
Transport with Recycled Entropies", arXiv:2404.01630 (2024)."""


@dataclass(frozen=True)
class SettleLaw:
    """How one congestion controller brings an overload down (see the module docstring)."""

    period_us: float
    """Fixed time between two cuts."""
    period_rtts: float
    """Time between two cuts in base round trips (added to ``period_us``)."""
    decrease_factor: float
    """Largest rate cut per period (0: to the target in one cut)."""
    interval_us: float
    """Notification interval before the first signal leaves the congestion point."""


SETTLE_LAWS: dict[CongestionControl, SettleLaw] = {
    "dcqcn": SettleLaw(DCQCN_DECREASE_PERIOD_US, 0.0, DCQCN_DECREASE_FACTOR, DCQCN_CNP_INTERVAL_US),
    "ib_cc": SettleLaw(IB_CC_DECREASE_PERIOD_US, 0.0, IB_CC_DECREASE_FACTOR, 0.0),
    "spectrum_x_cc": SettleLaw(0.0, TELEMETRY_CC_PERIOD_RTTS, 0.0, 0.0),
    "uec_nscc": SettleLaw(0.0, NSCC_QUICK_ADAPT_PERIOD_RTTS, 0.0, 0.0),
}
"""The settling law of every congestion controller that reacts to congestion after the fact;
``voq_scheduled`` never lets an overload start (the egress grants what it can carry) and
``none`` never settles."""

ETHERNET_PREAMBLE_AND_GAP_BYTES = 20
"""Preamble + SFD (8 B) and the minimum inter-frame gap (12 B) of every Ethernet frame on the
wire (IEEE 802.3 clause 4); a scheduled fabric stores and cuts the frame without them."""
VOQ_GRANT_ROUND_TRIPS = 1.0
"""A virtual output queue sends its first cell only after its credit request has reached the
egress port's scheduler and the grant has come back: one round trip between the two leaves
before the first byte (Broadcom Jericho3-AI press release, 2023-04-11: end-to-end scheduling
with credits; OCP Distributed Disaggregated Chassis specification, 2019). The request and the
grant are cells: they cross the cables and the fabric element, not the leaves' packet
pipelines (:func:`request_grant_us`)."""
LOSS_TIMEOUT_US = 1048.576
"""Retransmission timeout of a sender that only learns of a loss by its timer: ``4.096 µs x
2^8`` (the RC QP ``timeout`` field's unit at exponent 8, IBTA Vol. 1 §9.7.6.1.3), the figure the
packet level uses; NCCL's default exponent 18 would be 1.07 s. For UET without trimming the
timer is implementation-defined (UE Specification 1.0): an estimate there."""
TRIM_RECOVERY_ROUND_TRIPS = 1.0
"""A trimmed packet's header reaches the receiver on a priority queue, the receiver NACKs it
and the sender retransmits: the payload arrives one base round trip later than it would have
(UE Specification 1.0, packet trimming and NACK; derived from the path)."""
PORT_BUFFER_SHARE = 0.5
"""Share of a switch's shared buffer one congested port can take before it drops: the dynamic
threshold with ``alpha = 1`` settles at ``alpha / (1 + alpha)`` of the buffer (Choudhury and
Hahne, "Dynamic Queue Length Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 1998;
SONiC's default ``dynamic_th`` 0 is ``alpha = 2^0``)."""


def cell_payload_share(
    mtu_bytes: int, header_bytes: float, cell_bytes: float, cell_header_bytes: float
) -> float:
    """Payload share of a scheduled fabric's cell link: the frame (without preamble and gap) is
    cut into ``ceil(frame / cell_bytes)`` variable-size cells, each with its own header.

    >>> round(cell_payload_share(4096, 82, 256, 16), 4)   # 4,158 B frame -> 17 cells
    0.9246
    """
    frame = mtu_bytes + header_bytes - ETHERNET_PREAMBLE_AND_GAP_BYTES
    cells = math.ceil(frame / cell_bytes - 1e-12)
    return mtu_bytes / (frame + cells * cell_header_bytes)


@dataclass(frozen=True)
class TransportSpec:
    """The mechanisms the fluid model applies to one fabric."""

    routing: RoutingName
    """``static``: destination-based forwarding tables (D-mod-K); ``ecmp``: per-flow 5-tuple
    hash at every switch; ``flowlet``: the hash re-drawn per flowlet (a flow of the fluid model
    is one flowlet, so its paths are ECMP's; adaptive routing on a switch whose ASIC places
    flowlets, Tomahawk's DLB, is this routing, :func:`~fabricplan.sim.mechanism.placed_routing`);
    ``adaptive``: per-packet adaptive routing, which
    the fluid model treats as a split over the equal-cost paths that wins back
    ``adaptive_recovery`` of what hashing would lose on each multi-link trunk
    (:mod:`fabricplan.sim.flow.adaptive`); ``spray``: per-packet (or per-cell)
    spraying over the equal-cost paths, an even split, ideal on a symmetric fabric."""
    link_flow_control: LinkFlowControl
    congestion_control: CongestionControl
    payload_share: float
    """MTU / (MTU + header bytes): the share of the line rate that carries payload."""
    adaptive_recovery: float = 1.0
    """Share of uncoordinated (hashed) placement's imbalance adaptive routing wins back on a
    multi-link trunk (:attr:`fabricplan.model.load_balancing.AdaptiveRouting.recovered_share`);
    1 (the ideal split) for spraying and the other routings."""
    fabric_payload_share: float | None = None
    """Payload share of switch-to-switch links when it differs from the host links' (a
    scheduled fabric's cells, :func:`cell_payload_share`); ``None``: ``payload_share``."""
    loss_recovery: LossRecovery = "ideal"
    """What an overflow costs a lossy fabric (:data:`LossRecovery`); unused when lossless."""
    port_buffer_bytes: float = 0.0
    """Bytes one congested switch port absorbs before a lossy fabric drops."""
    delivery: Literal["in_order", "nic_reorder", "out_of_order"] = "in_order"
    """What the receiver accepts. Under per-packet routing an ``in_order`` receiver (RC
    go-back-N) resends what overtaking packets cost it: the fluid model carries that as
    ``go_back_n_share`` on every link (:func:`with_go_back_n`); a scheduled fabric reassembles
    before the egress port and pays nothing."""
    go_back_n_share: float = 1.0
    """Share of every link's payload rate left after go-back-N resends
    (:func:`~fabricplan.analytic.collision.in_order_goodput_share`); 1 unless per-packet
    routing meets an in-order receiver."""

    @property
    def lossless(self) -> bool:
        """No drops: hop-by-hop back-pressure (credits, PFC) or egress scheduling."""
        return self.link_flow_control != "none"

    @property
    def back_pressure(self) -> bool:
        """Hop-by-hop pause (credits or PFC), which spreads congestion to victims."""
        return self.link_flow_control in ("credit", "pfc")

    @property
    def scheduled(self) -> bool:
        """Ingress VOQs send only what the egress port granted (no fabric queue overflows)."""
        return self.link_flow_control == "scheduled"

    @property
    def fabric_share(self) -> float:
        """Payload share of switch-to-switch links."""
        return (
            self.payload_share if self.fabric_payload_share is None else self.fabric_payload_share
        )


def with_go_back_n(
    transport: TransportSpec,
    graph: FabricGraph,
    frame_bytes: float,
    traffic: Traffic | None = None,
) -> TransportSpec:
    """``transport`` with the go-back-N cost of an in-order receiver under per-packet routing.

    A packet sprayed (or adaptively routed) onto another of the leaf's ``U`` uplinks than the
    one before it may overtake it; an RC receiver without out-of-order placement takes that as
    a loss, NAKs the gap and the sender resends its window (IBTA Vol. 1 §9.7.5). Each useful
    packet then costs ``1 + q W`` on the wire (:func:`~fabricplan.analytic.collision.
    in_order_goodput_share`): ``W`` the packets one round trip of a leaf-spine-leaf path holds
    at the host rate (what the sender puts on the wire before the NAK is back), ``q`` the
    share of packets that overtake the one sent before them. ``q`` depends on the fabric's
    regime:

    - *uncontended* (``traffic`` given, and no fabric trunk carries packets of more than one
      source host): a NIC's own packets, one packet time apart, meet no queue, so only the
      paths' fixed delays can reorder them
      (:func:`~fabricplan.analytic.collision.overtaking_share_of_delays`): 0 on a symmetric
      fabric, up to ``1/4`` over two paths when one is longer by more than a packet time;
    - *contended* (several sources share a fabric link, or ``traffic`` not given): queueing
      delays differ by more than a packet time between paths, and a packet on another path
      overtakes half the time (:func:`~fabricplan.analytic.collision.overtaking_share`, the
      analytic level's law; an upper bound for a lightly loaded fabric).

    Every link's payload share is cut by that factor; nothing changes for a reordering NIC,
    an unordered transport, a scheduled fabric (it reassembles), flowlet routing (adaptive
    routing on a flowlet ASIC) or a path-pinned routing. Against the packet level (which runs
    go-back-N itself): one sprayed 2 MiB RoCE flow on 2 leaves and 2 spines at 100G took
    173.3 µs there (the law: 171.1) and 1,082.9 µs with spine 0's links 500 ns longer (the law:
    about 930); the contended law is coarse (4-leaf, 2-spine, 16-host fabric: 2,971 µs where
    packets took 4,871 µs for an adaptive permutation, 2,237 against 7,287 sprayed, 2,097
    against 1,451 and 335 for all_to_alls); see docs/models.md, "Reordering under per-packet
    routing".

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"]}})
    >>> graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)   # 8 leaves, 4 spines
    >>> tech, switch = valid.technologies["roce_v2"], valid.switches["roce_v2"]
    >>> ecmp = transport_for(tech, switch)
    >>> with_go_back_n(ecmp, graph, 4178).go_back_n_share
    1.0
    >>> sprayed = with_go_back_n(transport_for(tech, switch, routing="spray"), graph, 4178)
    >>> round(sprayed.go_back_n_share, 3)   # 128 uplinks: q ~ 1/2 of ~68 packets in flight
    0.029
    >>> from fabricplan.sim.traffic import GpuLayout, incast
    >>> rail = incast(GpuLayout(1024, 8, 8), 1016, 2**21, receiver=0)  # rail 0: one leaf
    >>> with_go_back_n(transport_for(tech, switch, routing="spray"), graph, 4178,
    ...     rail).go_back_n_share     # its flows never reach the spines: nothing to reorder
    1.0
    """
    if (
        transport.routing not in PER_PACKET_ROUTINGS
        or transport.delivery != "in_order"
        or transport.scheduled
        or graph.leaves == 0
        or graph.leaf_up_links.size == 0
    ):
        return transport
    ups = graph.leaf_up_links[0]
    paths = int(ups.size)
    host, host_down = int(graph.host_up_link[0]), int(graph.host_down_link[0])
    lat = graph.link_latency_ns
    # host -> leaf -> spine -> leaf -> host over each of leaf 0's uplinks: four cables, three
    # switches; the two adapters are common to every path.
    fabric_ns = lat[ups] + lat[graph.link_reverse[ups]]
    rate_bytes_per_ns = float(graph.link_speed_gbps[host]) / 8.0
    gap_ns = frame_bytes / rate_bytes_per_ns
    one_way_ns = 2 * graph.nic_latency_ns + float(lat[host] + lat[host_down] + fabric_ns.mean())
    one_way_ns += gap_ns
    in_flight = 2 * one_way_ns * rate_bytes_per_ns / frame_bytes
    if traffic is None or fabric_shared_by_sources(graph, traffic):
        overtaking = overtaking_share(paths)
    else:
        overtaking = overtaking_share_of_delays(fabric_ns.tolist(), gap_ns)
    share = 1.0 / (1.0 + overtaking * in_flight)
    return replace(
        transport,
        payload_share=transport.payload_share * share,
        fabric_payload_share=(
            None
            if transport.fabric_payload_share is None
            else transport.fabric_payload_share * share
        ),
        go_back_n_share=share,
    )


def fabric_shared_by_sources(graph: FabricGraph, traffic: Traffic) -> bool:
    """True when some switch-to-switch trunk carries flows of more than one source host.

    Packets of one NIC leave one packet time apart and, split over a trunk, meet no queue of
    their own making; packets of two NICs arrive independently and queue behind each other. The
    count is over the whole traffic (flows of different steps count as sharing: an upper
    bound on contention).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> import numpy as np
    >>> from fabricplan.sim.traffic import GpuLayout, StepSpec, gpu_flows, incast
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"],
    ...     "topology": "fat_tree"}})
    >>> graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> layout = GpuLayout(1024, 8, 8)
    >>> one = gpu_flows(layout, np.array([0]), np.array([1016]), 1e6, StepSpec("s", "p"))
    >>> bool(graph.host_leaf[one.src] != graph.host_leaf[one.dst])   # across the spines
    True
    >>> fabric_shared_by_sources(graph, one)
    False
    >>> fabric_shared_by_sources(graph, incast(layout, 1016, 1e6, receiver=0))
    True
    """
    trunks = trunk_route(graph, traffic.src, traffic.dst)
    host_trunks = np.zeros(graph.trunks, dtype=bool)
    host_trunks[graph.trunk_of_link[graph.host_up_link]] = True
    host_trunks[graph.trunk_of_link[graph.host_down_link]] = True
    fabric = (trunks >= 0) & ~host_trunks[np.maximum(trunks, 0)]
    rows, cols = np.nonzero(fabric)
    if rows.size == 0:
        return False
    pairs = np.unique(np.stack([trunks[rows, cols], traffic.src[rows]]), axis=1)
    return bool(np.bincount(pairs[0]).max() > 1)


def transport_for(
    tech: TechnologySpec,
    switch: SwitchSpec,
    routing: RoutingName | None = None,
    congestion_control: CongestionControl | None = None,
) -> TransportSpec:
    """The transport of a technology on a switch, with optional overrides.

    Parameters
    ----------
    tech
        The technology's catalog entry (its mechanisms, MTU and header bytes).
    switch
        The switch it runs on (adaptive routing, buffer, trimming).
    routing
        A routing to use instead of the technology's default on this switch.
    congestion_control
        A congestion control to use instead of the technology's.

    Returns
    -------
    TransportSpec
        What the fluid model applies: routing, flow control, congestion control, payload
        shares, adaptive efficiency, loss recovery and the per-port buffer.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> t = transport_for(valid.technologies["roce_v2"], valid.switches["roce_v2"])
    >>> t.routing, t.congestion_control, round(t.payload_share, 3)
    ('ecmp', 'dcqcn', 0.98)
    >>> ib = transport_for(valid.technologies["infiniband"], valid.switches["infiniband"])
    >>> ib.routing, round(ib.adaptive_recovery, 3)   # (0.77 - 0.38) / (1 - 0.38)
    ('adaptive', 0.629)
    >>> from fabricplan.catalog.loader import load_catalog
    >>> from fabricplan.model.hardware import SwitchSpec, TechnologySpec
    >>> cat = load_catalog()
    >>> tech, switch = cat.get_typed("ddc", TechnologySpec), cat.get_typed("sn5600", SwitchSpec)
    >>> ddc = transport_for(tech, switch)
    >>> ddc.routing, ddc.link_flow_control, round(ddc.fabric_share, 4)
    ('spray', 'scheduled', 0.9246)
    """
    share = tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)
    # Adaptive routing on a flowlet ASIC (Tomahawk's DLB) places flowlets: a fluid flow never
    # idles, so it is one flowlet, pinned like an ECMP flow (the packet level does the same).
    chosen = placed_routing(routing or default_routing(tech, switch), switch)
    mechanisms = simulated_mechanisms(tech)
    fabric_share = None
    if tech.cell_bytes is not None and tech.cell_header_bytes is not None:
        fabric_share = cell_payload_share(
            tech.mtu_bytes,
            tech.header_bytes.value,
            tech.cell_bytes.value,
            tech.cell_header_bytes.value,
        )
    trims = tech.packet_trimming and switch.packet_trimming
    buffer = switch.buffer_bytes.value if switch.buffer_bytes is not None else 0.0
    return TransportSpec(
        routing=chosen,
        link_flow_control=mechanisms.link_flow_control,
        congestion_control=congestion_control or mechanisms.congestion_control,
        payload_share=share,
        adaptive_recovery=(
            adaptive_routing_of(switch).recovered_share if chosen == "adaptive" else 1.0
        ),
        fabric_payload_share=fabric_share,
        loss_recovery="trim_nack" if trims else "timeout",
        port_buffer_bytes=buffer * PORT_BUFFER_SHARE,
        delivery=tech.delivery,
    )


def settle_time_us(cc: CongestionControl, overload: float, base_rtt_us: float) -> float:
    """Time congestion control needs to bring an ``overload`` (offered / capacity) down to 1.

    The signal needs one round trip (and the notification interval) to come back; then each
    cut is at most ``decrease_factor``, one per period. ``inf`` without congestion control; 0
    when nothing is overloaded or the egress schedules what it receives (``voq_scheduled``).

    >>> settle_time_us("dcqcn", 1.0, 4.0), settle_time_us("dcqcn", 2.0, 4.0)
    (0.0, 12.0)
    >>> settle_time_us("uec_nscc", 63.0, 6.0), settle_time_us("voq_scheduled", 63.0, 6.0)
    (12.0, 0.0)
    """
    if cc == "none":
        return math.inf
    if overload <= 1.0 or cc == "voq_scheduled":
        return 0.0
    law = SETTLE_LAWS[cc]
    if law.decrease_factor <= 0.0:
        cuts = 1
    else:
        cuts = math.ceil(math.log(overload) / math.log(1.0 / law.decrease_factor) - 1e-12)
    period = law.period_us + law.period_rtts * base_rtt_us
    return base_rtt_us + law.interval_us + period * cuts


def request_grant_us(
    link_latency_ns: NDArray[np.float64],
    link_tier: NDArray[np.int8],
    leaf_latency_ns: float,
    paths: NDArray[np.int32],
    spine_extra_latency_ns: float = 0.0,
) -> NDArray[np.float64]:
    """Time each flow of a scheduled fabric waits for its first grant, µs.

    The request cell goes from the ingress leaf over the path's fabric links (cables and the
    fabric element; the leaf's own packet pipeline, ``leaf_latency_ns``, is not crossed) to
    the egress port's scheduler, which decides (:data:`VOQ_SCHEDULER_DECISION_NS`), and the
    grant comes back the same way: ``VOQ_GRANT_ROUND_TRIPS`` round trips. A flow inside one
    leaf waits for the decision only. Links carry the leaf's latency; a hop leaving the
    fabric element adds ``spine_extra_latency_ns`` (the element's minus the leaf's).

    >>> lat = np.array([30.0, 1230.0, 1250.0, 1250.0])  # host up, host down, leaf up, FE down
    >>> tier = np.array([0, 1, 2, 3], dtype=np.int8)
    >>> paths = np.array([[0, 2, 3, 1], [0, 1, -1, -1]], dtype=np.int32)
    >>> # a 500 ns element beside 1,200 ns leaves: 2 x (50 + 50 + 500) + 100
    >>> request_grant_us(lat, tier, 1200.0, paths, -700.0).round(3).tolist()
    [1.3, 0.1]
    """
    lat = np.append(link_latency_ns, 0.0)
    tiers = np.append(link_tier, -1)
    fabric = np.isin(tiers[paths], (LEAF_TO_SPINE, SPINE_TO_LEAF, SPINE_TO_CORE, CORE_TO_SPINE))
    leaving_leaf = tiers[paths] == LEAF_TO_SPINE
    one_way_ns = np.where(fabric, lat[paths], 0.0).sum(axis=1)
    one_way_ns -= leaving_leaf.sum(axis=1) * leaf_latency_ns
    leaving_spine = np.isin(tiers[paths], (SPINE_TO_LEAF, SPINE_TO_CORE))
    one_way_ns += leaving_spine.sum(axis=1) * spine_extra_latency_ns
    round_trip_ns = 2.0 * VOQ_GRANT_ROUND_TRIPS * one_way_ns + VOQ_SCHEDULER_DECISION_NS
    return np.asarray(ns_to_us(1.0) * round_trip_ns, dtype=np.float64)
