"""The flow level's mechanisms of the new Ethernet technologies on tiny fabrics, against what
first principles give: spraying and collisions, VOQ scheduling and victims, trimming and
timeouts, cell overhead, the settling laws and the catalog's transports."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fabricplan.analytic.profile import VOQ_SCHEDULER_DECISION_NS
from fabricplan.catalog.loader import load_catalog
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.model.scenario import ValidScenario
from fabricplan.sim.flow.fluid import simulate
from fabricplan.sim.flow.result import FlowSimResult
from fabricplan.sim.flow.routing import bytes_per_us, flow_paths
from fabricplan.sim.flow.transport import (
    LOSS_TIMEOUT_US,
    PORT_BUFFER_SHARE,
    CongestionControl,
    LinkFlowControl,
    LossRecovery,
    RoutingName,
    TransportSpec,
    cell_payload_share,
    settle_time_us,
    transport_for,
    with_go_back_n,
)
from fabricplan.sim.mechanism import adaptive_routing_of
from fabricplan.sim.packet.spec import packet_spec_for
from fabricplan.sim.traffic import GpuLayout, StepSpec, gpu_flows, permutation
from fabricplan.topology.graph import LEAF_TO_SPINE, SPINE_TO_LEAF
from fabrics import (
    FLOW_BYTES,
    k_ary_fat_tree,
    leaf_spine_graph,
    one_gpu_per_node,
    victim_beside_incast,
)

B = float(bytes_per_us(100.0))  # the test fabrics' 100G links, in bytes per microsecond
S = FLOW_BYTES


def transport(
    routing: RoutingName,
    lfc: LinkFlowControl = "none",
    cc: CongestionControl = "none",
    **fields: object,
) -> TransportSpec:
    return dataclasses.replace(TransportSpec(routing, lfc, cc, 1.0), **fields)


def transfer_us(result: FlowSimResult) -> np.ndarray:
    """When each flow's last byte left the fluid model (path latency not counted)."""
    return result.finish_us - result.latency_us


def valid_layout(valid: ValidScenario) -> GpuLayout:
    cluster = valid.spec.cluster
    return GpuLayout(cluster.gpus, cluster.gpus_per_node, cluster.nics_per_node)


# ----------------------------------------------------------------------------- spraying
@pytest.mark.parametrize("seed", range(6))
def test_spraying_removes_the_collisions_ecmp_makes_on_a_nonblocking_clos(seed: int) -> None:
    # k=4 fat tree, full bisection: an even split over the k^2/4 paths puts at most one
    # flow's worth on any link, so every host sends at B. A hashed path that shares a link
    # with another flow for their whole life gives the pair at most B together: the later
    # one finishes no earlier than 2 S / B.
    graph, _ = k_ary_fat_tree(4)
    traffic = permutation(one_gpu_per_node(16), S, seed=seed)
    spray = simulate(graph, traffic, transport("spray"), seed=seed, tolerance=0.0)
    assert transfer_us(spray) == pytest.approx(np.full(16, S / B))
    ecmp = simulate(graph, traffic, transport("ecmp"), seed=seed, tolerance=0.0)
    _, links = flow_paths(graph, "ecmp", traffic.src, traffic.dst, np.arange(16), seed)
    collided = np.bincount(links[links >= 0]).max() > 1
    assert (ecmp.transfer_us >= 2 * S / B * (1 - 1e-9)) == collided


def test_ecmp_collides_on_some_permutation_that_spraying_runs_at_line_rate() -> None:
    graph, _ = k_ary_fat_tree(4)
    layout = one_gpu_per_node(16)
    worst = max(
        simulate(graph, permutation(layout, S, seed=s), transport("ecmp"), seed=s).transfer_us
        for s in range(6)
    )
    assert worst >= 2 * S / B * (1 - 1e-9)


