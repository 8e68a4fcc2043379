"""Ultra Ethernet's optional link layer from the spec: ``fabric.uec`` (link-level retry, credit
flow control) and ``fabric.frame_error_ratio``, read by every level through the deployed
technology.

Expected values from first principles: a frame the link replays costs a link round trip, never
an end-to-end timer; a sender that sends only against credits cannot overflow the buffer it was
given, so an incast that drops on a lossy fabric drops nothing; what the spec does not turn on
stays off.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from fabricplan.analytic.link_error import link_error_times, with_link_errors
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import fabric_profile
from fabricplan.analytic.traffic import span_switch_hops
from fabricplan.analytic.workload import resolve_workload, sequences_per_replica
from fabricplan.errors import SpecError
from fabricplan.evaluate import evaluate_one
from fabricplan.model.results import PerfRequest
from fabricplan.sim.flow.transport import transport_for
from fabricplan.sim.packet.credit import CBFC_CREDIT_BYTES
from fabricplan.sim.packet.performance import network_for_graph, packet_spec_for_design
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import RTO_US
from fabricplan.sim.run import RunOptions, run_pattern
from fabricplan.sim.traffic import GpuLayout, incast
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabrics import SPEED_GBPS, custom_flows, leaf_spine_graph


def _uec(**fabric: Any) -> dict[str, Any]:
    return {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["uec"], **fabric}}


# --- the spec ---------------------------------------------------------------------------------


def test_the_link_features_are_off_unless_the_spec_turns_them_on() -> None:
    plain = parse_spec(_uec())
    tech = plain.technologies["uec"]
    assert (tech.link_level_retry, tech.link_flow_control) == (False, "none")
    assert plain.spec.fabric.frame_error_ratio == 0.0
    assert plain.switches["uec"].packet_trimming  # the trimming switch when nothing else is asked


@pytest.mark.parametrize(
    ("features", "retry", "flow_control"),
    [
        ({"link_level_retry": True}, True, "none"),
        ({"credit_flow_control": True}, False, "credit"),
        ({"link_level_retry": True, "credit_flow_control": True}, True, "credit"),
    ],
)
def test_a_feature_turned_on_limits_the_switches_to_those_that_state_it(
    features: dict[str, bool], retry: bool, flow_control: str
) -> None:
    valid = parse_spec(_uec(uec=features))
    tech = valid.technologies["uec"]
    assert (tech.link_level_retry, tech.link_flow_control) == (retry, flow_control)
    tried = valid.switch_candidates["uec"]
    assert tried and all(s.link_level_retry or not retry for s in tried)
    assert all(s.credit_flow_control or flow_control != "credit" for s in tried)
    assert any("fabric.uec" in a for a in valid.assumptions)


def test_a_pinned_switch_without_the_feature_is_refused() -> None:
    with pytest.raises(SpecError, match=r"no link-level retry.*FP620"):
        parse_spec(_uec(uec={"link_level_retry": True}, switch={"uec": "sn5600"}))
    with pytest.raises(SpecError, match=r"no credit-based flow control.*FP620"):
        parse_spec(_uec(uec={"credit_flow_control": True}, switch={"uec": "sn5600"}))


def test_no_switch_with_the_feature_at_the_nic_speed_is_fp661() -> None:
    spec = _uec(uec={"link_level_retry": True})
    spec["cluster"]["nic_speed_gbps"] = 100  # no catalog LLR switch has 100G ports
    with pytest.raises(SpecError, match=r"fabric\.uec: no catalog ethernet switch .*FP661"):
        parse_spec(spec)


@pytest.mark.parametrize("ratio", [-1e-9, 2e-3, 1.0])
def test_the_frame_error_ratio_is_bounded(ratio: float) -> None:
    with pytest.raises(SpecError, match=r"fabric\.frame_error_ratio"):
        parse_spec(_uec(frame_error_ratio=ratio))


def test_uec_features_without_uec_are_refused() -> None:
    spec = {"cluster": {"gpus": 64}, "fabric": {"uec": {"link_level_retry": True}}}
    with pytest.raises(SpecError, match=r"fabric\.uec: .*uec is not in fabric\.technologies"):
        parse_spec(spec)
    with pytest.raises(SpecError, match="FP102"):
        parse_spec(_uec(uec={"llr": True}))


# --- every level reads the deployed technology ----------------------------------------------


def test_every_level_runs_cbfc_and_llr_by_its_mechanism() -> None:
    valid = parse_spec(_uec(uec={"link_level_retry": True, "credit_flow_control": True}))
    design = design_fabric(valid, "uec")
    packet = packet_spec_for_design(valid, "uec")
    assert packet.link_level_retry and packet.lossless
    assert packet.credit.block_bytes == CBFC_CREDIT_BYTES
    flow = transport_for(valid.technologies["uec"], valid.switches["uec"])
    assert flow.lossless and flow.back_pressure
    profile = fabric_profile(valid, design)
    assert profile.link_flow_control == "credit"
    notes = " ".join(profile.notes)
    assert "CBFC" in notes and "LLR" in notes and "packet trimming" not in notes
    # Credits hold the incast's shared ingress: the victim beside it waits (head of line), as
    # on InfiniBand; lossy UEC keeps it at line rate.
    request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**20,), p2p=False, step=False)
    victim = next(n for n in analytic_performance(valid, design, request).notes if "victim" in n)
    lossy = parse_spec(_uec())
    lossy_victim = next(
        n
        for n in analytic_performance(lossy, design_fabric(lossy, "uec"), request).notes
        if "victim" in n
    )
    assert "keeps 100%" in lossy_victim and "keeps 100%" not in victim


# --- the packet level through the spec, on a tiny fabric --------------------------------------

RATIO = 2e-4
"""Per frame and link: a 2 MB flow of 489 frames over 4 links meets about 0.4 corruptions; four
such flows about 1.6."""


def _errored_run(**uec: bool) -> Any:
    graph, valid = leaf_spine_graph(
        leaves=2,
        spines=2,
        hosts_per_leaf=2,
        tech="uec",
        fabric={"frame_error_ratio": RATIO, "uec": uec},
    )
    spec = packet_spec_for_design(valid, "uec", "static", "none")
    traffic = custom_flows([0, 1, 2, 3], [2, 3, 0, 1], 2_000_000)
    return simulate_packet(network_for_graph(graph, valid, "uec"), traffic, spec, seed=2)


def test_llr_from_the_spec_turns_link_errors_into_local_replays() -> None:
    replayed, lost = _errored_run(link_level_retry=True), _errored_run()
    assert replayed.status == lost.status == "done"
    r, x = replayed.counters, lost.counters
    assert r["corrupted_frames"] > 0 and x["corrupted_frames"] > 0
    # Under LLR every corrupted frame is replayed by its link: no drop, no resend, no timer.
    assert r["llr_replays"] == r["corrupted_frames"]
    assert r["drops"] == r["retransmits"] == r["timeouts"] == 0
    # Without it the same kind of error is a drop the unordered transport finds by its timer.
    assert x["llr_replays"] == 0 and x["drops"] == x["corrupted_frames"]
    assert x["timeouts"] > 0
    assert lost.completion_us > replayed.completion_us + 0.9 * RTO_US


def _incast_run(**uec: bool) -> Any:
    small_buffer = {
        "ports": 8,
        "port_speed_gbps": SPEED_GBPS,
        "latency_ns": 300,
        "buffer_bytes": 300_000,
    }
    graph, valid = leaf_spine_graph(
        leaves=2,
        spines=2,
        hosts_per_leaf=4,
        tech="uec",
        fabric={"uec": uec, "switch": {"uec": small_buffer}},
    )
    senders, size = graph.hosts - 1, 400_000
    spec = packet_spec_for_design(valid, "uec", None, "none")
    traffic = incast(GpuLayout(graph.hosts, 1, 1), senders, size)
    result = simulate_packet(network_for_graph(graph, valid, "uec"), traffic, spec, seed=1)
    return result, senders * size


def test_cbfc_from_the_spec_makes_an_incast_lossless() -> None:
    lossy, total = _incast_run()
    credited, _ = _incast_run(credit_flow_control=True)
    assert lossy.status == credited.status == "done"
    # Seven senders into one 100G port through a 300 kB switch: without flow control (and
    # without a switch that trims) the port's queue overflows and drops ...
    assert lossy.counters["drops"] > 0
    # ... with CBFC no sender puts a frame on a link the next hop has no buffer for: nothing
    # dropped or trimmed, nothing resent, no pause frame; senders wait for credits instead.
    c = credited.counters
    assert c["drops"] == c["lossless_drops"] == c["trims"] == c["retransmits"] == 0
    assert c["pause_frames"] == 0 and c["stalls"] > 0
    assert c["delivered_bytes"] == total
    assert credited.completion_us < lossy.completion_us


# --- the training step and the money ----------------------------------------------------------


def _step_s(technology: str, ratio: float, **uec: bool) -> float:
    fabric: dict[str, Any] = {"technologies": [technology], "frame_error_ratio": ratio}
    if uec:
        fabric["uec"] = uec
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": fabric})
    request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**20,), p2p=False)
    step = analytic_performance(valid, design_fabric(valid, technology), request).step
    assert step is not None
    return step.step_s


def test_link_errors_are_charged_to_the_training_step() -> None:
    def charged(technology: str, **uec: bool) -> float:
        return _step_s(technology, 1e-6, **uec) - _step_s(technology, 0.0, **uec)

    replayed = charged("uec", link_level_retry=True)
    lost = charged("uec")
    go_back = charged("roce_v2")
    # A replay costs a link round trip, a loss found by the UET timer about a timer per
    # collective that loses a frame, RC's go-back-N two path round trips (and a tail timer):
    # every one costs step time.
    assert replayed > 0.0 and lost > 0.0 and go_back > 0.0
    # Each gradient bucket crosses the fabric in ~1e5 frames x 4 links per rank: at 1e-6 most
    # buckets lose a frame, so the unordered transport pays a timer per bucket, far more than
    # the few replays LLR makes.
    assert lost > 10 * replayed


def _pipeline_s(ratio: float, **uec: bool) -> float:
    fabric: dict[str, Any] = {"technologies": ["uec"], "frame_error_ratio": ratio, "uec": uec}
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": fabric, "workload": PIPELINE})
    request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**20,), p2p=False)
    step = analytic_performance(valid, design_fabric(valid, "uec"), request).step
    assert step is not None
    return step.comm_by_dimension_s["pp"]


PIPELINE = {"tp": 8, "pp": 4}
"""8-way TP fills a node, so the next of the 4 stages is 32 nodes away, across the fabric."""


def test_pipeline_sends_pay_the_link_error_law_of_the_collectives() -> None:
    # (LLR picks a switch that retries, so the profile is the retrying design's.)
    fabric = _uec(uec={"link_level_retry": True})["fabric"]
    valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": fabric, "workload": PIPELINE})
    profile = fabric_profile(valid, design_fabric(valid, "uec"))
    job = resolve_workload(valid.spec.workload, 1024)
    assert job.tp * job.dp >= profile.nvlink_domain_gpus  # the sends leave the NVLink domain
    # With LLR a corrupted frame costs its rank one link replay: over 2 (m + pp - 1) sends on
    # the 1F1B critical path, each rank's frames of one micro-batch's activations (seq x
    # hidden x 2 B, split over the TP ranks) crossing hops + 1 links.
    per_replica, _ = sequences_per_replica(job)
    sends = 2 * (per_replica + job.pp - 1)
    frames = math.ceil(job.sequence_length * job.hidden * 2 / job.tp / profile.mtu_bytes)
    hops = span_switch_hops(profile, job.tp * job.dp / profile.gpus_per_node + 1)
    replay_us, _, _ = link_error_times(profile, hops)
    ratio = 1e-6
    replayed = _pipeline_s(ratio, link_level_retry=True) - _pipeline_s(0.0, link_level_retry=True)
    expected_s = sends * ratio * frames * (hops + 1) * replay_us * 1e-6
    assert replayed == pytest.approx(expected_s, rel=1e-6)
    # Without LLR the lost frames are found end to end (a UET timer): far more.
    assert _pipeline_s(ratio) - _pipeline_s(0.0) > 10 * replayed


def test_link_errors_move_the_money_of_the_decision() -> None:
    def idle_usd(ratio: float, **uec: bool) -> float:
        fabric: dict[str, Any] = {"technologies": ["uec"], "frame_error_ratio": ratio, "uec": uec}
        valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": fabric})
        request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**20,), p2p=False)
        usd = evaluate_one(valid, "uec", request=request).cost.gpu_idle_usd
        assert usd is not None
        return usd

    clean = idle_usd(0.0)
    # The GPU time the step's link errors idle is priced: LLR's replays cost less than the
    # timers of the dropped frames, both more than a clean fabric.
    assert clean < idle_usd(1e-6) and idle_usd(0.0, link_level_retry=True) < idle_usd(
        1e-6, link_level_retry=True
    ) < idle_usd(1e-6)


# --- simulate --backend flow -----------------------------------------------------------------


def _flow_record(ratio: float, **uec: bool) -> dict[str, Any]:
    fabric: dict[str, Any] = {"technologies": ["uec"], "frame_error_ratio": ratio, "uec": uec}
    valid = parse_spec({"cluster": {"gpus": 32}, "fabric": fabric})
    options = RunOptions(pattern="permutation", size_bytes=2**22, seeds=1)
    return run_pattern(valid, "uec", "flow", options).record()


def test_simulate_flow_adds_the_link_error_delay() -> None:
    clean = _flow_record(0.0)
    assert "link_error_us" not in clean  # nothing at ratio 0
    lost = _flow_record(1e-5)
    replayed = _flow_record(1e-5, link_level_retry=True)
    # 32 flows of 1,024 4 KiB frames over 2 links (one switch) at 1e-5: 0.65 losses expected,
    # so about half the runs wait for the UET timer (1 ms, far beyond the ~90 µs clean run);
    # LLR replays them within microseconds.
    assert lost["link_error_us"] > 100.0 > 1.0 > replayed["link_error_us"] > 0.0
    assert lost["completion_us"] == pytest.approx(clean["completion_us"] + lost["link_error_us"])
    assert lost["seeds"]["completion_us"]["p50"] == lost["completion_us"]


class _ExpectedPacket:
    """A packet level whose rows carry exactly the analytic model's expected link-error delay."""

    name = "packet"

    def perform(self, valid: Any, design: Any, request: PerfRequest) -> Any:
        clean = analytic_performance(valid, design, request)
        return with_link_errors(valid, design, clean, request).model_copy(
            update={"backend": "packet"}
        )


def test_a_packet_step_is_not_charged_the_link_errors_twice() -> None:
    # The packet level's rows carry their corrupted frames and the step already carries the
    # expected delay: a packet level that measures exactly the expected delay leaves the
    # analytic step as it is (ratio 1), not scaled up by the delay a second time.
    valid = parse_spec(_uec(frame_error_ratio=1e-6))
    request = PerfRequest(collectives=("all_reduce",), sizes_bytes=(2**30,), p2p=False)
    evaluated = evaluate_one(valid, "uec", _ExpectedPacket(), request)
    stepped = evaluated.performance.step  # on the design the search kept
    analytic = analytic_performance(valid, evaluated.design, request).step
    assert analytic is not None and stepped is not None
    assert stepped.step_s == pytest.approx(analytic.step_s, rel=1e-5)  # a second charge: +1.2 %
