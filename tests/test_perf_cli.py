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
    *(
        f"{field}_{end}"
        for field in ("time_us", "algbw_GBps", "busbw_GBps")
        for end in ("low", "high")
    ),
    "time_us_seed_low",
    "time_us_seed_high",
}
P2P_KEYS = {
    "technology",
    "test",
    "size_bytes",
    "latency_us",
    "bw_gbps",
    *(f"{field}_{end}" for field in ("latency_us", "bw_gbps") for end in ("low", "high")),
}


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
        (["--algorithm", "pat"], "FP514"),
        (["--gpus", "8", "--algorithm", "tree"], "FP509"),
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


def test_a_forced_algorithm_runs_where_the_hardware_has_it(spec: Path) -> None:
    # SHARP's CollNetChain exists on the InfiniBand fabric only: RoCE is named, not run.
    result = invoke(str(spec), "-a", "COLLNET_CHAIN", "--sizes", "8G", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert {r["algorithm"] for r in document["results"]} == {"CollNetChain/Simple"}
    assert {r["technology"] for r in document["results"]} == {"infiniband"}
    assert "FP509" in document["skipped"]["roce_v2"]
    table = invoke(str(spec), "-a", "collnet_chain", "--sizes", "8G")
    assert "# roce_v2: not run:" in table.output


def test_no_sharp_removes_in_network_reduction(spec: Path) -> None:
    on = invoke(str(spec), "--sharp", "--sizes", "8G", "--format", "json")
    off = invoke(str(spec), "--no-sharp", "--sizes", "8G", "--format", "json")
    default = invoke(str(spec), "--sizes", "8G", "--format", "json")
    assert default.output.replace("--no-sharp", "") == off.output  # auto: CollNet off
    algorithms = {
        name: {r["algorithm"] for r in json.loads(res.output)["results"]}
        for name, res in (("on", on), ("off", off))
    }
    assert "NVLS/Simple" in algorithms["on"]  # NVLS across nodes rides on SHARP
    assert not any(a.startswith(("NVLS/", "CollNet")) for a in algorithms["off"])


def test_hops_sets_the_perftest_pair(spec: Path) -> None:
    near = invoke(str(spec), "--p2p", "--hops", "1", "--sizes", "2", "--format", "json")
    far = invoke(str(spec), "--p2p", "--hops", "3", "--sizes", "2", "--format", "json")

    def write_lat(res: Result) -> float:
        rows = json.loads(res.output)["results"]
        return float(next(r["latency_us"] for r in rows if r["test"] == "write_lat"))

    assert write_lat(far) > write_lat(near)
    table = invoke(str(spec), "--p2p", "--hops", "1", "--sizes", "2")
    assert "1 switch hop(s) apart (as asked)" in table.output


def test_seeds_reach_the_request_of_perf_and_compare(
    spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --seed / --seeds choose the flow level's ECMP draws (issue 11): the request carries them to
    # the backend, whose spread over the seeds becomes time_us_seed_low/_high and widens the band.
    import fabricplan.evaluate
    from fabricplan.cli.app import create_app
    from fabricplan.model.results import PerfRequest

    seen: list[PerfRequest] = []

    class StopError(Exception):
        pass

    def capture(*args: object, request: PerfRequest | None = None, **kwargs: object) -> None:
        seen.append(request if request is not None else args[1])  # type: ignore[arg-type]
        raise StopError

    monkeypatch.setattr(fabricplan.evaluate, "perform_each", capture)  # perf imports it on use
    monkeypatch.setattr(fabricplan.evaluate, "evaluate_feasible", capture)
    app = create_app()
    for command in ("perf", "compare"):
        result = CliRunner().invoke(app, [command, str(spec), "--seed", "7", "--seeds", "5"])
        assert isinstance(result.exception, StopError), result.output
    assert [(r.seed, r.seeds) for r in seen] == [(7, 5), (7, 5)]
    bad = CliRunner().invoke(app, ["perf", str(spec), "--seeds", "17"])
    assert bad.exit_code == 2


def test_a_long_algorithm_name_keeps_the_columns_in_line(tmp_path: Path) -> None:
    # NCCL's symmetric kernels are named past 20 characters (Symmetric/RSxLDMC_AGxSTMC): every
    # row's time column must still end where the header's does.
    path = tmp_path / "node.yaml"
    path.write_text(
        "cluster: {gpus: 8}\nfabric: {technologies: [infiniband]}\n"
        "nccl: {symmetric_memory: true}\n",
        encoding="utf-8",
    )
    result = invoke(str(path), "--sizes", "8,64K")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("  ")]
    header = next(line for line in result.output.splitlines() if "algorithm" in line)
    assert any(len(line.split()[1]) > 20 for line in rows)
    end = header.index("time") + len("time")
    assert all(line[:end].endswith(" " + line.split()[2]) and line[end] == " " for line in rows), (
        result.output
    )
