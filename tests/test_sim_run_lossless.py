"""``simulate --backend packet`` (:func:`fabricplan.sim.run.run_pattern`) runs the deployed
lossless configuration (``fabric.lossless``) as the packet backend of ``compare`` does.

First principles: seven 1 MB senders into one 100G port through a 1.2 MB switch overflow its
queue; with PFC on the switch pauses its senders and drops nothing, with PFC off (as a
configuration may deploy it) the same queue drops and the senders resend.
"""

from __future__ import annotations

import re
from typing import Any

from fabricplan.sim.flow.duration import format_seconds
from fabricplan.sim.packet.duration import packet_run_seconds, path_links
from fabricplan.sim.packet.performance import packet_spec_for_design, with_lossless_settings
from fabricplan.sim.run import RunOptions, run_pattern
from fabrics import SPEED_GBPS, port_scenario

INCAST = RunOptions(pattern="incast", size_bytes=1_000_000, senders=7)


def _run(**lossless: Any) -> Any:
    switch = {
        "ports": 16,
        "port_speed_gbps": SPEED_GBPS,
        "latency_ns": 300,
        "buffer_bytes": 1_200_000,
    }
    fabric = {"switch": {"roce_v2": switch}, "lossless": lossless}
    valid = port_scenario(8, 16, "roce_v2", fabric=fabric)
    return valid, run_pattern(valid, "roce_v2", "packet", INCAST).results[0]


def test_the_packet_run_takes_the_deployed_lossless_settings() -> None:
    _, paused = _run()
    _, dropped = _run(pfc=False)
    assert paused.counters["drops"] == 0 and paused.counters["pause_frames"] > 0
    assert dropped.counters["pause_frames"] == 0
    assert dropped.counters["drops"] > 0 and dropped.counters["retransmits"] > 0
    assert dropped.completion_us > paused.completion_us


def test_the_packet_run_uses_packet_performances_settings() -> None:
    for lossless in ({}, {"pfc": False}, {"ecn": False}, {"congestion_control": "none"}):
        valid, run = _run(**lossless)
        assert run.spec == with_lossless_settings(packet_spec_for_design(valid, "roce_v2"), valid)


def test_a_congestion_control_named_on_the_command_line_stays() -> None:
    switch = {"ports": 16, "port_speed_gbps": SPEED_GBPS, "latency_ns": 300}
    fabric = {"switch": {"roce_v2": switch}, "lossless": {"congestion_control": "none"}}
    valid = port_scenario(8, 16, "roce_v2", fabric=fabric)
    options = RunOptions(
        pattern="incast", size_bytes=100_000, senders=2, congestion_control="dcqcn"
    )
    run = run_pattern(valid, "roce_v2", "packet", options).results[0]
    assert run.spec.congestion_control == "dcqcn"
    assert run.spec.link_flow_control == "pfc"


def test_a_packet_run_names_its_packets_and_estimated_time_before_it_starts() -> None:
    # 7 senders x 1 MB = 7,000,000 B of payload in MTU-sized packets over one switch (2 links)
    switch = {"ports": 16, "port_speed_gbps": SPEED_GBPS, "latency_ns": 300}
    valid = port_scenario(8, 16, "roce_v2", fabric={"switch": {"roce_v2": switch}})
    labels: list[str] = []
    run = run_pattern(valid, "roce_v2", "packet", INCAST, lambda label, done: labels.append(label))
    mtu = valid.technologies["roce_v2"].mtu_bytes
    packets = 7 * -(-1_000_000 // mtu)
    assert run.results[0].counters["drops"] == 0
    seconds = packets * 2 * 4.0 / 1e6  # 2 links, 4 events a packet and link, 1 M events/s
    expected = (
        rf"roce_v2 incast seed \d+ \(packet, {packets:,} packets,"
        rf" estimated {seconds:.0f} s of CPU\)"
    )
    assert labels and all(re.fullmatch(expected, label) for label in labels), labels


def test_the_estimate_grows_with_packets_and_path_links() -> None:
    assert packet_run_seconds(5_000_000, path_links(3)) == 5e6 * 6 * 4.0 / 1e6  # 2 min
    assert format_seconds(packet_run_seconds(5_000_000, path_links(3))) == "2 min"
