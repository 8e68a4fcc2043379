"""``fabricplan sweep`` and ``sweep-report`` on the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import typer
import yaml
from typer.testing import CliRunner

from fabricplan.cli import sweep_cmd

RUNNER = CliRunner()
SPEC = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband", "roce_v2"]}}


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.callback()
    def _root() -> None:
        """fabricplan"""

    sweep_cmd.register(app)
    return app


APP = _app()


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


def test_sweep_writes_the_grid_and_resumes(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    args = [
        "sweep",
        str(spec_file),
        "--vary",
        "cluster.gpus=512..2048x2",
        "--vary",
        "fabric.oversubscription=1,2",
        "--workers",
        "1",
        "-o",
        str(out),
    ]
    result = RUNNER.invoke(APP, args)
    assert result.exit_code == 0, result.output
    assert "12 rows; 6 points, 6 run now, 0 already done, 0 failed" in result.stdout
    assert pq.read_table(out).num_rows == 12
    again = RUNNER.invoke(APP, args)
    assert "6 points, 0 run now, 6 already done" in again.stdout


@pytest.mark.parametrize(
    ("vary", "code"),
    [
        ("cluster.gpus", "FP1001"),
        ("cluster.gpuz=1,2", "FP1002"),
        ("cluster.gpus=1024,,2048", "FP1003"),
        ("cluster.gpus=4096..1024x2", "FP1004"),
        ("cluster.gpus=1024,1020", "FP101"),
        ("fabric.technologies=[ethernet]", "FP104"),
    ],
)
def test_bad_vary_is_one_line_and_exit_2(
    spec_file: Path, tmp_path: Path, vary: str, code: str
) -> None:
    out = tmp_path / "r.parquet"
    result = RUNNER.invoke(APP, ["sweep", str(spec_file), "--vary", vary, "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].endswith(f"[{code}]")
    assert "Traceback" not in result.output
    assert not out.exists()


def test_bad_options_are_one_line(spec_file: Path, tmp_path: Path) -> None:
    base = ["sweep", str(spec_file), "--vary", "cost.years=3,5", "-o", str(tmp_path / "r.parquet")]
    for extra, code in (
        (["--workers", "2", "--ray", "local"], "FP1011"),
        (["--size", "lots"], "FP1011"),
        (["--backend", "quantum"], "FP117"),
    ):
        result = RUNNER.invoke(APP, [*base, *extra])
        assert result.exit_code == 2 and result.stderr.strip().endswith(f"[{code}]"), result.output
    misnamed = tmp_path / "r.yaml"
    result = RUNNER.invoke(APP, [*base[:-1], str(misnamed)])
    assert result.exit_code == 2 and result.stderr.strip().endswith("[FP1233]"), result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not misnamed.exists()


def test_a_results_file_of_another_sweep_is_refused(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    first = RUNNER.invoke(
        APP,
        [
            "sweep",
            str(spec_file),
            "--vary",
            "cost.years=3,5",
            "--workers",
            "1",
            "--backend",
            "fake",
            "-o",
            str(out),
        ],
    )
    assert first.exit_code == 0, first.output
    second = RUNNER.invoke(
        APP,
        [
            "sweep",
            str(spec_file),
            "--vary",
            "cost.years=4",
            "--workers",
            "1",
            "--backend",
            "fake",
            "-o",
            str(out),
        ],
    )
    assert second.exit_code == 2 and "[FP1009]" in second.stderr
    report = RUNNER.invoke(APP, ["sweep-report", str(spec_file)])
    assert report.exit_code == 2 and "[FP1010]" in report.stderr


def test_sweep_report_formats(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    result = RUNNER.invoke(
        APP,
        [
            "sweep",
            str(spec_file),
            "--vary",
            "cluster.gpus=512..8192x2",
            "--vary",
            "fabric.oversubscription=1,2",
            "--workers",
            "1",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    table = RUNNER.invoke(APP, ["sweep-report", str(out)])
    assert table.exit_code == 0 and "Crossovers" in table.stdout and "Pareto front" in table.stdout
    html = tmp_path / "sweep.html"
    assert RUNNER.invoke(APP, ["sweep-report", str(out), "-o", str(html)]).exit_code == 0
    text = html.read_text()
    assert text.count("<svg") == 3
    assert not any(tag in text for tag in ("<script", "<link", "src=", "<img"))  # nothing fetched
    again = tmp_path / "again.html"
    RUNNER.invoke(APP, ["sweep-report", str(out), "-o", str(again)])
    assert again.read_text() == text
    md = RUNNER.invoke(APP, ["sweep-report", str(out), "--format", "md"])
    assert md.stdout.startswith("# Sweep over cluster.gpus, fabric.oversubscription: 10 points")
    named = RUNNER.invoke(APP, ["sweep-report", str(out), "--format", "markdown"])
    assert named.exit_code == 0 and named.stdout == md.stdout
    by_suffix = tmp_path / "sweep.markdown"  # the suffix alone chooses Markdown
    assert RUNNER.invoke(APP, ["sweep-report", str(out), "-o", str(by_suffix)]).exit_code == 0
    assert by_suffix.read_text(encoding="utf-8").startswith("# Sweep over cluster.gpus")
    bad_x = RUNNER.invoke(APP, ["sweep-report", str(out), "--x", "fabric.topology"])
    assert bad_x.exit_code == 2 and "[FP1014]" in bad_x.stderr


@pytest.mark.parametrize(
    ("workers", "stop"),
    [("1", "SIGTERM"), ("2", "SIGTERM"), ("1", "Ctrl-C"), ("2", "Ctrl-C")],
)
def test_sigterm_or_ctrl_c_stops_the_sweep_with_every_finished_point_written(
    spec_file: Path, tmp_path: Path, workers: str, stop: str
) -> None:
    """SIGTERM to the process, or Ctrl-C as a terminal sends it: SIGINT to the whole process
    group (the sweep and its workers)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    src = Path(sweep_cmd.__file__).resolve().parents[2]
    out = tmp_path / "r.parquet"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fabricplan",
            "sweep",
            str(spec_file),
            "--vary",
            "cluster.gpus=512..8192+8",
            "--workers",
            workers,
            "--backend",
            "fake",
            "-o",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a shell job has
    )
    deadline = time.monotonic() + 120
    while not out.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # the first periodic write: some of the 961 points are done, not all
    if stop == "SIGTERM":
        process.send_signal(signal.SIGTERM)
    else:
        os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # no worker (nor the fork server) outlives the sweep
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("a process of the stopped sweep is still running")
    assert "interrupted: every finished point is in" in stderr
    rows = pq.read_table(out).to_pylist()
    points = {r["point"] for r in rows}
    assert 0 < len(points) < 961
    if workers == "1":
        assert points == set(range(len(points)))  # one worker: the first points in order
    assert len(rows) == 2 * len(points)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_sweep_report_of_one_text_key(spec_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.parquet"
    result = RUNNER.invoke(
        APP,
        [
            "sweep",
            str(spec_file),
            "--vary",
            "priorities=balanced,cost_sensitive",
            "--workers",
            "1",
            "--backend",
            "fake",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    html = RUNNER.invoke(APP, ["sweep-report", str(out), "--format", "html"])
    assert html.exit_code == 0
    assert html.stdout.count("<svg") == 1  # no numeric x, no second key: the Pareto front only
    assert "Crossovers" not in html.stdout


def test_a_bare_ray_reaches_the_sweep_command_as_local(monkeypatch: pytest.MonkeyPatch) -> None:
    # The console script completes a bare --ray before the parser sees it.
    from fabricplan.cli import app as app_module

    seen: list[list[str]] = []

    def recording_app() -> Any:
        return lambda args: seen.append(args)

    monkeypatch.setattr(app_module, "create_app", recording_app)
    monkeypatch.setattr(sys, "argv", ["fabricplan", "sweep", "s.yaml", "--ray", "--fresh"])
    app_module.main()
    assert seen == [["sweep", "s.yaml", "--ray", "local", "--fresh"]]
