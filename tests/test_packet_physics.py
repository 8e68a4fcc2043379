"""Physics of the packet-level simulator on tiny fabrics: what must hold whatever the numbers.

Expected values come from first principles in each test (N-to-1 incast cannot beat N·S/B; a
lossless fabric loses nothing; go-back-N resends exactly what was dropped or discarded).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from fabricplan.errors import ModelError
from fabricplan.sim.packet.dcqcn import DcqcnSpec
from fabricplan.sim.packet.ecn import EcnSpec
from fabricplan.sim.packet.network import dumbbell, network_from_graph, ring, star
from fabricplan.sim.packet.pfc import PfcSpec
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import build_state, run_state, simulate_packet
from fabricplan.sim.packet.spec import FaultSpec, PacketSpec, packet_spec
from fabricplan.sim.packet.state import C_CNPS, F_RX_UNIQUE, PI_END, grown
from fabricplan.sim.traffic import GpuLayout, StepSpec, Traffic, incast, permutation

SPEED_GBPS = 100.0
MTU = 4096
HEADER = 82


def _flows(
    src: list[int], dst: list[int], size: float, offset_us: list[float] | None = None
) -> Traffic:
    n = len(src)
    return Traffic(
        src=np.array(src, dtype=np.int64),
        dst=np.array(dst, dtype=np.int64),
        size_bytes=np.full(n, float(size)),
        step=np.zeros(n, dtype=np.int64),
        offset_us=np.array(offset_us or [0.0] * n),
        steps=(StepSpec("flows", "custom"),),
    )


def _spec(fc: str, cc: str = "none", routing: str = "ecmp", **changes: Any) -> PacketSpec:
    spec = packet_spec(fc, cc, routing, mtu_bytes=MTU, header_bytes=HEADER)  # type: ignore[arg-type]
    return dataclasses.replace(spec, lossless_classes=(1,), **changes)


def _incast_run(
    fc: str, cc: str = "none", senders: int = 8, size: float = 200_000, **changes: Any
) -> PacketSimResult:
    net = star(senders + 1, delay_ns=100.0, buffer_bytes=600_000)
    traffic = incast(GpuLayout(senders + 1, 1, 1), senders, size)
    return simulate_packet(net, traffic, _spec(fc, cc, **changes))


def _wire_us(payload_bytes: float) -> float:
    """Time to carry ``payload_bytes`` (with headers) at the line rate, µs."""
    packets = np.ceil(payload_bytes / MTU)
    return float((payload_bytes + packets * HEADER) * 8 / (SPEED_GBPS * 1e3))


@pytest.mark.parametrize("fc", ["pfc", "credit"])
def test_lossless_incast_loses_nothing_and_cannot_beat_n_s_over_b(fc: str) -> None:
    senders, size = 8, 200_000
    result = _incast_run(fc, senders=senders, size=size)
    assert result.status == "done"
    assert result.counters["drops"] == 0
    assert result.counters["retransmits"] == 0
    assert result.counters["delivered_bytes"] == senders * size  # bytes conserved
    # N-to-1 incast: the receiver's link carries N·S, so completion >= N·S/B.
    assert result.completion_us >= _wire_us(senders * size)
    assert result.completion_us <= 1.2 * _wire_us(senders * size) + 20
    # The incast overloads the switch: link-level flow control acted.
    assert result.link_stall_us.sum() > 0
    assert (result.switch_max_bytes <= result.switch_buffer_bytes).all()
    # The receiver's link is the bottleneck: busy for nearly the whole run, never above capacity.
    util = result.utilisation()
    assert util.max() <= 1.0 + 1e-9
    assert util.max() >= _wire_us(senders * size) / result.end_us - 1e-9


def test_pfc_pauses_the_senders_and_credits_stall_them() -> None:
    pfc = _incast_run("pfc")
    credit = _incast_run("credit")
    net = pfc.network
    host_up = net.host_up_link[1:]
    assert pfc.counters["pause_frames"] > 0
    assert (pfc.link_pause_frames[host_up] > 0).all()
    assert credit.counters["pause_frames"] == 0
    assert credit.counters["stalls"] > 0
    assert (credit.link_stall_us[host_up] > 0).all()


def test_lossy_incast_drops_and_go_back_n_resends_exactly_what_was_lost() -> None:
    result = _incast_run("none", rto_us=500.0)
    assert result.status == "done"
    drops = result.counters["drops"]
    assert drops > 0
    assert result.counters["delivered_bytes"] == 8 * 200_000
    # Every data packet sent is delivered once, dropped, or discarded out of order by the
    # receiver; go-back-N resends the dropped and the discarded, and nothing else.
    assert (result.sent_packets - result.packets == result.retransmits).all()
    assert result.retransmits.sum() == drops + result.ooo_discards.sum() + result.duplicates.sum()
    assert result.duplicates.sum() == 0
    assert (result.switch_max_bytes <= result.switch_buffer_bytes).all()


def test_queue_never_exceeds_the_switch_buffer_under_pfc_with_small_buffers() -> None:
    net = star(9, delay_ns=100.0, buffer_bytes=400_000)
    traffic = incast(GpuLayout(9, 1, 1), 8, 300_000)
    result = simulate_packet(net, traffic, _spec("pfc"))
    assert result.status == "done" and result.counters["drops"] == 0
    assert (result.switch_max_bytes <= result.switch_buffer_bytes).all()
    assert result.counters["pause_frames"] > 0


def test_too_little_headroom_loses_packets_on_a_lossless_class() -> None:
    # 1 µs links: 25 kB are on the cable both ways when the XOFF leaves; 2 frames are too few.
    net = star(9, delay_ns=1000.0, buffer_bytes=2_000_000)
    traffic = incast(GpuLayout(9, 1, 1), 8, 200_000)
    ok = simulate_packet(net, traffic, _spec("pfc"))
    starved = simulate_packet(
        net, traffic, _spec("pfc", pfc=PfcSpec(headroom_bytes=2 * (MTU + HEADER)), rto_us=200.0)
    )
    assert ok.counters["lossless_drops"] == 0
    assert starved.counters["lossless_drops"] > 0
    assert starved.status == "done"  # go-back-N recovers them


def test_headroom_that_does_not_fit_the_buffer_is_an_error() -> None:
    with pytest.raises(ModelError, match="FP542"):
        simulate_packet(
            star(9, buffer_bytes=100_000), incast(GpuLayout(9, 1, 1), 8, 10_000), _spec("pfc")
        )


def test_pfc_pause_spreads_upstream_to_a_victim_flow() -> None:
    size = 400_000
    incast_src = [1, 2, 3, 5, 6, 7]  # all to host 4 on the right switch
    victim = (0, 5)  # left to right, to an uncongested host
    net = dumbbell(4, delay_ns=100.0, buffer_bytes=600_000)
    both = _flows([*incast_src, victim[0]], [4] * 6 + [victim[1]], size)
    alone = _flows([victim[0]], [victim[1]], size)
    spread = simulate_packet(net, both, _spec("pfc"))
    clean = simulate_packet(net, alone, _spec("pfc"))
    assert spread.status == clean.status == "done"
    ideal = _wire_us(size)
    assert clean.fct_us[0] < 1.3 * ideal + 5
    # The right switch pauses the shared left->right link; the victim waits behind it.
    assert spread.fct_us[-1] > 2.0 * ideal
    bottleneck = int(np.flatnonzero((net.link_src == 8) & (net.link_dst == 9))[0])
    assert spread.link_stall_us[bottleneck] > 0
    assert spread.counters["drops"] == 0


def test_dcqcn_flows_converge_to_a_fair_share() -> None:
    # A starts alone at line rate; B joins 100 µs later. After the first cuts DCQCN's
    # increase and decrease laws drive both to the same rate: over a later millisecond they
    # deliver the same bytes. (DCQCN paper timers, so that it settles within milliseconds.)
    net = dumbbell(2, delay_ns=1000.0)
    traffic = _flows([0, 1], [2, 3], 100_000_000, [0.0, 100.0])
    paper = DcqcnSpec(
        dce_tcp_g=1020,
        dce_tcp_rtt_us=55.0,
        rate_reduce_monitor_period_us=50.0,
        rpg_time_reset_us=55.0,
        rpg_byte_reset=10_000_000,
        rpg_ai_rate_mbps=40.0,
        rpg_hai_rate_mbps=200.0,
        rpg_threshold=5,
        clamp_tgt_rate=True,
    )
    state = build_state(net, traffic, _spec("pfc", "dcqcn", dcqcn=paper), seed=0)
    received = []
    for end_us in (2000, 3000):
        state.prm_i[PI_END] = end_us * 1_000_000
        state, _ = run_state(state)
        received.append(state.fi[:, F_RX_UNIQUE].copy())
    window = received[1] - received[0]
    assert state.cnt[C_CNPS] > 0
    assert window.min() > 0
    assert window[0] == pytest.approx(window[1], rel=0.1)


def test_ecn_thresholds_above_the_pfc_trigger_leave_dcqcn_blind() -> None:
    good = _incast_run("pfc", "dcqcn", ecn=EcnSpec(kmin_bytes=5_000, kmax_bytes=100_000, pmax=0.2))
    blind = _incast_run(
        "pfc", "dcqcn", ecn=EcnSpec(kmin_bytes=50_000_000, kmax_bytes=60_000_000, pmax=0.2)
    )
    assert good.counters["cnps"] > 0
    assert blind.counters["cnps"] == 0
    assert blind.counters["pause_frames"] > good.counters["pause_frames"]


def test_hpcc_keeps_the_incast_queue_short() -> None:
    plain = _incast_run("pfc", "none", size=400_000)
    hpcc = _incast_run("pfc", "hpcc", size=400_000)
    assert hpcc.status == "done"
    into_receiver = hpcc.network.host_down_link[0]
    # After the first window's burst HPCC drains the queue (η = 0.95); without congestion
    # control it stays at the PFC threshold.
    late = slice(hpcc.sample_us.size // 2, None)
    assert (
        hpcc.queue_samples[late, into_receiver].mean()
        < 0.25 * plain.queue_samples[late, into_receiver].mean()
    )


def test_ib_congestion_control_marks_fecn_and_slows_the_sources() -> None:
    plain = _incast_run("credit", "none", size=400_000)
    ibcc = _incast_run("credit", "ib_cc", size=400_000)
    assert ibcc.status == "done" and ibcc.counters["drops"] == 0
    assert ibcc.counters["cnps"] > 0  # BECNs returned for FECN-marked packets
    assert plain.counters["cnps"] == 0
    assert ibcc.link_max_queue_bytes.max() <= plain.link_max_queue_bytes.max()


def test_a_receiver_that_stops_draining_stalls_credits_without_loss() -> None:
    net = star(3, delay_ns=100.0)
    spec = _spec("credit", faults=FaultSpec(stuck_hosts=((0, 0.0),)), rto_us=50.0)
    result = simulate_packet(net, _flows([1], [0], 2_000_000), spec)
    assert result.status == "stalled"
    assert result.counters["drops"] == 0
    assert result.counters["delivered_bytes"] == 0
    assert result.link_stall_us[net.host_up_link[1]] > 0


def test_pfc_storm_blocks_a_victim_and_the_watchdog_frees_it() -> None:
    net = dumbbell(2, delay_ns=100.0, buffer_bytes=600_000)
    traffic = _flows([0, 1], [2, 3], 1_000_000)  # 0 -> 2 (stuck receiver), victim 1 -> 3
    faults = FaultSpec(stuck_hosts=((2, 0.0),))
    storm = simulate_packet(net, traffic, _spec("pfc", faults=faults, rto_us=100.0))
    watched = simulate_packet(
        net,
        traffic,
        _spec(
            "pfc",
            faults=faults,
            rto_us=100.0,
            pfc=PfcSpec(
                watchdog=True,
                watchdog_detect_us=20.0,
                watchdog_poll_us=10.0,
                watchdog_restore_us=10_000.0,
            ),
        ),
    )
    assert storm.status == "stalled" and np.isnan(storm.finish_us[1])
    assert storm.counters["pause_frames"] > 0
    assert watched.counters["watchdog_triggers"] >= 1
    assert np.isfinite(watched.finish_us[1])
    assert np.isnan(watched.finish_us[0])


def test_cyclic_buffer_dependency_deadlocks_lossless_and_not_lossy() -> None:
    # Five switches in a ring; every flow goes two switches clockwise (its shortest path), so
    # each inter-switch link waits on the next one: a cycle of buffer dependencies.
    net = ring(5, delay_ns=100.0, buffer_bytes=600_000)
    src = list(range(5))
    dst = [(h + 2) % 5 for h in src]
    traffic = _flows(src, dst, 3_000_000)
    lossless = simulate_packet(net, traffic, _spec("pfc", rto_us=100.0))
    lossy = simulate_packet(net, traffic, _spec("none"))
    assert lossless.status == "stalled"
    assert np.isnan(lossless.finish_us).any()
    assert lossy.status == "done"


def _leaf_spine() -> object:
    from fabricplan.spec import parse_spec
    from fabricplan.topology.designer import design_fabric
    from fabricplan.topology.graph import fabric_graph

    valid = parse_spec(
        {
            "cluster": {
                "gpus": 32,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "fat_tree",
                "tiers": 2,
                "management_ports": 0,
                "switch": {"roce_v2": {"ports": 8, "port_speed_gbps": 100}},
            },
        }
    )
    return fabric_graph(design_fabric(valid, "roce_v2"), valid)


def test_adaptive_routing_beats_ecmp_collisions_on_a_permutation() -> None:
    graph = _leaf_spine()
    net = network_from_graph(graph, 16e6)  # type: ignore[arg-type]
    traffic = permutation(GpuLayout(32, 1, 1), 500_000, seed=3)
    ecmp = simulate_packet(net, traffic, _spec("pfc", routing="ecmp"), seed=3)
    adaptive = simulate_packet(net, traffic, _spec("pfc", routing="adaptive"), seed=3)
    assert ecmp.status == adaptive.status == "done"
    assert adaptive.counters["delivered_bytes"] == traffic.total_bytes
    assert adaptive.completion_us < ecmp.completion_us
    # No flow can beat its own line rate.
    assert adaptive.fct_us.min() >= _wire_us(500_000)


def test_same_seed_same_run_and_the_seed_moves_ecmp() -> None:
    graph = _leaf_spine()
    net = network_from_graph(graph, 16e6)  # type: ignore[arg-type]
    traffic = permutation(GpuLayout(32, 1, 1), 200_000, seed=1)
    spec = _spec("pfc", "dcqcn")
    a = simulate_packet(net, traffic, spec, seed=7)
    b = simulate_packet(net, traffic, spec, seed=7)
    c = simulate_packet(net, traffic, spec, seed=8)
    assert np.array_equal(a.finish_us, b.finish_us)
    assert a.counters == b.counters
    assert not np.array_equal(a.finish_us, c.finish_us)


def test_steps_wait_for_their_dependencies() -> None:
    first = StepSpec("first", "chain")
    second = StepSpec("second", "chain", deps=(0,), delay_us=5.0)
    traffic = Traffic(
        src=np.array([0, 1]),
        dst=np.array([1, 2]),
        size_bytes=np.array([100_000.0, 100_000.0]),
        step=np.array([0, 1]),
        offset_us=np.zeros(2),
        steps=(first, second),
    )
    result = simulate_packet(star(3), traffic, _spec("pfc"))
    assert result.status == "done"
    assert result.step_start_us[1] == pytest.approx(result.step_finish_us[0] + 5.0)
    assert result.start_us[1] >= result.finish_us[0]


def test_a_run_continues_unchanged_after_its_tables_grow() -> None:
    net = star(9, delay_ns=100.0, buffer_bytes=600_000)
    traffic = incast(GpuLayout(9, 1, 1), 8, 300_000)
    spec = _spec("pfc", "dcqcn")
    whole, _ = run_state(build_state(net, traffic, spec, seed=4))
    part = build_state(net, traffic, spec, seed=4)
    part.prm_i[PI_END] = 30 * 1_000_000  # stop inside the incast, with packets in flight
    part, _ = run_state(part)
    part = grown(part, 2 * part.pi.shape[0], 2 * part.heap.shape[0])
    part.prm_i[PI_END] = whole.prm_i[PI_END]
    part, _ = run_state(part)
    assert np.array_equal(part.fi, whole.fi)
    assert np.array_equal(part.cnt[: C_CNPS + 1], whole.cnt[: C_CNPS + 1])


def test_probes_are_an_input_and_sample_only_the_links_asked_for() -> None:
    net = star(4)
    traffic = incast(GpuLayout(4, 1, 1), 3, 300_000)
    spec = packet_spec("pfc", "none", "ecmp")
    every = simulate_packet(net, traffic, spec)
    into_receiver = int(np.argmax(every.link_max_queue_bytes))
    one = simulate_packet(net, traffic, dataclasses.replace(spec, probe_links=(into_receiver,)))
    assert every.queue_samples.shape[1] == net.links
    assert one.queue_samples.shape[1] == 1 and one.probe_links.tolist() == [into_receiver]
    assert np.array_equal(one.queue_samples[:, 0], every.queue_samples[:, into_receiver])
    assert one.stats().queue_depth.series[0].link == every.link_name(into_receiver)
    with pytest.raises(ModelError, match="FP541"):
        simulate_packet(net, traffic, dataclasses.replace(spec, probe_links=(net.links,)))
