"""The flow backend behind the seam, and ``fabricplan simulate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricplan.backends import backend_names, get_backend
from fabricplan.cli.app import create_app
from fabricplan.model.results import PerfRequest
from fabricplan.sim.flow.performance import FLOW_SIZES_SIMULATED
from fabricplan.sim.performance import simulated_sizes
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric

# 128 NICs fit one 128-port Ethernet switch (a one-switch design since the design search
# work); a 64-port switch keeps a leaf-spine fabric for the simulator to fail links in.
SPEC = (
    "cluster:\n  gpus: 128\nfabric:\n  technologies: [infiniband, roce_v2]\n"
    "  switch: {roce_v2: th4-64x400g}\n"
)


app = create_app()


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(SPEC)
    return path


def test_flow_backend_is_registered_and_answers_like_the_analytic_one() -> None:
    assert "flow" in backend_names()
    valid = parse_spec({"cluster": {"gpus": 128}})
    request = PerfRequest(
        collectives=("all_reduce", "all_to_all"), sizes_bytes=(2**10, 2**30), p2p=False, step=False
    )
    design = design_fabric(valid, "roce_v2")
    flow = get_backend("flow").perform(valid, design, request)
    analytic = get_backend("analytic").perform(valid, design, request)
    assert flow.backend == "flow"
    assert [(p.collective, p.size_bytes) for p in flow.collectives] == [
        (p.collective, p.size_bytes) for p in analytic.collectives
    ]
    big = [p for p in flow.collectives if p.size_bytes == 2**30]
    # The fabric cannot beat the NICs: a ring all_reduce's busbw is at most 8 NICs' payload rate.
    nic_payload_gbps = 8 * 400 / 8 * 4096 / (4096 + 82)
    assert big[0].busbw_GBps <= nic_payload_gbps
    assert all(p.time_us > 0 and p.busbw_GBps > 0 for p in flow.collectives)


def test_a_small_collective_keeps_nccls_protocol_and_pipeline_at_the_flow_level() -> None:
    # Two 8 x H100 nodes, 8 x 400G NDR each. Below 64 KiB NCCL runs a tree with LL (8 data bytes
    # per 16-byte line) through its chunk pipeline; the fluid model moves only the ring's bytes at
    # line rate: 2 x 15/16 x 32 KiB over 8 NICs of 50 GB/s is 0.15 us. nccl-tests measured
    # 24.96 us at 16 B and 34.10 us at 32 KiB on such nodes (NVIDIA/nccl-tests #309): the rise
    # is NCCL's, not the fabric's, so the flow level must keep the analytic model's time there.
    valid = parse_spec(
        {
            "cluster": {"gpus": 16, "gpu": "h100", "nics_per_node": 8, "nic_speed_gbps": 400},
            "fabric": {"technologies": ["infiniband"], "topology": "rail_optimized"},
        }
    )
    design = design_fabric(valid, "infiniband")
    request = PerfRequest(
        collectives=("all_reduce",), sizes_bytes=(16, 2**15), p2p=False, step=False
    )
    flow = {
        p.size_bytes: p for p in get_backend("flow").perform(valid, design, request).collectives
    }
    analytic = {
        p.size_bytes: p for p in get_backend("analytic").perform(valid, design, request).collectives
    }
    fabric_us = 2 * 15 / 16 * 2**15 / (8 * 50e3)
    assert flow[2**15].time_us == pytest.approx(analytic[2**15].time_us)
    assert flow[2**15].time_us - flow[16].time_us > 10 * fabric_us
    assert flow[2**15].algorithm == f"flow/{analytic[2**15].algorithm}"


def test_the_simulated_sizes_are_few_and_large() -> None:
    assert simulated_sizes((8, 2**20, 2**22, 2**25, 2**30), FLOW_SIZES_SIMULATED) == (
        2**20,
        2**25,
        2**30,
    )


def test_simulate_json_holds_the_issue_keys(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--pattern",
            "permutation",
            "--size",
            "8M",
            "--seeds",
            "3",
            "--routing",
            "ecmp",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [r["technology"] for r in data["results"]] == ["infiniband", "roce_v2"]
    for record in data["results"]:
        for key in ("backend", "technology", "completion_us", "fct_us", "flows", "wall_s"):
            assert key in record
        assert set(record["fct_us"]) >= {"p50", "p99", "max"}
        spread = record["seeds"]["completion_us"]
        assert spread["min"] <= spread["p50"] <= spread["max"]
        assert record["routing"] == "ecmp"


def test_simulate_runs_the_workload_when_no_pattern_is_given(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(app, ["simulate", str(spec), "--format", "json"])
    assert out.exit_code == 0, out.output
    names = [c["name"] for c in json.loads(out.stdout)["results"][0]["collectives"]]
    assert "dp all_reduce" in names


def test_analytic_backend_answers_collectives_only(runner: CliRunner, spec: Path) -> None:
    ok = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--backend",
            "analytic",
            "--pattern",
            "ring_all_reduce",
            "--size",
            "64M",
            "--format",
            "json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["results"][0]["completion_us"] > 0
    bad = runner.invoke(
        app, ["simulate", str(spec), "--backend", "analytic", "--pattern", "incast", "--size", "1M"]
    )
    assert bad.exit_code == 2 and "FP535" in bad.output


def test_bad_options_are_one_line_errors(runner: CliRunner, spec: Path) -> None:
    for args in (
        ["--pattern", "bogus"],
        ["--routing", "magic", "--pattern", "incast", "--size", "1M"],
        ["--pattern", "incast"],
    ):
        out = runner.invoke(app, ["simulate", str(spec), *args])
        assert out.exit_code == 2, args
        assert out.output.startswith("error: ") and out.output.count("\n") == 1


def test_jobs_background_and_failures_from_the_command_line(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--pattern",
            "all_to_all",
            "--size",
            "16M",
            "--jobs",
            "2",
            "--placement",
            "fragmented",
            "--background",
            "0.2",
            "--background-us",
            "200",
            "--fail-links",
            "1",
            "--qps",
            "2",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    record = json.loads(out.stdout)["results"][1]
    names = {c["name"] for c in record["collectives"]}
    assert {"job0 all_to_all", "job1 all_to_all", "background"} <= names
    assert record["failed"]["cables"] == 1 and record["jobs"]["placement"] == "fragmented"