def test_flowlet_routing_of_continuous_flows_takes_the_ecmp_paths() -> None:
    # A flow of the fluid model never idles, so it is one flowlet: the hash is drawn once.
    graph, _ = k_ary_fat_tree(4)
    traffic = permutation(one_gpu_per_node(16), S, seed=2)
    ids = np.arange(traffic.flows)
    for seed in range(4):
        ecmp = flow_paths(graph, "ecmp", traffic.src, traffic.dst, ids, seed)
        flowlet = flow_paths(graph, "flowlet", traffic.src, traffic.dst, ids, seed)
        assert (ecmp[0] == flowlet[0]).all()
        a = simulate(graph, traffic, transport("ecmp"), seed=seed)
        b = simulate(graph, traffic, transport("flowlet"), seed=seed)
        assert (a.finish_us == b.finish_us).all()


# ----------------------------------------------------------------------------- VOQ victims
def test_a_victim_next_to_an_incast_keeps_its_rate_under_voq_scheduling() -> None:
    graph, traffic, victim = victim_beside_incast()
    voq = simulate(graph, traffic, transport("spray", "scheduled", "voq_scheduled"))
    pfc = simulate(graph, traffic, transport("spray", "pfc", "none"))
    dcqcn = simulate(graph, traffic, transport("spray", "pfc", "dcqcn"))
    # The egress port of host 0 shares B among the 7 incast flows (B/7 each, 7 S / B in all);
    # nothing pauses the leaf's uplinks, so the victim runs at B.
    assert transfer_us(voq)[victim] == pytest.approx(S / B)
    assert transfer_us(voq)[:7] == pytest.approx(np.full(7, 7 * S / B))
    assert voq.link_paused_us.sum() == 0
    # The scheduling is the mechanism, not a congestion controller on top of it.
    unmanaged = simulate(graph, traffic, transport("spray", "scheduled", "none"))
    assert transfer_us(unmanaged)[victim] == pytest.approx(S / B)
    # PFC without CC: the victim waits behind the incast's packets on the paused uplinks.
    assert transfer_us(pfc)[victim] == pytest.approx(7 * S / B)
    # PFC with DCQCN: slowed while DCQCN settles.
    assert transfer_us(dcqcn)[victim] > S / B * (1 + 1e-6)


def test_a_voq_flow_waits_one_request_grant_round_trip_before_its_first_byte() -> None:
    graph, traffic, _ = victim_beside_incast()
    voq = simulate(graph, traffic, transport("spray", "scheduled", "voq_scheduled"))
    lossy = simulate(graph, traffic, transport("spray"))
    # The path's one-way latency, then a request cell to the egress scheduler and its grant
    # back over the fabric links: cables and the spine, not the leaves' packet pipelines.
    up = float(graph.link_latency_ns[graph.link_tier == LEAF_TO_SPINE][0])
    down = float(graph.link_latency_ns[graph.link_tier == SPINE_TO_LEAF][0])
    one_way_ns = up - graph.leaf_latency_ns + down + graph.spine_extra_latency_ns
    grant_us = (2 * one_way_ns + VOQ_SCHEDULER_DECISION_NS) / 1e3
    assert graph.leaf_latency_ns > 0
    assert voq.latency_us == pytest.approx(lossy.latency_us + grant_us)


# ----------------------------------------------------------------------------- trimming
def _incast(recovery: LossRecovery, buffer_bytes: float = 0.0) -> FlowSimResult:
    graph, traffic, _ = victim_beside_incast()
    t = transport(
        "spray", "none", "uec_nscc", loss_recovery=recovery, port_buffer_bytes=buffer_bytes
    )
    return simulate(graph, traffic, t, tolerance=0.0)


