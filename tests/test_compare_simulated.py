"""``compare --backend flow`` end to end: the simulated collectives go into the step, the answer
is cached, and an unchanged spec reuses the cache (a changed one does not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricplan.cli.app import create_app

app = create_app()


def _spec(path: Path, gpus: int) -> Path:
    path.write_text(
        f"cluster: {{gpus: {gpus}}}\nfabric: {{technologies: [infiniband, roce_v2]}}\n"
        "workload: {model: llama3-8b, tp: 8}\n"
    )
    return path


def test_compare_with_the_flow_level_puts_its_times_in_the_step_and_caches_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FABRICPLAN_CACHE_DIR", str(cache))
    spec = _spec(tmp_path / "spec.yaml", 32)
    runner = CliRunner()
    args = ["compare", str(spec), "--backend", "flow", "-f", "json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    doc = json.loads(first.stdout)
    for option in doc["options"]:
        assert option["performance"]["backend"] == "flow"
        notes = option["performance"]["notes"]
        assert any("step time uses the simulated collectives" in n for n in notes), notes
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) >= 2  # one simulated result per technology at least
    stamps = {p: p.stat().st_mtime_ns for p in entries}
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["recommendation"] == doc["recommendation"]
    assert {p: p.stat().st_mtime_ns for p in sorted(cache.rglob("*.json"))} == stamps
    # A different question is a different entry; --no-cache leaves the cache alone.
    bigger = _spec(tmp_path / "bigger.yaml", 64)
    assert (
        runner.invoke(app, ["compare", str(bigger), "--backend", "flow", "-f", "json"]).exit_code
        == 0
    )
    grown = sorted(cache.rglob("*.json"))
    assert len(grown) > len(entries)
    fresh = runner.invoke(app, [*args, "--no-cache"])
    assert fresh.exit_code == 0, fresh.output
    assert sorted(cache.rglob("*.json")) == grown
