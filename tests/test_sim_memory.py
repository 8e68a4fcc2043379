"""A run's memory is estimated from the scenario before anything is allocated, and a run that
would not fit is refused in one line saying how much, against what, and what to do."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from fabricplan.errors import ModelError
from fabricplan.sim.memory import (
    FLOW_BYTES_PER_PAIR,
    PACKET_BYTES_PER_PAIR,
    PAIRS_PER_RANK_OTHER,
    estimated_run_bytes,
)
from fabricplan.sim.run import RunOptions, run_pattern
from fabricplan.spec import parse_spec
from hostile_run import run


def test_all_to_all_grows_with_the_square_of_the_gpus() -> None:
    # every rank sends to every rank: gpus² pairs, each at the level's bytes per pair
    assert estimated_run_bytes("flow", "all_to_all", 1000, 1, 1) == 1000**2 * FLOW_BYTES_PER_PAIR
    assert estimated_run_bytes("packet", "all_to_all", 1000, 2, 1) == (
        2 * 1000**2 * PACKET_BYTES_PER_PAIR
    )
    # four jobs of 250 GPUs: each job's ranks among themselves, 4 x 250² pairs
    assert estimated_run_bytes("flow", "all_to_all", 1000, 1, 1, jobs=4) == (
        4 * 250**2 * FLOW_BYTES_PER_PAIR
    )
    assert estimated_run_bytes("flow", "ring_all_reduce", 1000, 1, 1) == (
        1000 * PAIRS_PER_RANK_OTHER * FLOW_BYTES_PER_PAIR
    )


def test_a_huge_all_to_all_is_refused_before_it_allocates() -> None:
    valid = parse_spec({"cluster": {"gpus": 100_000}, "fabric": {"technologies": ["roce_v2"]}})
    options = RunOptions(pattern="all_to_all", size_bytes=2**20, max_memory_bytes=8 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as caught:
            run_pattern(valid, "roce_v2", "flow", options)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "FP1403"
    # 10^10 pairs x 256 B = 2,384.2 GiB, against the 8 GiB given
    assert "needs about 2,384.2 GiB" in caught.value.what
    assert "more than 8.0 GiB (--max-memory)" in caught.value.what
    assert peak < 256 * 2**20  # the n² arrays (80 GB each) were never made


def test_a_run_that_fits_runs(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("cluster: {gpus: 64}\nfabric: {technologies: [roce_v2]}\n")
    args = ["simulate", str(spec), "-p", "all_to_all", "-s", "1M", "-f", "json"]
    # 64² pairs x 256 B = 1 MiB: fits in 2M, refused under 512K
    assert run([*args, "--max-memory", "2M"]).exit_code == 0
    refused = run([*args, "--max-memory", "512K"])
    assert refused.exit_code == 2
    assert "the flow run needs about 1.0 MiB" in refused.stderr
    assert "[FP1403]" in refused.stderr


@pytest.mark.parametrize("value", ["0", "-1G", "lots"])
def test_a_bad_limit_is_one_line(value: str, tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("cluster: {gpus: 64}\nfabric: {technologies: [roce_v2]}\n")
    result = run(["simulate", str(spec), "-p", "all_to_all", "-s", "1M", "--max-memory", value])
    assert result.exit_code == 2
    assert "--max-memory: not a memory size" in result.stderr and "[FP1404]" in result.stderr


def test_a_performance_run_is_estimated_from_its_largest_collective() -> None:
    from fabricplan.sim.memory import (
        GRAPH_BYTES_PER_GPU,
        RING_FLOWS_PER_GPU,
        estimated_performance_bytes,
    )

    graph = 8192 * GRAPH_BYTES_PER_GPU
    ring = 8192 * RING_FLOWS_PER_GPU * FLOW_BYTES_PER_PAIR
    assert estimated_performance_bytes("flow", 8192, ("all_reduce",), 1, 2**21) == graph + ring
    # the all_to_all is cut to the level's budget (2**21 flows), not 8192² = 67 M pairs
    both = estimated_performance_bytes("flow", 8192, ("all_reduce", "all_to_all"), 1, 2**21)
    assert both == graph + 2**21 * FLOW_BYTES_PER_PAIR
    packet = estimated_performance_bytes("packet", 512, ("all_to_all",), 2, 2**16)
    assert packet == 512 * GRAPH_BYTES_PER_GPU + 2 * 2**16 * PACKET_BYTES_PER_PAIR


def test_every_simulated_backend_entry_point_is_refused_before_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """compare, perf and sweep with --backend flow|packet, and the web API's jobs, reach the
    simulated levels through ``simulated_backend``: with too little memory it refuses in one
    line with the estimate, before the fabric graph is built."""
    import fabricplan.sim.flow.performance as flow_performance
    import fabricplan.sim.run as sim_run

    def no_graph(*args: object, **kwargs: object) -> None:
        raise AssertionError("the graph was built before the memory check")

    monkeypatch.setattr(sim_run, "available_memory_bytes", lambda: 2**16)  # 64 KiB
    monkeypatch.setattr(flow_performance, "fabric_graph", no_graph)
    spec = tmp_path / "spec.yaml"
    spec.write_text("cluster: {gpus: 64}\nfabric: {technologies: [roce_v2]}\n")
    commands = [
        ["perf", str(spec), "--backend", "flow", "-f", "json"],
        ["compare", str(spec), "--backend", "flow", "-f", "json"],
        ["perf", str(spec), "--backend", "packet", "-c", "all_to_all", "-f", "json"],
    ]
    from typer.testing import CliRunner

    from fabricplan.cli.app import create_app

    for args in commands:
        result = CliRunner().invoke(create_app(), args)
        assert result.exit_code == 2, result.stderr
        line = result.stderr.strip().splitlines()[-1]  # after the packet level's compile notice
        assert line.startswith("error: --backend ") and "Traceback" not in result.output
        assert "[FP1411]" in line and "needs about" in line and "0.1 MiB" in line, line
