"""``fabricplan lint`` and ``fabricplan roce-config``: output formats, SARIF structure, exit
codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner, Result

from fabricplan.cli import lint_cmd
from fabricplan.lint.checking.rule import RULES

DATA = Path(__file__).parent / "data" / "lint"
CLEAN = sorted(str(p) for p in DATA.iterdir())


def _invoke(*args: str) -> Result:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """fabricplan (test app)."""

    lint_cmd.register(app)
    return CliRunner().invoke(app, list(args))


def _faulty_fabric(tmp_path: Path) -> list[str]:
    for path in DATA.iterdir():
        shutil.copy(path, tmp_path / path.name)
    eos = tmp_path / "eos_leaf.cfg"
    eos.write_text(eos.read_text().replace("   qos trust dscp\n", "   qos trust cos\n"))
    nic = tmp_path / "gpu01_nic_cc.txt"
    nic.write_text(
        nic.read_text().replace(
            "DCBX_WILLING_P1                             False(0)",
            "DCBX_WILLING_P1                             True(1)",
        )
    )
    return sorted(str(p) for p in tmp_path.iterdir())


def test_clean_fabric_exits_0_with_table() -> None:
    result = _invoke("lint", *CLEAN)
    assert result.exit_code == 0, result.output
    assert "no findings" in result.output and "checked 5 devices" in result.output


def test_error_finding_exits_1_and_json_lists_findings(tmp_path: Path) -> None:
    result = _invoke("lint", *_faulty_fabric(tmp_path), "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert [(f["rule"], f["severity"], f["device"]) for f in document["findings"]] == [
        ("L09", "error", "leaf02"),
        ("L12", "warning", "gpu01_nic_cc"),
    ]
    assert all(set(f) >= {"rule", "severity", "device", "message"} for f in document["findings"])
    assert document["summary"] == {"error": 1, "warning": 1, "info": 0}


def test_warning_only_exits_0(tmp_path: Path) -> None:
    files = _faulty_fabric(tmp_path)
    eos = tmp_path / "eos_leaf.cfg"
    eos.write_text(eos.read_text().replace("   qos trust cos\n", "   qos trust dscp\n"))
    result = _invoke("lint", *files, "--format", "json")
    assert result.exit_code == 0
    assert [f["rule"] for f in json.loads(result.output)["findings"]] == ["L12"]


def test_sarif_is_structurally_valid(tmp_path: Path) -> None:
    result = _invoke("lint", *_faulty_fabric(tmp_path), "--format", "sarif")
    log = json.loads(result.output)
    assert log["version"] == "2.1.0" and "sarif" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fabricplan"
    assert [r["id"] for r in driver["rules"]] == sorted(RULES)
    assert {r["defaultConfiguration"]["level"] for r in driver["rules"]} <= {
        "error",
        "warning",
        "note",
    }
    assert len(run["results"]) == 2
    for item in run["results"]:
        assert set(item) >= {"ruleId", "level", "message", "locations"}
        assert driver["rules"][item["ruleIndex"]]["id"] == item["ruleId"]
        assert item["level"] in {"error", "warning", "note"} and item["message"]["text"]
        physical = item["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"].endswith((".cfg", ".txt"))
        assert physical["region"]["startLine"] >= 1


def test_unreadable_file_exits_2_with_one_line(tmp_path: Path) -> None:
    result = _invoke("lint", str(tmp_path / "missing.json"))
    assert result.exit_code == 2
    assert "FP401" in result.output and "missing.json" in result.output


def test_device_type_forces_the_parser(tmp_path: Path) -> None:
    path = tmp_path / "leaf.json"
    shutil.copy(DATA / "sonic_leaf_400g.json", path)
    result = _invoke("lint", str(path), "--device-type", "eos")
    # Parsed as EOS, the JSON has no interfaces: an input error, not a crash.
    assert result.exit_code == 2 and "FP408" in result.output


def test_given_priorities_are_checked(tmp_path: Path) -> None:
    result = _invoke(
        "lint", str(DATA / "nvue_spine.yaml"), "--pfc-priorities", "3,4", "--format", "json"
    )
    assert result.exit_code == 1
    assert {f["rule"] for f in json.loads(result.output)["findings"]} == {"L01"}
    bad = _invoke("lint", str(DATA / "nvue_spine.yaml"), "--roce-dscp", "99")
    assert bad.exit_code == 2 and "FP409" in bad.output


def _spec(tmp_path: Path, technologies: list[str]) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "cluster": {"gpus": 256},
                "fabric": {
                    "technologies": technologies,
                    "cable_reach": {"node_leaf_m": 3, "leaf_spine_m": 30},
                },
            }
        )
    )
    return str(path)


def test_roce_config_writes_files_that_lint_clean(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _invoke(
        "roce-config",
        _spec(tmp_path, ["infiniband", "roce_v2"]),
        "--vendor",
        "sonic",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert "host-nic-expected.txt" in names and "sonic-leaf.json" in names
    configs = [str(out / n) for n in names if n.endswith((".json", ".txt"))]
    linted = _invoke("lint", *configs, "--format", "json")
    assert linted.exit_code == 0 and json.loads(linted.output)["findings"] == []


def test_roce_config_needs_a_roce_technology(tmp_path: Path) -> None:
    result = _invoke(
        "roce-config",
        _spec(tmp_path, ["infiniband"]),
        "--vendor",
        "nvue",
        "-o",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 2 and "FP420" in result.output
    assert not (tmp_path / "out").exists()
