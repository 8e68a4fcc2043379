"""A flow ``compare`` is timed from the scenario before it starts: refused in one line with the
estimate and the ways out when it would take more than five minutes of CPU, run with
``--allow-long``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fabricplan.model.results import PerfRequest
from fabricplan.recommend.decision import CLUSTER_SIZE_STEPS
from fabricplan.sim.flow.duration import (
    FLOW_GRAPH_SECONDS_PER_GPU,
    FLOW_SECONDS_PER_FLOW,
    LONG_RUN_SECONDS,
    collective_flows,
    estimated_compare_seconds,
    flow_call_seconds,
    size_steps,
)
from fabricplan.spec import parse_spec
from hostile_run import run


def test_one_call_is_its_graph_and_its_flows_times_sizes_and_seeds() -> None:
    # a ring: two flows per GPU (NCCL's two channels per NIC); 3 sizes x 3 ECMP seeds
    ring = flow_call_seconds(1024, ("all_reduce",), 3, 3, 1, 2**21)
    assert ring == pytest.approx(
        1024 * FLOW_GRAPH_SECONDS_PER_GPU + 1024 * 2 * 9 * FLOW_SECONDS_PER_FLOW
    )
    # an all_to_all: each GPU to every GPU off its node (1,024 x 1,016), then cut to the budget
    assert collective_flows("all_to_all", 1024, 8, 1, 2**21) == 1024 * 1016
    assert collective_flows("all_to_all", 100_000, 8, 1, 2**21) <= 2**21


def test_the_estimate_counts_every_size_the_decision_tries() -> None:
    """The decision simulates the spec's size and its doublings and halvings: 7 calls per
    technology at 1,024 GPUs; RoCE's ECMP runs 3 seeds, InfiniBand's adaptive routing 1."""
    assert size_steps(1024, 8, CLUSTER_SIZE_STEPS) == ([2048, 4096, 8192], [512, 256, 128])
    request = PerfRequest()
    sizes = [1024, 2048, 4096, 8192, 512, 256, 128]
    for tech, seeds, ecmp in (("infiniband", 1, False), ("roce_v2", 3, True)):
        valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": [tech]}})
        expected = sum(
            flow_call_seconds(g, request.collectives, 3, seeds, 1, 2**21, 8, ecmp) for g in sizes
        )
        assert estimated_compare_seconds(valid, request, CLUSTER_SIZE_STEPS) == pytest.approx(
            expected
        )


def test_a_100k_gpu_flow_compare_is_refused_at_once_with_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fabricplan.sim.flow.performance as flow_performance

    def no_graph(*args: object, **kwargs: object) -> None:
        raise AssertionError("the graph was built before the time estimate")

    monkeypatch.setattr(flow_performance, "fabric_graph", no_graph)
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 100000}\n")
    out = tmp_path / "report.json"
    started = time.perf_counter()
    result = run(["compare", str(spec), "--backend", "flow", "-f", "json", "-o", str(out)])
    took = time.perf_counter() - started
    assert result.exit_code == 2
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: --backend flow: this compare would take about ")
    assert "100,000 GPUs and 2 technologies" in line and "more than 5 min" in line
    assert "--backend analytic" in line and "--allow-long" in line and line.endswith("[FP1416]")
    assert not out.exists()
    assert took < 30, took  # refused before any simulation (the compile notice aside)


def test_allow_long_goes_past_the_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --allow-long the run starts: here it meets the memory check at the backend seam
    (FP1411, this machine given 64 KiB), which comes after the time estimate."""
    import fabricplan.sim.run as sim_run

    monkeypatch.setattr(sim_run, "available_memory_bytes", lambda: 2**16)
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 100000}\n")
    args = ["compare", str(spec), "--backend", "flow", "-f", "json", "--allow-long"]
    result = run(args)
    assert result.exit_code == 2 and "[FP1411]" in result.stderr, result.stderr
    assert (
        estimated_compare_seconds(
            parse_spec({"cluster": {"gpus": 100_000}}), PerfRequest(), CLUSTER_SIZE_STEPS
        )
        > LONG_RUN_SECONDS
    )