def test_trimming_turns_an_overflow_into_one_round_trip_not_a_timeout() -> None:
    ideal, trimmed, dropped = _incast("ideal"), _incast("trim_nack"), _incast("timeout")
    rtt = 2 * ideal.latency_us
    # The seven incast flows overflow host 0's port before NSCC settles: each pays one
    # recovery. Trimmed: the header reaches the receiver, its NACK comes back, the payload
    # is resent: one round trip. Dropped: the retransmission timer.
    assert (trimmed.finish_us - ideal.finish_us)[:7] == pytest.approx(rtt[:7])
    assert (dropped.finish_us - ideal.finish_us)[:7] == pytest.approx(np.full(7, LOSS_TIMEOUT_US))
    assert 100 * rtt.max() < LOSS_TIMEOUT_US
    # The victim crosses no overflowing queue and pays nothing.
    assert trimmed.finish_us[7] == ideal.finish_us[7] == dropped.finish_us[7]


def test_a_queue_overflows_only_when_the_excess_before_settling_exceeds_its_buffer() -> None:
    ideal = _incast("ideal")
    rtt = 2 * float(ideal.latency_us.max())
    # 7 senders at B into one port of B: 6 B too much for NSCC's settling time.
    excess = 6 * B * settle_time_us("uec_nscc", 7.0, rtt)
    held = _incast("timeout", buffer_bytes=excess * 1.01)
    spilt = _incast("timeout", buffer_bytes=excess * 0.99)
    assert (held.finish_us == ideal.finish_us).all()
    assert (spilt.finish_us[:7] > ideal.finish_us[:7] + LOSS_TIMEOUT_US * 0.99).all()


# ----------------------------------------------------------------------------- cells
def test_cell_overhead_arithmetic() -> None:
    # 4,096 B payload + 62 B of RoCEv2 headers (82 B minus preamble and gap) = 4,158 B,
    # cut into ceil(4158 / 256) = 17 cells of 16 B header each: 4,430 B on a fabric link.
    assert cell_payload_share(4096, 82, 256, 16) == pytest.approx(4096 / 4430)
    # A frame of exactly 16 cells (4,096 B: only preamble and gap beyond the payload).
    assert cell_payload_share(4096, 20, 256, 16) == pytest.approx(4096 / (4096 + 16 * 16))


def test_cell_overhead_lowers_goodput_on_fabric_links_only() -> None:
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=2)
    layout = one_gpu_per_node(4)
    # Host 0 -> host 2 crosses the spines; host 0 -> host 1 stays on its leaf.
    cross = gpu_flows(layout, np.array([0]), np.array([2]), S, StepSpec("c", "c"))
    local = gpu_flows(layout, np.array([0]), np.array([1]), S, StepSpec("l", "l"))
    cells = transport("spray", "scheduled", "voq_scheduled", fabric_payload_share=0.9)
    # One flow on an idle fabric: its rate is the smaller of the host link's B and the
    # uplink trunk's 2 B x 0.9, so the cell tax does not bind for one flow...
    assert simulate(graph, cross, cells).transfer_us == pytest.approx(S / B)
    # ...but a full leaf (both hosts sending across) needs 2 B through 2 B x 0.9.
    both = gpu_flows(layout, np.array([0, 1]), np.array([2, 3]), S, StepSpec("c", "c"))
    assert simulate(graph, both, cells).transfer_us == pytest.approx(S / (0.9 * B))
    assert simulate(graph, local, cells).transfer_us == pytest.approx(S / B)
    result = simulate(graph, both, cells)
    host = result.link_capacity_bytes_per_us[graph.link_tier <= 1]
    fabric = result.link_capacity_bytes_per_us[graph.link_tier >= 2]
    assert host == pytest.approx(np.full(host.size, B))
    assert fabric == pytest.approx(np.full(fabric.size, 0.9 * B))


# ----------------------------------------------------------------------------- settling
def test_settling_laws() -> None:
    rtt = 5.0
    # Telemetry CC and NSCC's quick adapt: the signal's round trip, then one update per RTT
    # that reaches the target whatever the overload.
    for cc in ("spectrum_x_cc", "uec_nscc"):
        assert settle_time_us(cc, 2.0, rtt) == settle_time_us(cc, 1000.0, rtt) == 2 * rtt
    # DCQCN halves at most once per 4 us: 1000x needs ceil(log2 1000) = 10 cuts.
    assert settle_time_us("dcqcn", 1000.0, rtt) == pytest.approx(rtt + 4 + 10 * 4)
    assert settle_time_us("voq_scheduled", 1000.0, rtt) == 0.0
    assert math.isinf(settle_time_us("none", 2.0, rtt))


