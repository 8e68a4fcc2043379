"""The packet level's link and path mechanisms, on tiny fabrics: Ultra Ethernet's link-level
retry (LLR) and credit-based flow control (CBFC), flowlet switching, a scheduled fabric's
egress reassembly and its fabric elements' latency.

Every expected value is derived in the test: a frame replayed by its link costs one link round
trip and one frame time, never a retransmission timeout; a sender that transmits only against
credits cannot overflow the buffer it was given; a flow whose packets are further apart than
the flowlet timer is a new flowlet at each packet, one that sends back to back is one flowlet;
an egress that hands packets on in sequence leaves the receiver nothing out of order.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from fabricplan.catalog.loader import load_catalog
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.packet.credit import CBFC_CREDIT_BYTES, CREDIT_BLOCK_BYTES, CreditSpec
from fabricplan.sim.packet.flowlet import FLOWLET_GAP_US
from fabricplan.sim.packet.network import PacketNetwork, dumbbell, network_from_graph, star
from fabricplan.sim.packet.performance import network_for_graph
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import RTO_US, FaultSpec, PacketSpec, packet_spec_for
from fabricplan.sim.traffic import GpuLayout, incast
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import fabric_graph
from fabrics import (
    PACKET_HEADER,
    PACKET_MTU,
    custom_flows,
    leaf_spine_graph,
    lossless_packet_spec,
    slow_spine_dumbbell,
)

SPEED_GBPS = 100.0
MTU = PACKET_MTU
HEADER = PACKET_HEADER
FRAME = MTU + HEADER
DELAY_NS = 1000.0
"""Every link of the named fabrics: 1 µs each way."""


def _wire_us(payload_bytes: float) -> float:
    packets = math.ceil(payload_bytes / MTU)
    return (payload_bytes + packets * HEADER) * 8 / (SPEED_GBPS * 1e3)


def _catalog(tech_id: str) -> tuple[TechnologySpec, SwitchSpec]:
    catalog = load_catalog()
    tech = catalog.get_typed(tech_id, TechnologySpec)
    switches = [s for s in catalog.of_kind(SwitchSpec) if s.family == tech.switch_family]
    wanted = [s for s in switches if not tech.switch_asics or s.asic in tech.switch_asics]
    return tech, (wanted or switches)[0]


# --- link-level retry -----------------------------------------------------------------------

SIZE = 400_000
TRUNK = 4
"""dumbbell(1): links 0/1 host 0 <-> left, 2/3 host 1 <-> right, 4 left -> right, 5 back."""
ERRORS = FaultSpec(frame_errors=((TRUNK, 0.05),))
"""One data frame in 20 arrives corrupted on the trunk (about 5 of the flow's 98)."""


def _one_flow(spec: PacketSpec) -> PacketSimResult:
    net = dumbbell(1, delay_ns=DELAY_NS)
    assert (int(net.link_src[TRUNK]), int(net.link_dst[TRUNK])) == (2, 3)
    return simulate_packet(net, custom_flows([0], [1], SIZE), spec, seed=3)


@pytest.mark.parametrize("delivery", ["out_of_order", "in_order"])
def test_llr_replays_a_corrupted_frame_within_a_link_round_trip(delivery: str) -> None:
    clean = _one_flow(lossless_packet_spec("none", "none", "ecmp", delivery))
    llr = _one_flow(
        lossless_packet_spec("none", "none", "ecmp", delivery, link_level_retry=True, faults=ERRORS)
    )
    assert clean.status == llr.status == "done"
    c = llr.counters
    assert c["corrupted_frames"] > 0
    # Each corrupted frame is replayed by the link, once; the transport never notices: no
    # drop, no end-to-end retransmission, no timeout, nothing out of order at the receiver
    # (frames behind a replay wait for it, as LLR's go-back-N keeps the link in order).
    assert c["llr_replays"] == c["corrupted_frames"] == int(llr.link_corrupted[TRUNK])
    assert c["drops"] == c["retransmits"] == c["timeouts"] == 0
    assert llr.ooo_discards.sum() == 0
    assert c["delivered_bytes"] == SIZE
    # A replay costs the NACK's way back, the frame again and its way over: one link round
    # trip plus one frame time, at most, per corrupted frame.
    per_error_us = 2 * DELAY_NS / 1e3 + FRAME * 8 / (SPEED_GBPS * 1e3)
    assert clean.completion_us <= llr.completion_us
    assert llr.completion_us <= clean.completion_us + c["corrupted_frames"] * per_error_us + 0.01
    assert llr.completion_us < RTO_US


def test_without_llr_a_corrupted_frame_is_a_loss_the_transport_times_out() -> None:
    lost = _one_flow(lossless_packet_spec("none", "none", "ecmp", "out_of_order", faults=ERRORS))
    assert lost.status == "done"
    c = lost.counters
    # The same draws: the bad frames are dropped at the trunk's far end, and selective repeat
    # (nothing trimmed, nothing NACKed) finds each loss only by its retransmission timer.
    assert c["corrupted_frames"] > 0 and c["drops"] == c["corrupted_frames"]
    assert c["llr_replays"] == 0
    assert c["timeouts"] > 0 and c["retransmits"] >= c["drops"]
    assert lost.completion_us >= RTO_US


def test_frame_errors_name_links_of_the_network() -> None:
    from fabricplan.errors import ModelError

    bad = lossless_packet_spec("none", "none", "ecmp", faults=FaultSpec(frame_errors=((99, 0.1),)))
    with pytest.raises(ModelError, match="FP541"):
        _one_flow(bad)
    with pytest.raises(ModelError, match="FP541"):
        lossless_packet_spec(
            "none", "none", "ecmp", faults=FaultSpec(frame_error_ratio=1.0)
        ).check()


def test_llr_is_on_when_the_technology_and_its_switch_retry() -> None:
    tech, switch = _catalog("uec")
    assert not packet_spec_for(tech, switch).link_level_retry  # UE 1.0: an optional profile
    both = packet_spec_for(
        tech.model_copy(update={"link_level_retry": True}),
        switch.model_copy(update={"link_level_retry": True}),
    )
    assert both.link_level_retry
    assert packet_spec_for(tech, switch, link_level_retry=True).link_level_retry
    one = packet_spec_for(tech.model_copy(update={"link_level_retry": True}), switch)
    assert one.link_level_retry == switch.link_level_retry


# --- credit-based flow control --------------------------------------------------------------


def _incast(spec: PacketSpec, senders: int = 8, size: float = 200_000) -> PacketSimResult:
    net = star(senders + 1, delay_ns=100.0, buffer_bytes=300_000)
    return simulate_packet(net, incast(GpuLayout(senders + 1, 1, 1), senders, size), spec)


def test_cbfc_never_drops_and_needs_no_pfc() -> None:
    senders, size = 8, 200_000
    lossy = _incast(lossless_packet_spec("none", "none", "spray", "out_of_order"), senders, size)
    cbfc = _incast(
        lossless_packet_spec(
            "credit",
            "none",
            "spray",
            "out_of_order",
            credit=CreditSpec(block_bytes=CBFC_CREDIT_BYTES),
        ),
        senders,
        size,
    )
    assert lossy.status == cbfc.status == "done"
    # The same incast overflows the 300 kB switch without flow control ...
    assert lossy.counters["drops"] > 0 and lossy.counters["timeouts"] > 0
    # ... and never with credits: a sender transmits only into buffer the receiver gave it,
    # so nothing is dropped, nothing resent, no pause frame exists; the senders wait for
    # credits instead (credit stalls), and the incast takes its N S / B.
    c = cbfc.counters
    assert c["drops"] == c["lossless_drops"] == c["retransmits"] == c["timeouts"] == 0
    assert c["pause_frames"] == 0 and c["trims"] == 0
    assert c["stalls"] > 0
    assert c["delivered_bytes"] == senders * size
    assert cbfc.completion_us >= _wire_us(senders * size)
    assert cbfc.completion_us <= 1.05 * _wire_us(senders * size) + 10.0


def test_uec_with_cbfc_counts_its_own_credits() -> None:
    tech, switch = _catalog("uec")
    cbfc = packet_spec_for(tech, switch, link_flow_control="credit")
    assert cbfc.lossless and cbfc.credit.block_bytes == CBFC_CREDIT_BYTES == 128
    ib_tech, ib_switch = _catalog("infiniband")
    assert packet_spec_for(ib_tech, ib_switch).credit.block_bytes == CREDIT_BLOCK_BYTES == 64
    assert packet_spec_for(tech, switch).link_flow_control == "none"  # CBFC is optional


# --- flowlet switching ----------------------------------------------------------------------


def _clos() -> PacketNetwork:
    """4 leaves x 4 hosts, one uplink from every leaf to each of 4 spines."""
    graph, _ = leaf_spine_graph(leaves=4, spines=4, hosts_per_leaf=4, tech="roce_v2")
    return network_from_graph(graph, 16e6)


def _uplinks_used(net: PacketNetwork, result: PacketSimResult, leaf_vertex: int) -> int:
    up = (net.link_src == leaf_vertex) & (net.link_dst >= net.hosts + 4)  # leaf -> spines
    return int((result.link_tx_bytes[up] > 0).sum())


def _flowlet_run(gap_us: float, window_bytes: int) -> tuple[PacketNetwork, PacketSimResult]:
    net = _clos()
    spec = lossless_packet_spec(
        "none", "none", "flowlet", flowlet_gap_us=gap_us, window_bytes=window_bytes
    )
    return net, simulate_packet(net, custom_flows([0], [4], 100_000), spec, seed=1)


def test_a_flow_with_gaps_longer_than_the_timer_spreads_over_the_paths() -> None:
    # One packet in flight: the next leaves when its ACK is back, so at the ingress leaf the
    # packets are a round trip apart (4 links of >= 1 µs each way: > 8 µs), far above a
    # 2 µs timer: every packet is a flowlet of its own, and each draws a path.
    packets = math.ceil(100_000 / MTU)
    net, gapped = _flowlet_run(gap_us=2.0, window_bytes=MTU)
    assert gapped.status == "done"
    assert gapped.counters["flowlets"] == packets
    leaf0 = net.hosts  # host 0 hangs from the first leaf
    assert _uplinks_used(net, gapped, leaf0) >= 3  # 25 draws over 4 uplinks
    # The same flow under a timer longer than its gaps is one flowlet, on one path.
    net, long_timer = _flowlet_run(gap_us=50.0, window_bytes=MTU)
    assert long_timer.counters["flowlets"] == 1
    assert _uplinks_used(net, long_timer, leaf0) == 1


def test_a_flow_without_gaps_stays_on_one_path() -> None:
    # Back to back at line rate the packets are 0.33 µs apart, under even a 2 µs timer.
    net, steady = _flowlet_run(gap_us=2.0, window_bytes=0)
    assert steady.status == "done"
    assert steady.counters["flowlets"] == 1
    assert _uplinks_used(net, steady, net.hosts) == 1
    assert steady.counters["retransmits"] == 0 and steady.ooo_discards.sum() == 0


def test_flowlet_routing_runs_at_the_packet_level_with_the_switch_timer() -> None:
    tech, switch = _catalog("roce_v2")
    spec = packet_spec_for(tech, switch, routing="flowlet")
    assert (spec.routing, spec.receiver) == ("flowlet", "in_order")
    tomahawk = switch.model_copy(update={"asic": "Tomahawk 5"})
    assert packet_spec_for(tech, tomahawk, routing="flowlet").flowlet_gap_us == 256.0
    generic = switch.model_copy(update={"asic": "no such ASIC"})
    assert packet_spec_for(tech, generic, routing="flowlet").flowlet_gap_us == FLOWLET_GAP_US


def test_adaptive_routing_on_a_flowlet_asic_is_flowlet_switching_at_the_packet_level() -> None:
    # Tomahawk's DLB places flowlets (its catalog ASIC's adaptive routing is flowlet-grained,
    # 256 µs timer): asked for adaptive routing, the packet level switches flowlets on that
    # timer, so a flow sending back to back (packets 0.33 µs apart) is one flowlet on one
    # uplink and its in-order receiver sees nothing out of order. The same request on a
    # per-packet ASIC (Spectrum-4) spreads the flow's packets over the uplinks.
    catalog = load_catalog()
    tech = catalog.get_typed("roce_v2", TechnologySpec)
    tomahawk = catalog.get_typed("ufispace-s9321-64e", SwitchSpec)
    spectrum = catalog.get_typed("sn5600", SwitchSpec)
    flowlet = packet_spec_for(tech, tomahawk, routing="adaptive")
    assert (flowlet.routing, flowlet.flowlet_gap_us, flowlet.receiver) == (
        "flowlet",
        256.0,
        "in_order",
    )
    per_packet = packet_spec_for(tech, spectrum, routing="adaptive")
    assert per_packet.routing == "adaptive"
    net = _clos()
    traffic = custom_flows([0], [4], 100_000)
    steady = simulate_packet(net, traffic, flowlet, seed=1)
    assert steady.status == "done"
    assert steady.counters["flowlets"] == 1
    assert _uplinks_used(net, steady, net.hosts) == 1
    assert steady.ooo_discards.sum() == 0 and steady.counters["retransmits"] == 0
    sprayed = simulate_packet(net, traffic, per_packet, seed=1)
    assert sprayed.status == "done"
    assert _uplinks_used(net, sprayed, net.hosts) > 1


# --- a scheduled fabric's egress reassembly -------------------------------------------------


def _scheduled(**changes: Any) -> PacketSpec:
    return lossless_packet_spec(
        "scheduled",
        "voq_scheduled",
        "spray",
        "in_order",
        cell_bytes=256,
        cell_header_bytes=16,
        **changes,
    )


def test_a_scheduled_fabric_delivers_in_order_by_reassembling_at_the_egress() -> None:
    net = slow_spine_dumbbell()
    size = 200_000
    traffic = custom_flows([0], [2], size)
    reassembled = simulate_packet(net, traffic, _scheduled(egress_reassembly=True))
    raw = simulate_packet(net, traffic, _scheduled())
    assert reassembled.status == raw.status == "done"
    # Sprayed over a slow and a fast spine, every other packet is overtaken in the fabric:
    # handed on as they come, the in-order receiver discards the overtakers and the sender
    # goes back for them ...
    assert raw.ooo_discards.sum() > 0 and raw.retransmits.sum() > 0
    # ... reassembled at the egress leaf, the host sees them in sequence: nothing discarded,
    # nothing resent, although the leaf held packets that had overtaken.
    assert reassembled.counters["reassembly_held"] > 0
    assert reassembled.ooo_discards.sum() == 0 and reassembled.retransmits.sum() == 0
    assert reassembled.duplicates.sum() == 0
    assert reassembled.counters["delivered_bytes"] == size
    # The flow takes its wire time plus the slow way's 4 µs, the grant round trip and the
    # path latency (a few µs), as a reordering NIC would.
    assert reassembled.completion_us <= _wire_us(size) + 4.0 + 20.0
    assert reassembled.stats().delivery == "in_order"


def test_ddc_reassembles_at_the_egress_and_its_host_receives_in_order() -> None:
    spec = packet_spec_for(*_catalog("ddc"))
    assert spec.egress_reassembly and spec.receiver == "in_order"
    # Other per-packet technologies keep their NIC's own placement.
    assert not packet_spec_for(*_catalog("spectrum_x")).egress_reassembly
    assert packet_spec_for(*_catalog("uec")).receiver == "out_of_order"


def test_the_fabric_element_latency_is_on_the_spine_hop() -> None:
    valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["ddc"]}})
    graph = fabric_graph(design_fabric(valid, "ddc"), valid)
    net = network_for_graph(graph, valid, "ddc")
    leaf_ns = valid.switches["ddc"].latency_ns.value
    element_ns = valid.fabric_elements["ddc"].latency_ns.value
    assert element_ns != leaf_ns
    spine0 = graph.hosts + graph.leaves
    down = np.flatnonzero(net.link_src == spine0)  # spine -> leaf
    assert down.size > 0
    up = net.link_rev[down]  # the same cables, leaf -> spine
    # The same cable each way: the difference is the forwarding latency of the box each
    # direction leaves, the fabric element's one way and the leaf's the other.
    assert np.allclose(net.link_delay_ns[down] - net.link_delay_ns[up], element_ns - leaf_ns)
    # Nothing else moved.
    plain = network_from_graph(graph, 1.0)
    others = np.ones(net.links, dtype=bool)
    others[(net.link_src >= spine0) & (net.link_src < spine0 + graph.spines)] = False
    assert np.array_equal(net.link_delay_ns[others], plain.link_delay_ns[others])


