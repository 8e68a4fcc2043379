"""``fabricplan check-bench`` and ``fabricplan calibrate``: output shapes, exit codes, files."""

from __future__ import annotations

import json
from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner, Result

from fabricplan.cli import bench_cmd
from fabricplan.measure.calibration import load_profile

DATA = Path(__file__).parent / "data" / "measure"
SPEC = {
    "cluster": {"gpus": 256, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {"technologies": ["infiniband", "roce_v2"]},
}


def _invoke(*args: str) -> Result:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fabricplan (test app)."""

    bench_cmd.register(app)
    return CliRunner().invoke(app, list(args))


def _spec(tmp_path: Path) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return str(path)


def test_read_only_json_has_measurements_without_expectations() -> None:
    result = _invoke(
        "check-bench",
        str(DATA / "nccl_2023_multi_roce_mpi.log"),
        str(DATA / "perftest_write_lat.log"),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    rows = doc["measurements"]
    assert len(rows) == 33 + 12
    nccl, perftest = rows[0], rows[-1]
    assert {"tool", "test", "size_bytes", "time_us", "algbw_GBps", "busbw_GBps"} <= set(nccl)
    assert nccl["tool"] == "nccl-tests" and nccl["test"] == "all_reduce"
    assert {"tool", "test", "size_bytes", "time_us", "latency_us"} <= set(perftest)
    assert perftest["tool"] == "perftest" and perftest["test"] == "write_lat"
    assert "expected" not in nccl and "status" not in nccl
    assert doc["files"][0]["runs"][0]["technology_hint"] == "roce"


def test_with_spec_every_measurement_has_expected_and_status(tmp_path: Path) -> None:
    result = _invoke(
        "check-bench",
        str(DATA / "nccl_2025_allreduce_cut.log"),
        str(DATA / "perftest_write_bw_gbits.log"),
        "--spec",
        _spec(tmp_path),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    for row in doc["measurements"]:
        assert row["status"] in {"ok", "slow", "fast", "unchecked"}
        assert "expected" in row
    large = next(r for r in doc["measurements"] if r["size_bytes"] == 2**25)
    assert large["technology"] == "infiniband"
    assert large["expected"]["quantity"] == "busbw_GBps"
    low, high = large["expected"]["low"], large["expected"]["high"]
    assert low < large["expected"]["value"] < high
    assert "bench.incomplete" in {f["code"] for f in doc["findings"]}


def test_threshold_exit_code_one(tmp_path: Path) -> None:
    log = str(DATA / "perftest_read_bw_roce_mb.log")  # 183 Gb/s on a 400G RoCE NIC
    spec = _spec(tmp_path)
    assert _invoke("check-bench", log, "--spec", spec).exit_code == 0
    failing = _invoke("check-bench", log, "--spec", spec, "--threshold", "0.8")
    assert failing.exit_code == 1
    assert "below the threshold" in failing.output
    assert _invoke("check-bench", log, "--spec", spec, "--threshold", "0.4").exit_code == 0
    assert _invoke("check-bench", log, "--min-bw-gbps", "300").exit_code == 1
    assert _invoke("check-bench", log, "--min-bw-gbps", "150").exit_code == 0
    nccl = str(DATA / "nccl_2020_allgather_error.log")  # plateau 10.95 GB/s
    assert _invoke("check-bench", nccl, "--min-busbw", "10", "--min-size", "256M").exit_code == 0
    assert _invoke("check-bench", nccl, "--min-busbw", "10").exit_code == 1


def test_plot_is_written_atomically_as_png_or_svg(tmp_path: Path) -> None:
    log = str(DATA / "nccl_2023_multi_roce_mpi.log")
    png, svg = tmp_path / "busbw.png", tmp_path / "busbw.svg"
    assert _invoke("check-bench", log, "--spec", _spec(tmp_path), "--plot", str(png)).exit_code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _invoke("check-bench", log, "--plot", str(svg)).exit_code == 0
    assert b"<svg" in svg.read_bytes()[:400]
    bad = _invoke("check-bench", log, "--plot", str(tmp_path / "busbw.pdf"))
    assert bad.exit_code == 2 and "FP465" in bad.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busbw.png", "busbw.svg", "cluster.yaml"]


def test_input_errors_are_one_line_and_exit_two(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    result = _invoke("check-bench", str(empty))
    assert result.exit_code == 2 and "FP451" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = _invoke("check-bench", str(DATA / "nccl_allreduce_2n.json"), "--spec", _spec(tmp_path))
    assert result.exit_code == 2 and "FP457" in result.output and "--technology" in result.output
    result = _invoke("check-bench", str(DATA / "nccl_2017_allreduce_ms.log"), "--op", "allsum")
    assert result.exit_code == 2 and "FP466" in result.output


def test_technology_option_and_op_option(tmp_path: Path) -> None:
    result = _invoke(
        "check-bench",
        str(DATA / "nccl_allreduce_2n.json"),
        "--spec",
        _spec(tmp_path),
        "--technology",
        "infiniband",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    assert {r["technology"] for r in json.loads(result.output)["measurements"]} == {"infiniband"}


def test_calibrate_writes_a_profile_compare_can_load(tmp_path: Path) -> None:
    out = tmp_path / "profile.yaml"
    result = _invoke(
        "calibrate",
        str(DATA / "nccl_2025_allreduce_cut.log"),
        str(DATA / "perftest_write_bw_gbits.log"),
        str(DATA / "perftest_write_lat.log"),
        "--spec",
        _spec(tmp_path),
        "-o",
        str(out),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["technology"] == "infiniband"
    assert doc["error_after_pct"] < doc["error_before_pct"]
    profile = load_profile(out)
    assert profile.source.startswith("fabricplan calibrate on infiniband")
    scope = {"source", "technology", "nic", "switch"}
    assert set(doc["fitted"]) == {
        k for k, v in profile.model_dump().items() if v is not None and k not in scope
    }
    # The profile names the technology it was fitted on, so it applies to that one only; the
    # logs do not name NIC or switch models, so those stay open.
    assert (profile.technology, profile.nic, profile.switch) == ("infiniband", None, None)
    assert "cx7" in profile.source


def test_calibrate_rejects_unknown_parameters(tmp_path: Path) -> None:
    result = _invoke(
        "calibrate",
        str(DATA / "perftest_write_lat.log"),
        "--spec",
        _spec(tmp_path),
        "-o",
        str(tmp_path / "p.yaml"),
        "--parameters",
        "nic_latency_ns,warp_speed",
    )
    assert result.exit_code == 2 and "FP468" in result.output and "warp_speed" in result.output
    assert not (tmp_path / "p.yaml").exists()


def test_json_says_which_band_judged_each_row_and_whether_the_profile_applied(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "roce.yaml"
    profile.write_text(
        yaml.safe_dump({"nic_latency_ns": 900.0, "technology": "roce_v2", "source": "roce"}),
        encoding="utf-8",
    )
    args = [str(DATA / "nccl_2025_allreduce_cut.log"), "--spec", _spec(tmp_path), "-f", "json"]
    default = json.loads(_invoke("check-bench", *args).output)
    assert default["summary"]["band"] == "validation"
    judged = [r for r in default["measurements"] if r.get("ratio") is not None]
    assert judged and all(r["ratio_low"] < 1 < r["ratio_high"] for r in judged)
    assert all(r["band_basis"].split()[0] in {"latency", "mid", "bandwidth"} for r in judged)
    fixed = json.loads(_invoke("check-bench", *args, "--band", "0.15").output)
    assert fixed["summary"]["band"] == 0.15
    calibrated = json.loads(_invoke("check-bench", *args, "--calibration", str(profile)).output)
    # the log is InfiniBand: a profile fitted on RoCE is not applied, and the output says so
    assert calibrated["calibration"] == [
        "calibration not applied to infiniband: the profile was fitted on roce_v2"
    ]
    assert [r.get("expected") for r in calibrated["measurements"]] == [
        r.get("expected") for r in default["measurements"]
    ]