# ----------------------------------------------------------------------------- catalog
def _catalog(tech: str, switch: str) -> tuple[TechnologySpec, SwitchSpec]:
    cat = load_catalog()
    return cat.get_typed(tech, TechnologySpec), cat.get_typed(switch, SwitchSpec)


def test_spectrum_x_spreads_by_load_with_its_asics_efficiency() -> None:
    tech, switch = _catalog("spectrum_x", "sn5600")
    t = transport_for(tech, switch)
    assert (t.routing, t.link_flow_control, t.congestion_control, t.delivery) == (
        "adaptive",
        "pfc",
        "spectrum_x_cc",
        "nic_reorder",
    )
    # Spectrum-4's own implementation record (not the switch-local default).
    assert t.adaptive_recovery == adaptive_routing_of(switch).recovered_share
    generic = switch.model_copy(update={"asic": "generic"})
    assert adaptive_routing_of(generic).recovered_share != t.adaptive_recovery
    # The same technology on a switch without adaptive routing hashes per flow.
    assert transport_for(*_catalog("spectrum_x", "sn4700")).routing == "ecmp"


def test_ddc_is_scheduled_sprayed_and_pays_its_cells() -> None:
    tech, switch = _catalog("ddc", "sn5600")
    t = transport_for(tech, switch)
    assert (t.routing, t.link_flow_control, t.congestion_control) == (
        "spray",
        "scheduled",
        "voq_scheduled",
    )
    assert tech.cell_bytes is not None and tech.cell_header_bytes is not None
    assert t.fabric_share == pytest.approx(
        cell_payload_share(
            tech.mtu_bytes,
            tech.header_bytes.value,
            tech.cell_bytes.value,
            tech.cell_header_bytes.value,
        )
    )
    assert t.lossless and t.scheduled and not t.back_pressure


def test_uec_trims_only_where_the_switch_can() -> None:
    tech, switch = _catalog("uec", "ufispace-s9321-64e")
    plain = transport_for(tech, switch.model_copy(update={"packet_trimming": False}))
    trimming = transport_for(tech, switch.model_copy(update={"packet_trimming": True}))
    assert (plain.routing, plain.link_flow_control, plain.congestion_control) == (
        "spray",
        "none",
        "uec_nscc",
    )
    assert plain.loss_recovery == "timeout" and trimming.loss_recovery == "trim_nack"
    assert switch.buffer_bytes is not None
    assert plain.port_buffer_bytes == pytest.approx(switch.buffer_bytes.value * PORT_BUFFER_SHARE)


def test_the_packet_level_models_flowlet_routing_too() -> None:
    tech, switch = _catalog("ddc", "sn5600")
    assert packet_spec_for(tech, switch, routing="flowlet").routing == "flowlet"


# ----------------------------------------------------------------------------- adaptive routing
@pytest.mark.parametrize("seed", range(6))
def test_switch_local_adaptive_routing_wins_back_its_share_of_what_hashing_loses(
    seed: int,
) -> None:
    # Two hosts of leaf 0 send S to the two hosts of leaf 1 over 2 uplinks of B. Hashed onto
    # different spines the trunk is balanced and adaptive routing loses nothing (S / B); hashed
    # onto one spine the trunk's balance is 2 / (2 x 2) = 1/2 and the implementation keeps
    # 1/2 + r/2 of 2 B, so each flow gets B (1 + r) / 2: 2 S / (B (1 + r)).
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=2)
    traffic = gpu_flows(
        one_gpu_per_node(4), np.array([0, 1]), np.array([2, 3]), S, StepSpec("p", "p")
    )
    r = 0.629
    adaptive = simulate(graph, traffic, transport("adaptive", adaptive_recovery=r), seed, 0.0)
    _, links = flow_paths(graph, "ecmp", traffic.src, traffic.dst, np.arange(2), seed)
    collided = np.bincount(links[links >= 0]).max() > 1
    expected = 2 * S / (B * (1 + r)) if collided else S / B
    assert transfer_us(adaptive) == pytest.approx(np.full(2, expected))
    ideal = simulate(graph, traffic, transport("adaptive"), seed, 0.0)
    assert transfer_us(ideal) == pytest.approx(np.full(2, S / B))


