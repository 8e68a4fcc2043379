"""The analytic level's models of the new mechanisms, checked on tiny numbers from first principles.

Spraying (per packet or per cell) removes the hash collisions ECMP has on a non-blocking Clos;
flowlet routing of gap-free flows collides like ECMP; per-packet routing into an in-order RC
receiver goes back N; a cell fabric pays ceil(frame / cell) headers per packet and a
request/grant round trip per message; trimming turns an overflow into a header and one round
trip; a VOQ fabric leaves a victim next to an incast alone.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricplan.analytic.collision import hashed_throughput, in_order_goodput_share
from fabricplan.analytic.lossless import (
    DCQCN_CNP_INTERVAL_US,
    RC_RETRANSMIT_TIMEOUT_NS,
    congestion_settle_us,
    corruption_recovery_ns,
    lossless_effect,
    overflow_recovery_ns,
    victim_share,
)
from fabricplan.analytic.profile import (
    ETHERNET_PREAMBLE_AND_GAP_BYTES,
    FabricProfile,
    cell_payload_share,
    cell_wire_bytes,
    fabric_profile,
    path_latency_ns,
    scheduled_fabric_ns,
)
from fabricplan.analytic.traffic import (
    HOPS_SAME_POD,
    pair_pattern,
    pattern_throughput,
    per_packet_routing,
)
from fabricplan.model.load_balancing import adaptive_routing_for_asic
from fabricplan.model.results import PerfRequest
from fabricplan.units import serialization_ns
from fabrics import cluster_scenario, designed_leaf_spine

TECHS: dict[str, Any] = {
    "fabric": {"technologies": ["roce_v2", "spectrum_x", "ddc", "uec", "infiniband"]}
}


def _profile(tech: str, **changes: Any) -> FabricProfile:
    valid = cluster_scenario(1024, **TECHS)
    profile = fabric_profile(valid, designed_leaf_spine(valid, tech, rail_aligned=False))  # type: ignore[arg-type]
    return dataclasses.replace(profile, **changes) if changes else profile


def _permutation_factor(profile: FabricProfile) -> float:
    # Every NIC sends to a node under another leaf: all flows cross the spines.
    crossing = pair_pattern(profile.nodes_per_leaf, profile.nodes_per_leaf, profile.nodes_per_pod)
    assert crossing.leaf_share == 1.0
    return pattern_throughput(profile, crossing, profile.nodes)


# --- spraying and ECMP -------------------------------------------------------------------------


def test_every_technology_has_an_analytic_profile() -> None:
    valid = cluster_scenario(1024, **TECHS)
    routings = {
        t: fabric_profile(valid, designed_leaf_spine(valid, t)).routing  # type: ignore[arg-type]
        for t in TECHS["fabric"]["technologies"]
    }
    assert routings["ddc"] == routings["uec"] == "spray"  # FP538 no longer refused here


def test_spraying_removes_the_permutation_collisions_of_ecmp() -> None:
    ecmp = _profile("roce_v2")
    spray = _profile("uec")
    assert ecmp.routing == "ecmp" and spray.routing == "spray" and spray.delivery == "out_of_order"
    # 32 hosts per leaf x 2 channels = 64 flows on 32 uplinks, each asking for half an uplink:
    # balls into bins, two hashes (up at the source leaf, down at the destination).
    flows = 32 * 2
    expected_ecmp = hashed_throughput(flows, 32, 0.5, stages=2)
    assert expected_ecmp < 0.75
    assert _permutation_factor(ecmp) == pytest.approx(expected_ecmp)
    assert _permutation_factor(spray) == 1.0


def test_flowlet_routing_of_gap_free_flows_collides_like_ecmp() -> None:
    ecmp = _profile("roce_v2")
    flowlet = dataclasses.replace(ecmp, routing="flowlet")
    dlb = dataclasses.replace(ecmp, routing="adaptive", adaptive_granularity="flowlet")
    assert _permutation_factor(flowlet) == _permutation_factor(ecmp)
    assert _permutation_factor(dlb) == _permutation_factor(ecmp)
    assert adaptive_routing_for_asic("Tomahawk 5").granularity == "flowlet"
    gap = adaptive_routing_for_asic("Tomahawk 5").flowlet_gap_ns
    assert gap is not None and gap > 2 * path_latency_ns(ecmp, HOPS_SAME_POD, 4096)


def test_per_packet_routing_into_an_in_order_receiver_goes_back_n() -> None:
    base = _profile("roce_v2", routing="adaptive", adaptive_granularity="per_packet")
    assert per_packet_routing(base) and base.delivery == "in_order"
    rtt_ns = 2 * path_latency_ns(base, HOPS_SAME_POD, base.mtu_bytes)
    packets = base.link_speed_gbps / 8 * rtt_ns / (base.mtu_bytes + base.header_bytes)
    q = (1 - 1 / 32) / 2  # another path than its predecessor, then ahead of it half the time
    assert _permutation_factor(base) == pytest.approx(1 / (1 + q * packets))
    reordering_nic = dataclasses.replace(base, delivery="nic_reorder")
    assert _permutation_factor(reordering_nic) == 1.0
    assert in_order_goodput_share(1, packets) == 1.0  # one path: nothing overtakes


def test_infiniband_per_packet_routing_places_out_of_order_packets() -> None:
    ib = _profile("infiniband")
    assert ib.routing == "adaptive" and ib.delivery == "nic_reorder"
    assert _permutation_factor(ib) == 1.0


# --- the scheduled (cell) fabric ---------------------------------------------------------------


def test_cell_arithmetic_cuts_every_frame_into_ceil_cells() -> None:
    assert cell_wire_bytes(256, 256, 16) == 256 + 16
    assert cell_wire_bytes(257, 256, 16) == 257 + 2 * 16
    assert cell_wire_bytes(1, 256, 16) == 1 + 16


def test_cell_fabric_goodput_follows_the_cell_overhead() -> None:
    ddc = _profile("ddc")
    valid = cluster_scenario(1024, **TECHS)
    tech = valid.technologies["ddc"]
    assert tech.cell_bytes is not None and tech.cell_header_bytes is not None
    frame = tech.mtu_bytes + tech.header_bytes.value - ETHERNET_PREAMBLE_AND_GAP_BYTES
    cells = math.ceil(frame / tech.cell_bytes.value)
    share = tech.mtu_bytes / (frame + cells * tech.cell_header_bytes.value)
    assert cell_payload_share(tech) == pytest.approx(share)
    assert ddc.fabric_payload_share == pytest.approx(share) and ddc.fabric_reassembles
    # Equal host and fabric link counts: the fabric links are short of payload by the ratio.
    host_share = tech.mtu_bytes / (tech.mtu_bytes + tech.header_bytes.value)
    assert _permutation_factor(ddc) == pytest.approx(share / host_share)
    # Sprayed cells are reassembled in order before the NIC: no go-back-N for in-order RoCE.
    assert ddc.delivery == "in_order"


def test_scheduled_fabric_adds_request_grant_and_two_stages_to_a_crossing_only() -> None:
    ddc = _profile("ddc")
    plain = dataclasses.replace(ddc, fabric_crossing_ns=0.0, spine_latency_ns=None)
    valid = cluster_scenario(1024, **TECHS)
    tech = valid.technologies["ddc"]
    element = valid.fabric_elements["ddc"].latency_ns.value  # the spine is a fabric element
    assert ddc.spine_latency_ns == element
    expected = scheduled_fabric_ns(
        tech, element, ddc.cable_ns[1], ddc.link_speed_gbps, ddc.port_speed_gbps
    )
    request_grant = 2 * (2 * ddc.cable_ns[1] + element)
    assert expected > request_grant
    spine_hop = element - ddc.switch_latency_ns
    assert path_latency_ns(ddc, 3, 8) - path_latency_ns(plain, 3, 8) == pytest.approx(
        expected + spine_hop
    )
    assert path_latency_ns(ddc, 1, 8) == path_latency_ns(plain, 1, 8)  # same leaf: no fabric
    assert scheduled_fabric_ns(valid.technologies["roce_v2"], 600, 49, 400, 400) == 0.0


# --- overflow, incast and victim ---------------------------------------------------------------


def test_trimming_turns_an_overflow_into_a_header_and_one_round_trip() -> None:
    rtt_ns, header, speed = 6_000.0, 64.0, 400.0
    trimmed = overflow_recovery_ns(True, "out_of_order", rtt_ns, header, speed)
    assert trimmed == pytest.approx(rtt_ns + header * 8 / speed)
    assert trimmed == rtt_ns + serialization_ns(header, speed)
    # The same tail loss without trimming waits for NCCL's RC timer: 4.096 us x 2^20.
    dropped = overflow_recovery_ns(False, "in_order", rtt_ns, header, speed)
    assert dropped == RC_RETRANSMIT_TIMEOUT_NS == pytest.approx(4.294967e9, rel=1e-6)
    assert dropped / trimmed > 1e5


def test_link_level_retry_repairs_a_corrupted_frame_on_the_link() -> None:
    end_to_end = overflow_recovery_ns(False, "out_of_order", 6_000.0, 64.0, 400.0)
    assert corruption_recovery_ns(True, 120.0, end_to_end) == 120.0
    assert corruption_recovery_ns(False, 120.0, end_to_end) == end_to_end


def test_congestion_control_settles_by_its_own_loop() -> None:
    assert congestion_settle_us("dcqcn", 16, 5.0) == 4 * DCQCN_CNP_INTERVAL_US  # 16 -> 1: 4 cuts
    assert congestion_settle_us("spectrum_x_cc", 16, 5.0) == 10.0  # telemetry: 2 round trips
    assert congestion_settle_us("uec_nscc", 16, 5.0) == 10.0
    assert congestion_settle_us("voq_scheduled", 16, 5.0, request_grant_us=1.7) == 1.7
    assert math.isinf(congestion_settle_us("none", 16, 5.0))


@given(
    senders=st.integers(min_value=2, max_value=512),
    settle_us=st.floats(min_value=0.0, max_value=1e4),
    duration_us=st.floats(min_value=1.0, max_value=1e4),
)
def test_a_victim_next_to_an_incast_is_untouched_under_voq(
    senders: int, settle_us: float, duration_us: float
) -> None:
    assert victim_share("scheduled", senders, settle_us, duration_us) == 1.0
    assert victim_share("none", senders, settle_us, duration_us) == 1.0
    paused = victim_share("pfc", senders, settle_us, duration_us)
    assert 1 / senders - 1e-12 <= paused <= 1.0
    # Held to the incast's share while congestion control settles, line rate after.
    blocked = min(1.0, settle_us / duration_us)
    assert paused == pytest.approx(blocked / senders + 1 - blocked)


def test_victim_of_a_pfc_incast_without_congestion_control_gets_the_incast_share() -> None:
    settle = congestion_settle_us("none", 8, 5.0)
    assert victim_share("pfc", 8, settle, 1000.0) == pytest.approx(1 / 8)
    assert victim_share("credit", 8, settle, 1000.0) == pytest.approx(1 / 8)


def test_sprayed_traffic_on_a_non_blocking_fabric_has_nothing_to_drop() -> None:
    assert lossless_effect(False, True, "dcqcn", False, 1.0, "spray").neutral
    assert not lossless_effect(False, True, "dcqcn", False, 3.0, "spray").neutral


def test_the_notes_say_what_a_victim_keeps_by_each_fabrics_mechanisms() -> None:
    from fabricplan.analytic.traffic import incast_victim_note

    notes = {t: incast_victim_note(_profile(t)) for t in ("ddc", "uec", "roce_v2", "infiniband")}
    assert "keeps 100% of its line" in notes["ddc"] and "scheduled" in notes["ddc"]
    assert "keeps 100% of its line" in notes["uec"]
    # 1 MiB at 400G lasts 21 us; DCQCN needs 4 CNPs 50 us apart: held to 1/16 throughout.
    assert "keeps 6% of its line" in notes["roce_v2"]
    assert "keeps 100%" not in notes["infiniband"]


def test_the_switch_asic_decides_per_packet_or_flowlet() -> None:
    # RoCEv2 asked for adaptive routing on a Tomahawk 5 box gets its DLB, which is flowlet.
    sections: dict[str, Any] = {
        "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "ufispace-s9321-64e"}}
    }
    valid = cluster_scenario(1024, **sections)
    tomahawk = fabric_profile(
        valid, designed_leaf_spine(valid, "roce_v2"), PerfRequest(routing={"roce_v2": "adaptive"})
    )
    assert tomahawk.routing == "adaptive"
    assert tomahawk.adaptive_granularity == "flowlet" and not per_packet_routing(tomahawk)
    assert any("flowlet routing" in note for note in tomahawk.notes)
    # ...so it collides like ECMP and pays no go-back-N for its in-order NIC.
    ecmp = fabric_profile(valid, designed_leaf_spine(valid, "roce_v2"))
    assert _permutation_factor(tomahawk) == _permutation_factor(ecmp)
