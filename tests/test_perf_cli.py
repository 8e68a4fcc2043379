"""``fabricplan perf``: nccl-tests-like and perftest-like tables, JSON, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from fabricplan.cli import perf_cmd
from fabricplan.cli.perf_cmd import parse_sizes
from fabricplan.errors import ModelError
from fabricplan.units import format_size

COLLECTIVE_KEYS = {
    "technology",
    "collective",
    "size_bytes",
    "algorithm",
    "time_us",
    "algbw_GBps",
    "busbw_GBps",
}
P2P_KEYS = {"technology", "test", "size_bytes", "latency_us", "bw_gbps"}


def make_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fabricplan (test app)."""

    perf_cmd.register(app)
    return app


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text("cluster:\n  gpus: 256\n", encoding="utf-8")
    return path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(make_app(), ["perf", *args])


def test_json_collectives_for_every_technology(spec: Path) -> None:
    result = invoke(
        str(spec),
        "-c",
        "all_reduce",
        "-c",
        "all_gather",
        "--sizes",
        "1M,64M,8G",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["results"]
    assert {r["technology"] for r in rows} == {"infiniband", "roce_v2"}
    assert len(rows) == 2 * 2 * 3
    for row in rows:
        assert set(row) == COLLECTIVE_KEYS
        assert row["algbw_GBps"] == pytest.approx(row["size_bytes"] / row["time_us"] / 1e3)
    assert {r["size_bytes"] for r in rows} == {2**20, 64 * 2**20, 8 * 2**30}


def test_gpus_option_limits_the_group(spec: Path) -> None:
    result = invoke(str(spec), "--gpus", "8", "--sizes", "8G", "--format", "json")
    rows = json.loads(result.output)["results"]
    assert {r["algorithm"] for r in rows} == {"NVLS/Simple"}
    # busbw factor 2(n-1)/n with n = 8
    for row in rows:
        assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * 2 * 7 / 8)


def test_table_looks_like_nccl_tests(spec: Path) -> None:
    result = invoke(str(spec), "--sizes", "8,1M")
    assert result.exit_code == 0, result.output
    assert "# infiniband: all_reduce, 256 GPUs" in result.output
    assert "(GB/s)" in result.output and "# Avg bus bandwidth" in result.output


def test_p2p_json_and_table(spec: Path) -> None:
    result = invoke(str(spec), "--p2p", "--sizes", "2,64K", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["results"]
    assert {r["test"] for r in rows} >= {"write_lat", "write_bw", "read_lat", "send_bw"}
    assert all(set(r) == P2P_KEYS for r in rows)
    table = invoke(str(spec), "--p2p", "--sizes", "2,64K")
    assert "t_typical[usec]" in table.output and "BW average[Gb/sec]" in table.output


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--sizes", "1M,lots"], "FP510"),
        (["-c", "all_reduse"], "FP511"),
        (["--routing", "roce_v2:adaptive"], "FP512"),
        (["--gpus", "12"], "FP505"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(spec: Path, args: list[str], code: str) -> None:
    result = invoke(str(spec), *args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and code in lines[0]


def test_missing_spec_is_one_line(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert "FP108" in result.output


@given(st.lists(st.integers(1, 2**40), min_size=1, max_size=6))
def test_sizes_round_trip_nccl_tests_suffixes(sizes: list[int]) -> None:
    assert parse_sizes(",".join(format_size(s) for s in sizes)) == tuple(sizes)


def test_zero_size_is_rejected() -> None:
    with pytest.raises(ModelError):
        parse_sizes("0")