@pytest.mark.parametrize("k", [4, 8])
def test_adaptive_routing_on_an_all_to_all_sits_between_the_ideal_and_ecmp(k: int) -> None:
    # All-to-all on a k-ary fat tree: hashing leaves some trunks uneven, adaptive routing wins
    # back at least its share r of that loss and never does worse than the ideal split or
    # than ECMP. (A flat tax of 1 - 0.77 on every trunk, the old model, gives ideal / 0.77.)
    from fabricplan.sim.traffic import all_to_all

    graph, _ = k_ary_fat_tree(k)
    hosts = k**3 // 4
    traffic = all_to_all(one_gpu_per_node(hosts), hosts * S)
    r = 0.629
    ideal = simulate(graph, traffic, transport("spray")).transfer_us
    real = simulate(graph, traffic, transport("adaptive", adaptive_recovery=r)).transfer_us
    ecmp = simulate(graph, traffic, transport("ecmp")).transfer_us
    assert ideal < real < ecmp
    assert real <= ideal + (1 - r) * (ecmp - ideal)
    assert real < ideal / 0.77


def test_the_recovered_share_comes_from_both_figures_of_one_measurement() -> None:
    from fabricplan.model.load_balancing import (
        SPECTRUM_X_ADAPTIVE_ROUTING,
        SWITCH_LOCAL_ADAPTIVE_ROUTING,
    )

    local = SWITCH_LOCAL_ADAPTIVE_ROUTING
    assert local.recovered_share == pytest.approx((0.77 - 0.38) / (1 - 0.38))
    assert SPECTRUM_X_ADAPTIVE_ROUTING.recovered_share == pytest.approx(0.35 / 0.40)
    ib = transport_for(*_catalog("infiniband", "qm9700"))
    assert ib.adaptive_recovery == pytest.approx(local.recovered_share)
    assert transport_for(*_catalog("ddc", "arista-7700r4c-38pe")).adaptive_recovery == 1.0