# --- per-packet routing with an in-order receiver -------------------------------------------


def test_roce_v2_forced_to_spray_keeps_its_go_back_n_receiver() -> None:
    # A plain RoCEv2 NIC runs an RC queue pair: it takes the expected packet only, so spraying
    # does not buy it out-of-order placement; a SuperNIC technology keeps its own.
    roce = packet_spec_for(*_catalog("roce_v2"), routing="spray")
    assert (roce.routing, roce.receiver, roce.reorder_window_packets) == ("spray", "in_order", 0)
    assert packet_spec_for(*_catalog("roce_v1"), routing="spray").receiver == "in_order"
    supernic = packet_spec_for(*_catalog("spectrum_x"), routing="spray")
    assert supernic.receiver == "nic_reorder"
    net = slow_spine_dumbbell()
    size = 200_000
    traffic = custom_flows([0], [2], size)
    in_order = simulate_packet(net, traffic, roce)
    placed = simulate_packet(net, traffic, supernic)
    assert in_order.status == placed.status == "done"
    # Sprayed over a fast and a 4 µs slower spine, packets overtake each other: the RC
    # receiver discards the overtakers and NAKs, the sender goes back N and resends ...
    assert in_order.ooo_discards.sum() > 0 and in_order.retransmits.sum() > 0
    assert in_order.stats().delivery == "in_order"
    # ... the reordering NIC places them as they come: nothing discarded, nothing resent,
    # and the flow ends sooner.
    assert placed.ooo_discards.sum() == 0 and placed.retransmits.sum() == 0
    assert placed.completion_us < in_order.completion_us
    assert in_order.counters["delivered_bytes"] == placed.counters["delivered_bytes"] == size
