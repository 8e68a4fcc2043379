"""design / cost / compare on the command line: shapes, formats and one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from fabricplan.cli.app import create_app

app = create_app()
RUNNER = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MINIMAL = {
    "cluster": {"gpus": 1024, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {
        "technologies": ["infiniband", "roce_v2"],
        "topology": "rail_optimized",
        "oversubscription": 1,
    },
    "priorities": "balanced",
}


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(MINIMAL))
    return path


def _json(args: list[str]) -> dict:  # type: ignore[type-arg]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_design_json_has_the_documented_keys(spec_file: Path) -> None:
    doc = _json(["design", str(spec_file), "--format", "json"])
    assert [o["technology"] for o in doc["options"]] == ["infiniband", "roce_v2"]
    for option in doc["options"]:
        design = option["design"]
        assert set(design["switches"]) == {"leaf", "spine", "core"}
        assert design["tiers"] in (1, 2, 3)
        assert design["links"]["node_leaf"] == 1024  # one link per NIC port
        assert design["bisection_tbps"] == pytest.approx(1024 * 0.4 / 2)  # non-blocking
        assert "cost" not in option
    # every default is shown in the output
    assert doc["spec"]["cost"]["years"] == 5
    assert doc["spec"]["fabric"]["tiers"] == "auto"


def test_cost_json_adds_cost(spec_file: Path) -> None:
    doc = _json(["cost", str(spec_file), "--format", "json"])
    for option in doc["options"]:
        cost = option["cost"]
        assert cost["capex_usd"] > 0 and cost["power_w"] > 0
        assert cost["tco_usd"] > cost["capex_usd"]
        # capex is the sum of the priced bill of materials
        assert cost["capex_usd"] == pytest.approx(sum(li["total_usd"] for li in cost["lines"]))


def test_compare_json_has_recommendation(spec_file: Path) -> None:
    doc = _json(["compare", str(spec_file), "--format", "json"])
    rec = doc["recommendation"]
    assert rec["technology"] in ("infiniband", "roce_v2")
    assert rec["reasons"]
    assert rec["ranking"][0]["technology"] == rec["technology"]
    for option in doc["options"]:
        assert {"design", "cost", "performance", "ops"} <= set(option)


def test_compare_html_is_one_self_contained_file(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = RUNNER.invoke(app, ["compare", str(spec_file), "-f", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") >= 3  # busbw per collective, cost, step time
    # no network fetches: no external scripts, stylesheets, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script" not in page


def test_compare_markdown(spec_file: Path) -> None:
    result = RUNNER.invoke(app, ["compare", str(spec_file), "-f", "md"])
    assert result.exit_code == 0
    assert "**Recommended:" in result.stdout
    assert "| capex |" in result.stdout


def test_markdown_is_md_by_its_whole_name(spec_file: Path, tmp_path: Path) -> None:
    md = RUNNER.invoke(app, ["compare", str(spec_file), "-f", "md"])
    out = tmp_path / "report.markdown"
    named = RUNNER.invoke(app, ["compare", str(spec_file), "-f", "markdown", "-o", str(out)])
    assert named.exit_code == 0, named.output
    assert out.read_text(encoding="utf-8").rstrip("\n") == md.stdout.rstrip("\n")


def test_compare_table_on_an_example() -> None:
    result = RUNNER.invoke(app, ["compare", str(EXAMPLES / "enterprise-256" / "spec.yaml")])
    assert result.exit_code == 0, result.output
    assert "Recommended:" in result.stdout


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("cluster: {gpus: 1020}\n", "cluster.gpus"),
        ("cluster: {gpus: 1024, gpuz: 1}\n", "cluster.gpuz"),
        ("cluster: [1, 2\n", "not valid YAML"),
        ("fabric: {topology: fat_tree}\n", "cluster"),
    ],
)
def test_bad_spec_is_one_line_and_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    out = tmp_path / "out.json"
    result = RUNNER.invoke(app, ["compare", str(path), "-f", "json", "-o", str(out)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0]
    assert "Traceback" not in result.output
    assert not out.exists(), "no partial file on error"


def test_missing_spec_file(tmp_path: Path) -> None:
    result = RUNNER.invoke(app, ["design", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert "cannot read the spec" in result.stderr


def test_init_writes_a_spec_that_compares(tmp_path: Path) -> None:
    path = tmp_path / "starter.yaml"
    assert RUNNER.invoke(app, ["init", str(path)]).exit_code == 0
    assert RUNNER.invoke(app, ["init", str(path)]).exit_code == 2  # no silent overwrite
    doc = _json(["design", str(path), "--format", "json"])
    assert len(doc["options"]) == 2


def test_a_technology_that_cannot_be_built_is_reported_not_fatal(tmp_path: Path) -> None:
    # With one plane pinned, 100,000 NIC ports exceed a 3-tier fat tree of 64-port NDR switches
    # (64^3/4 = 65,536), while 128-port 400G Ethernet switches reach 128^3/4 = 524,288.
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({"cluster": {"gpus": 100_000}, "fabric": {"planes": 1}}))
    doc = _json(["compare", str(path), "--format", "json"])
    assert [o["technology"] for o in doc["options"]] == ["roce_v2"]
    assert [(o["technology"], o["code"]) for o in doc["infeasible"]] == [("infiniband", "FP302")]
    assert doc["recommendation"]["technology"] == "roce_v2"
    assert "infiniband cannot be built" in doc["recommendation"]["reasons"][0]


def test_with_planes_searched_infiniband_is_built_at_100k_gpus(tmp_path: Path) -> None:
    # The search tries planes: two planes of 50,000 ports each fit 3 tiers of 64-port switches.
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({"cluster": {"gpus": 100_000}}))
    doc = _json(["design", str(path), "--format", "json"])
    ib = next(o for o in doc["options"] if o["technology"] == "infiniband")
    assert ib["design"]["planes"] >= 2
    assert doc["infeasible"] == []
    lost = [a for a in ib["design"]["alternatives"] if a["planes"] == 1]
    assert lost and all(a["lost_because"].startswith("cannot be built") for a in lost)


def test_the_starter_spec_names_only_presets_that_exist(tmp_path: Path) -> None:
    from fabricplan.analytic.workload import workload_presets
    from fabricplan.cli.spec_cmd import STARTER_SPEC

    named = re.search(r"model: llama3-70b\s+# (.*)\n\s+#\s+\| (\S+)", STARTER_SPEC)
    assert named is not None
    listed = {n.strip() for n in named.group(1).split("|")} | {named.group(2).rstrip(",")}
    assert listed <= set(workload_presets())