# ----------------------------------------------------------------------------- DDC design
def test_a_scheduled_fabric_runs_on_its_leaves_and_fabric_elements() -> None:
    from fabricplan.spec import parse_spec
    from fabricplan.topology.designer import design_fabric
    from fabricplan.topology.graph import fabric_graph

    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["ddc"]}})
    design = design_fabric(valid, "ddc")
    graph = fabric_graph(design, valid)
    leaf, element = valid.switches["ddc"], valid.fabric_elements["ddc"]
    assert (leaf.role, element.role) == ("switch", "fabric_element")
    # The spine hop is the fabric element's latency, the leaf hop the leaf's: a path across
    # the fabric is two leaves and one element, a path inside a leaf one leaf.
    assert graph.leaf_latency_ns == leaf.latency_ns.value
    assert graph.spine_extra_latency_ns == element.latency_ns.value - leaf.latency_ns.value
    from fabricplan.topology.routing import path_latency_ns, route

    src = np.array([0, 0])
    dst = np.array([8 * 40, 8])  # rail 0 of another scalable unit; rail 0 of the next node
    paths = route(graph, src, dst, "dmodk")
    tiers = graph.link_tier[paths[0][paths[0] >= 0]]
    assert list(tiers) == [0, LEAF_TO_SPINE, SPINE_TO_LEAF, 1]
    # Every link that leaves a switch carries the leaf's figure (3 of the 4 links).
    cables = graph.link_latency_ns[paths[0]].sum() - 3 * leaf.latency_ns.value
    across, inside = path_latency_ns(graph, paths)
    nics = 2 * graph.nic_latency_ns
    assert across == pytest.approx(
        nics + cables + 2 * leaf.latency_ns.value + element.latency_ns.value
    )
    assert inside < across
    # The first cell waits for a grant: request and grant cross the cables and the element.
    flow = gpu_flows(valid_layout(valid), src[:1], dst[:1], S, StepSpec("one", "one"))
    t = transport_for(valid.technologies["ddc"], leaf)
    result = simulate(graph, flow, t)
    up_cable = graph.link_latency_ns[paths[0][1]] - leaf.latency_ns.value
    down_cable = graph.link_latency_ns[paths[0][2]] - leaf.latency_ns.value
    grant_ns = 2 * (up_cable + element.latency_ns.value + down_cable) + VOQ_SCHEDULER_DECISION_NS
    assert result.latency_us[0] == pytest.approx((across + grant_ns) / 1e3)
    # Speed-up: 40 fabric ports per 36 host ports at 400G carry the cells with room to spare.
    per_leaf = np.bincount(graph.link_src[graph.link_tier == LEAF_TO_SPINE] - graph.hosts)
    assert set(per_leaf.tolist()) == {40} and graph.hosts_per_leaf == 36
    t = transport_for(valid.technologies["ddc"], leaf)
    assert 40 * t.fabric_share > 36 * t.payload_share


def test_an_in_order_receiver_pays_go_back_n_for_spraying() -> None:
    # 4 leaves of 4 hosts, 4 uplinks each: spraying over U = 4 paths lets a packet overtake
    # the one before it with share q = (1 - 1/U) / 2 = 3/8; an RC receiver takes each as a
    # loss and the sender resends its window of W packets (one leaf-spine-leaf round trip at
    # the host rate), so a useful packet costs 1 + q W on the wire.
    graph, valid = leaf_spine_graph(leaves=4, spines=4, hosts_per_leaf=4, tech="roce_v2")
    tech, switch = valid.technologies["roce_v2"], valid.switches["roce_v2"]
    frame = tech.mtu_bytes + tech.header_bytes.value
    sprayed = transport_for(tech, switch, routing="spray")
    rc = with_go_back_n(sprayed, graph, frame)
    path = [
        int(graph.host_up_link[0]),
        int(graph.leaf_up_links[0, 0]),
        int(graph.link_reverse[graph.leaf_up_links[0, 0]]),
        int(graph.host_down_link[0]),
    ]
    rate = 100.0 / 8  # bytes per ns
    one_way = 2 * graph.nic_latency_ns + graph.link_latency_ns[path].sum() + frame / rate
    window = 2 * one_way * rate / frame
    assert rc.go_back_n_share == pytest.approx(1 / (1 + 3 / 8 * window))
    assert rc.payload_share == pytest.approx(sprayed.payload_share * rc.go_back_n_share)
    # A permutation at line rate under spraying takes S / (B share) with a reordering NIC, and
    # 1 / go_back_n_share as long with the RC receiver.
    traffic = permutation(one_gpu_per_node(16), S, seed=1)
    placed = simulate(graph, traffic, dataclasses.replace(sprayed, delivery="nic_reorder"))
    resent = simulate(graph, traffic, rc)
    assert resent.transfer_us == pytest.approx(placed.transfer_us / rc.go_back_n_share, rel=1e-6)
    # Nothing to pay for a pinned path, a reordering NIC, an unordered transport or a
    # scheduled fabric's reassembly.
    assert with_go_back_n(transport_for(tech, switch), graph, frame).go_back_n_share == 1.0
    for other in ("spectrum_x", "uec", "ddc"):
        t, sw = _catalog(other, "sn5600")
        assert with_go_back_n(transport_for(t, sw, routing="spray"), graph, frame) == (
            transport_for(t, sw, routing="spray")
        )
