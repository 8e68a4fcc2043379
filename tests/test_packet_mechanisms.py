"""The packet level's mechanisms of the newer Ethernet fabrics, on tiny fabrics.

Spraying with the three receivers (go-back-N, NIC reordering, selective repeat), packet
trimming with its NACK, the scheduled (VOQ) fabric with its cells, Spectrum-X's telemetry
congestion control and UEC NSCC. Every expected value is derived in the test: a link carrying
``k`` flows gives each at most ``1/k`` of it; a trimmed packet is resent once per trim; a
grant comes back one fabric round trip after the request; a cell adds its header per cell.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from fabricplan.catalog.loader import load_catalog
from fabricplan.errors import ModelError
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.packet.ecn import EcnSpec
from fabricplan.sim.packet.hpcc import HpccSpec
from fabricplan.sim.packet.network import PacketNetwork, dumbbell, network_from_graph, star
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import (
    RTO_US,
    SUPERNIC_REORDER_WINDOW_PACKETS,
    PacketSpec,
    packet_spec_for,
)
from fabricplan.sim.path import pinned_paths
from fabricplan.sim.traffic import GpuLayout, incast
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
CELL_BYTES = 256
CELL_HEADER_BYTES = 16


def _wire_us(payload_bytes: float, speed_gbps: float = SPEED_GBPS) -> float:
    """Time to carry ``payload_bytes`` (with a header per packet) at ``speed_gbps``, µs."""
    packets = math.ceil(payload_bytes / MTU)
    return (payload_bytes + packets * HEADER) * 8 / (speed_gbps * 1e3)


# --- spraying and the receivers -------------------------------------------------------------


def _clos() -> tuple[PacketNetwork, Any]:
    """4 leaves x 4 hosts, 4 uplinks each over 4 spines: non-blocking."""
    graph, _ = leaf_spine_graph(leaves=4, spines=4, hosts_per_leaf=4, tech="roce_v2")
    return network_from_graph(graph, 16e6), graph


def _shift(hosts: int, by: int) -> tuple[list[int], list[int]]:
    src = list(range(hosts))
    return src, [(h + by) % hosts for h in src]


def _colliding_seed(graph: Any, src: list[int], dst: list[int]) -> tuple[int, int]:
    """The first seed whose ECMP paths put more than one flow on some link, and that count."""
    ids = np.arange(len(src), dtype=np.int64)
    for seed in range(50):
        paths = pinned_paths(graph, "ecmp", np.array(src), np.array(dst), ids, seed)
        links = paths[paths >= 0]
        load = int(np.bincount(links).max())
        if load > 1:
            return seed, load
    raise AssertionError("no ECMP collision in 50 seeds (4 flows on 4 uplinks collide 90 %)")


def test_spraying_removes_the_permutation_collisions_ecmp_has() -> None:
    net, graph = _clos()
    size = 400_000
    src, dst = _shift(16, 4)  # every host to the same place on the next leaf
    seed, load = _colliding_seed(graph, src, dst)
    traffic = custom_flows(src, dst, size)
    ecmp = simulate_packet(net, traffic, lossless_packet_spec("pfc", "none", "ecmp"), seed=seed)
    spray = simulate_packet(
        net, traffic, lossless_packet_spec("pfc", "none", "spray", "nic_reorder"), seed=seed
    )
    assert ecmp.status == spray.status == "done"
    # k flows pinned to one link share it: the last of them needs k times its wire time.
    assert ecmp.completion_us >= 0.95 * load * _wire_us(size)
    # Sprayed over the four uplinks every flow runs at its line rate (non-blocking fabric).
    assert spray.completion_us <= 1.1 * _wire_us(size) + 10.0
    assert spray.fct_us.min() >= _wire_us(size)
    assert spray.counters["retransmits"] == 0
    assert spray.counters["delivered_bytes"] == traffic.total_bytes


@pytest.mark.parametrize("delivery", ["nic_reorder", "out_of_order"])
def test_in_order_receiver_pays_for_spraying_and_reordering_ones_do_not(delivery: str) -> None:
    net = slow_spine_dumbbell()
    size = 200_000
    traffic = custom_flows([0], [2], size)  # across the two leaves
    ordered = simulate_packet(
        net, traffic, lossless_packet_spec("pfc", "none", "spray", "in_order")
    )
    placed = simulate_packet(net, traffic, lossless_packet_spec("pfc", "none", "spray", delivery))
    assert ordered.status == placed.status == "done"
    # Every other packet takes the slow spine and is overtaken: go-back-N discards the
    # overtakers and sends them again; a reordering receiver places them.
    assert ordered.ooo_discards.sum() > 0
    assert ordered.retransmits.sum() >= ordered.ooo_discards.sum()
    assert placed.retransmits.sum() == 0 and placed.ooo_discards.sum() == 0
    # Placed in any order, the flow takes its wire time plus the slow way's 4 µs (and the
    # path latency); go-back-N takes longer.
    assert placed.completion_us <= _wire_us(size) + 4.0 + 15.0
    assert ordered.completion_us > placed.completion_us


def test_a_bounded_reorder_window_discards_what_lies_beyond_it() -> None:
    net = slow_spine_dumbbell()
    traffic = custom_flows([0], [2], 200_000)
    # The slow way is 4 µs behind: about 12 packets at 100G overtake each slow one. A window
    # of 2 cannot hold them; an unbounded one can.
    small = simulate_packet(
        net,
        traffic,
        lossless_packet_spec("pfc", "none", "spray", "nic_reorder", reorder_window_packets=2),
    )
    unbounded = simulate_packet(
        net, traffic, lossless_packet_spec("pfc", "none", "spray", "nic_reorder")
    )
    assert small.status == unbounded.status == "done"
    assert small.ooo_discards.sum() > 0
    assert unbounded.ooo_discards.sum() == 0


# --- packet trimming ------------------------------------------------------------------------


def _incast(
    spec: PacketSpec, senders: int = 8, size: float = 200_000, buffer_bytes: float = 300_000
) -> PacketSimResult:
    net = star(senders + 1, delay_ns=100.0, buffer_bytes=buffer_bytes)
    return simulate_packet(net, incast(GpuLayout(senders + 1, 1, 1), senders, size), spec)


def test_trimming_turns_an_overflow_into_a_header_and_a_fast_retransmit() -> None:
    senders, size = 8, 200_000
    dropped = _incast(lossless_packet_spec("none", "none", "spray", "out_of_order"), senders, size)
    trimmed = _incast(
        lossless_packet_spec("none", "none", "spray", "out_of_order", packet_trimming=True),
        senders,
        size,
    )
    assert dropped.status == trimmed.status == "done"
    # Without trimming the overflow is lost: found only by the retransmission timer.
    assert dropped.counters["drops"] > 0 and dropped.counters["timeouts"] > 0
    assert dropped.completion_us >= RTO_US
    # With it nothing is lost and no timer fires: each trimmed header is NACKed at once and
    # its packet sent again, exactly once per trim.
    c = trimmed.counters
    assert c["drops"] == 0 and c["timeouts"] == 0
    assert c["trims"] > 0
    assert c["retransmits"] == c["trims"] == int(trimmed.trims.sum())
    assert trimmed.duplicates.sum() == 0
    assert c["delivered_bytes"] == senders * size
    # The receiver's link carries every payload once plus one header per trim; the rest is a
    # few round trips (each about 1 µs here).
    floor = _wire_us(senders * size)
    assert trimmed.completion_us >= floor
    assert trimmed.completion_us <= floor + c["trims"] * HEADER * 8 / 100e3 + 10.0
    assert trimmed.stats().trims == c["trims"]


def test_trimming_with_go_back_n_still_needs_no_timeout() -> None:
    result = _incast(lossless_packet_spec("none", "none", "ecmp", "in_order", packet_trimming=True))
    assert result.status == "done"
    assert result.counters["timeouts"] == 0 and result.counters["drops"] == 0
    assert result.counters["trims"] > 0
    # Go-back-N resends what followed the trimmed packet too.
    assert result.counters["retransmits"] > result.counters["trims"]


# --- scheduled fabric (VOQ) -----------------------------------------------------------------


def _victim_run(fc: str, cc: str, routing: str, **changes: Any) -> PacketSimResult:
    """Hosts 1-3 (left) send to host 4 (right), host 0 (left) to host 5 (right); the leaves
    are joined by an 800G link, so the only overloaded port is the one to host 4."""
    net = dumbbell(4, bottleneck_gbps=800.0, delay_ns=500.0, buffer_bytes=2e6)
    traffic = custom_flows([1, 2, 3, 0], [4, 4, 4, 5], 300_000)
    return simulate_packet(net, traffic, lossless_packet_spec(fc, cc, routing, **changes))


def _scheduled(**changes: Any) -> dict[str, Any]:
    return {"cell_bytes": CELL_BYTES, "cell_header_bytes": CELL_HEADER_BYTES, **changes}


def test_a_voq_fabric_spares_the_victim_that_pfc_blocks_behind_an_incast() -> None:
    size = 300_000
    pfc = _victim_run("pfc", "none", "ecmp")
    voq = _victim_run("scheduled", "voq_scheduled", "spray", **_scheduled())
    assert pfc.status == voq.status == "done"
    victim_pfc, victim_voq = pfc.fct_us[3], voq.fct_us[3]
    # PFC pauses the shared 800G link for the incast's sake: the victim waits behind it.
    assert pfc.counters["pause_frames"] > 0
    assert victim_pfc >= 1.5 * _wire_us(size)
    # The VOQ holds the incast's packets at the ingress leaf, queued per egress port: the
    # victim is granted at its own port's rate and runs at line rate (plus one request-grant
    # round trip).
    assert victim_voq <= 1.1 * _wire_us(size) + 10.0
    # Lossless by scheduling: no pause, no drop, and the incast still cannot beat N S / B.
    assert voq.counters["pause_frames"] == 0 and voq.counters["drops"] == 0
    assert voq.completion_us >= _wire_us(3 * size)
    # Granted at its drain rate, the overloaded port's queue stays a few packets deep.
    down = int(voq.network.host_down_link[4])
    assert voq.link_max_queue_bytes[down] <= 4 * (MTU + HEADER)


def test_a_grant_comes_back_one_fabric_round_trip_after_the_request() -> None:
    net = dumbbell(1, delay_ns=700.0)
    result = simulate_packet(
        net,
        custom_flows([0], [1], 100_000),
        lossless_packet_spec("scheduled", "voq_scheduled", "spray", **_scheduled()),
    )
    assert result.status == "done"
    c = result.counters
    assert c["voq_packets"] == math.ceil(100_000 / MTU)
    # A lone flow arrives at its egress port's rate: no packet waits for another's grant,
    # each waits exactly the request's and the grant's way over the 700 ns fabric link.
    mean_wait_ps = c["voq_wait_ps"] / c["voq_packets"]
    assert abs(mean_wait_ps - 2 * 700_000) <= 2
    assert result.stats().voq_wait_us == pytest.approx(1.4, abs=1e-5)


def test_cells_add_their_headers_on_fabric_links_only() -> None:
    net = dumbbell(1)
    size = 100_000
    result = simulate_packet(
        net,
        custom_flows([0], [1], size),
        lossless_packet_spec("scheduled", "voq_scheduled", "spray", **_scheduled()),
    )
    assert result.status == "done"
    packets = math.ceil(size / MTU)
    frames = [MTU + HEADER] * (packets - 1) + [size - (packets - 1) * MTU + HEADER]
    cells = sum(frame + math.ceil(frame / CELL_BYTES) * CELL_HEADER_BYTES for frame in frames)
    fabric = (net.link_src >= net.hosts) & (net.link_dst >= net.hosts)
    forward = int(np.flatnonzero(fabric & (net.link_src < net.link_dst))[0])
    host_up = int(net.host_up_link[0])
    assert result.link_tx_bytes[forward] == cells
    assert result.link_tx_bytes[host_up] == sum(frames)


def test_voq_scheduled_without_a_scheduled_fabric_is_refused() -> None:
    with pytest.raises(ModelError, match="FP547"):
        lossless_packet_spec("pfc", "voq_scheduled", "spray").check()


# --- congestion control ---------------------------------------------------------------------


def test_spectrum_x_cc_is_the_telemetry_law_under_its_own_settings() -> None:
    buffer = 4e6  # room for the PFC headroom of nine ports
    hpcc = _incast(lossless_packet_spec("pfc", "hpcc", "adaptive"), buffer_bytes=buffer)
    same = _incast(lossless_packet_spec("pfc", "spectrum_x_cc", "adaptive"), buffer_bytes=buffer)
    other = _incast(
        lossless_packet_spec("pfc", "spectrum_x_cc", "adaptive", spectrum_x=HpccSpec(eta=0.7)),
        buffer_bytes=buffer,
    )
    none = _incast(lossless_packet_spec("pfc", "none", "adaptive"), buffer_bytes=buffer)
    assert hpcc.status == same.status == other.status == none.status == "done"
    # The same law with the same numbers gives the same run; its own numbers move it.
    assert np.array_equal(hpcc.finish_us, same.finish_us)
    assert not np.array_equal(other.finish_us, same.finish_us)
    # Like HPCC it keeps the incast queue short where PFC alone lets it fill.
    assert same.switch_max_bytes.max() < none.switch_max_bytes.max()


def test_nscc_shrinks_the_windows_so_fewer_packets_are_trimmed() -> None:
    # Marking well below the 150 kB a lossy queue may reach in this 300 kB switch.
    ecn = EcnSpec(kmin_bytes=20_000, kmax_bytes=100_000, pmax=0.2)
    none = _incast(
        lossless_packet_spec("none", "none", "spray", "out_of_order", packet_trimming=True)
    )
    nscc = _incast(
        lossless_packet_spec(
            "none", "uec_nscc", "spray", "out_of_order", packet_trimming=True, ecn=ecn
        )
    )
    assert none.status == nscc.status == "done"
    assert nscc.counters["timeouts"] == 0
    assert nscc.counters["ecn_marks"] > 0
    assert nscc.counters["trims"] < none.counters["trims"]
    assert nscc.switch_max_bytes.max() <= none.switch_max_bytes.max()
    # A window cannot beat the receiver's link either.
    assert nscc.completion_us >= _wire_us(8 * 200_000)


# --- the catalog's technologies -------------------------------------------------------------


def _entries(tech_id: str) -> tuple[TechnologySpec, SwitchSpec]:
    catalog = load_catalog()
    tech = catalog.get_typed(tech_id, TechnologySpec)
    switches = [s for s in catalog.of_kind(SwitchSpec) if s.family == tech.switch_family]
    wanted = [s for s in switches if not tech.switch_asics or s.asic in tech.switch_asics]
    return tech, (wanted or switches)[0]


def test_the_catalog_technologies_get_their_mechanisms() -> None:
    spx_tech, spx_switch = _entries("spectrum_x")
    spx = packet_spec_for(spx_tech, spx_switch)
    assert (spx.link_flow_control, spx.congestion_control, spx.receiver) == (
        "pfc",
        "spectrum_x_cc",
        "nic_reorder",
    )
    assert spx.routing == ("adaptive" if spx_switch.adaptive_routing else "ecmp")
    assert spx.reorder_window_packets == SUPERNIC_REORDER_WINDOW_PACKETS
    ddc = packet_spec_for(*_entries("ddc"))
    assert (ddc.link_flow_control, ddc.congestion_control, ddc.routing) == (
        "scheduled",
        "voq_scheduled",
        "spray",
    )
    assert ddc.cell_bytes > 0 and ddc.cell_header_bytes > 0
    uec_tech, uec_switch = _entries("uec")
    uec = packet_spec_for(uec_tech, uec_switch)
    assert (uec.link_flow_control, uec.congestion_control, uec.receiver) == (
        "none",
        "uec_nscc",
        "out_of_order",
    )
    # Trimming needs a switch that trims.
    assert uec.packet_trimming == uec_switch.packet_trimming
    trimming = uec_switch.model_copy(update={"packet_trimming": True})
    assert packet_spec_for(uec_tech, trimming).packet_trimming


@pytest.mark.parametrize("tech_id", ["spectrum_x", "ddc", "uec"])
def test_each_new_technology_runs_an_incast_to_the_end(tech_id: str) -> None:
    tech, switch = _entries(tech_id)
    spec = dataclasses.replace(packet_spec_for(tech, switch), switch_buffer_bytes=16e6)
    graph, _ = leaf_spine_graph(leaves=2, spines=2, hosts_per_leaf=2, tech="roce_v2")
    net = network_from_graph(graph, 16e6)
    traffic = incast(GpuLayout(4, 1, 1), 3, 200_000)
    result = simulate_packet(net, traffic, spec)
    assert result.status == "done"
    assert result.counters["delivered_bytes"] == traffic.total_bytes
    assert result.stats().delivery == spec.receiver


def test_the_packet_level_models_every_routing_of_the_vocabulary() -> None:
    from typing import get_args

    from fabricplan.sim.mechanism import RoutingName

    tech, switch = _entries("roce_v2")
    for routing in get_args(RoutingName):  # flowlet included: no FP538 left for routing
        assert packet_spec_for(tech, switch, routing=routing).routing == routing
