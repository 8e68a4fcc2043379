"""Sense checks on simulator results: each law a correct run obeys, broken one at a time, is
one clear error; real flow and packet runs pass them; a single-node run and an unfinished
packet run are refused with what to do."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fabricplan.errors import ModelError
from fabricplan.sim.packet.network import star
from fabricplan.sim.packet.simulation import simulate_packet
from fabricplan.sim.packet.spec import FaultSpec, packet_spec
from fabricplan.sim.run import RunOptions, checked, run_facts, run_pattern
from fabricplan.sim.sense import RunFacts, check_run
from fabricplan.sim.traffic import StepSpec, Traffic
from fabricplan.spec import parse_spec
from hostile_run import run

LINE_BYTES_PER_US = 50_000.0
"""400 Gb/s = 50 000 B/µs: 1 MB takes at least 20 µs on it."""


def _facts(**changes: Any) -> RunFacts:
    sound = RunFacts(
        flows=2,
        traffic_bytes=2e6,
        sent_bytes=2e6,
        delivered_bytes=2e6,
        flow_bytes=np.array([1e6, 1e6]),
        start_us=np.array([0.0, 0.0]),
        finish_us=np.array([20.0, 30.0]),  # 20 µs is exactly line rate
        step_start_us=np.array([0.0]),
        step_finish_us=np.array([30.0]),
        link_utilisation=np.array([1.0, 0.5]),
        line_rate_bytes_per_us=LINE_BYTES_PER_US,
    )
    return dataclasses.replace(sound, **changes)


def test_a_sound_run_passes() -> None:
    check_run("flow", _facts())


BROKEN = {
    "a flow finish time is not a number": {"finish_us": np.array([20.0, np.nan])},
    "a flow start time is negative": {"start_us": np.array([-1.0, 0.0])},
    "a step finish time is not a number": {"step_finish_us": np.array([np.inf])},
    "a flow finishes before it starts": {"start_us": np.array([0.0, 31.0])},
    "a step finishes before it starts": {"step_start_us": np.array([40.0])},
    "the receivers got other bytes than the traffic sent": {"delivered_bytes": 1e6},
    "fewer bytes entered the fabric than the traffic sent": {"sent_bytes": 1.5e6},
    "a link carried more than its capacity": {"link_utilisation": np.array([1.01])},
    "a flow moved faster than the fastest host link": {"finish_us": np.array([19.9, 30.0])},
    "a flow with bytes took no time": {"finish_us": np.array([0.0, 30.0])},
}


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_each_broken_law_is_one_error(what: str) -> None:
    with pytest.raises(ModelError) as caught:
        check_run("packet", _facts(**BROKEN[what]))
    assert caught.value.code == "FP1402"
    assert caught.value.what == what
    assert "report" in str(caught.value)


SMALL = {"cluster": {"gpus": 32}, "fabric": {"technologies": ["roce_v2"]}}


@pytest.mark.parametrize("level", ["flow", "packet"])
@pytest.mark.parametrize("pattern", ["all_to_all", "ring_all_reduce"])
def test_real_runs_conserve_bytes_and_respect_line_rate(level: str, pattern: str) -> None:
    valid = parse_spec(SMALL)
    result = run_pattern(valid, "roce_v2", level, RunOptions(pattern=pattern, size_bytes=2**18))
    facts = run_facts(level, result.results[0])
    assert facts.delivered_bytes == pytest.approx(facts.traffic_bytes, rel=1e-9)
    assert facts.sent_bytes >= facts.traffic_bytes * (1 - 1e-9)
    # 400 Gb/s NICs carry 50 000 B/µs on the wire; the flow level counts payload only
    # (4096-byte MTU, 82 header bytes of RoCEv2), the packet level wire bytes.
    payload_share = 4096 / (4096 + 82) if level == "flow" else 1.0
    assert facts.line_rate_bytes_per_us == pytest.approx(LINE_BYTES_PER_US * payload_share)
    fct = facts.finish_us - facts.start_us
    assert (facts.flow_bytes / fct).max() <= LINE_BYTES_PER_US * (1 + 1e-6)


def test_a_real_run_made_too_fast_is_refused() -> None:
    valid = parse_spec(SMALL)
    options = RunOptions(pattern="permutation", size_bytes=2**20)
    flow = run_pattern(valid, "roce_v2", "flow", options)
    result = flow.results[0]
    faster = dataclasses.replace(
        result, finish_us=result.start_us + (result.finish_us - result.start_us) / 3
    )
    with pytest.raises(ModelError, match="faster than the fastest host link"):
        checked("flow", faster)


def test_an_unfinished_packet_run_is_refused_not_reported_as_a_time() -> None:
    net = star(3, delay_ns=100.0)
    spec = dataclasses.replace(
        packet_spec("credit", "none", "ecmp"),
        lossless_classes=(1,),
        faults=FaultSpec(stuck_hosts=((0, 0.0),)),
        rto_us=50.0,
    )
    traffic = Traffic(
        src=np.array([1]),
        dst=np.array([0]),
        size_bytes=np.array([2e6]),
        step=np.zeros(1, dtype=np.int64),
        offset_us=np.zeros(1),
        steps=(StepSpec(name="x", collective="x"),),
    )
    result = simulate_packet(net, traffic, spec)
    assert result.status == "stalled"
    with pytest.raises(ModelError) as caught:
        checked("packet", result)
    assert caught.value.code == "FP1401"
    assert "1 of 1 flows never finished (status stalled" in caught.value.what


@pytest.mark.parametrize("backend", ["flow", "packet"])
def test_a_single_node_is_refused_with_what_to_do(backend: str, tmp_path: Path) -> None:
    spec = tmp_path / "one.yaml"
    spec.write_text("cluster: {gpus: 8, gpus_per_node: 8}\nfabric: {technologies: [roce_v2]}\n")
    args = ["simulate", str(spec), "--backend", backend, "-p", "all_to_all", "-s", "1M"]
    result = run([*args, "-f", "json"])
    assert result.exit_code == 2
    assert "no flow of all_to_all crosses the fabric" in result.stderr
    assert "--backend analytic" in result.stderr and "[FP1400]" in result.stderr
    assert result.stdout == ""


def _performance() -> Any:
    from fabricplan.backends import get_backend
    from fabricplan.model.results import PerfRequest
    from fabricplan.topology.designer import design_fabric

    valid = parse_spec(SMALL)
    return get_backend("analytic").perform(valid, design_fabric(valid, "roce_v2"), PerfRequest())


def test_every_backend_answer_is_checked_and_a_broken_one_refused() -> None:
    from fabricplan.sim.sense import check_performance

    result = _performance()
    assert check_performance(result, 400.0) is result
    point = result.collectives[0]
    p2p = result.p2p[-1]
    step = result.step
    assert step is not None
    broken = {
        "algbw is not size / time": {
            "collectives": (point.model_copy(update={"algbw_GBps": point.algbw_GBps * 1.01}),)
        },
        "time or bandwidth at or below zero": {
            "collectives": (point.model_copy(update={"time_us": -1.0}),)
        },
        "faster than the NIC": {"p2p": (p2p.model_copy(update={"bw_gbps": 401.0}),)},
        "base latency is negative": {"base_latency_us": -0.5},
        "parts do not add up": {
            "step": step.model_copy(update={"comm_exposed_s": step.comm_total_s * 2})
        },
    }
    for what, update in broken.items():
        with pytest.raises(ModelError, match=what) as caught:
            check_performance(result.model_copy(update=update), 400.0)
        assert caught.value.code == "FP1402"
