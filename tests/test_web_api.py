"""The web API through the ASGI test client: every route, its document, and every refusal.

The documents must be what the CLI prints with ``--format json`` for the same input (the API and
the CLI call the same library functions); bad input is 422 with the CLI's one line; oversize bodies
and files are 413; nothing is a 500.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from fabricplan.cli.app import create_app as create_cli
from fabricplan.web.app import create_app
from fabricplan.web.job import JobBoard
from fabricplan.web.limit import WebSettings
from fabricplan.web.operation import simulation_work
from fabricplan.web.schema import (
    BenchDocument,
    CalibrationDocument,
    CatalogDocument,
    JobDocument,
    LintDocument,
    OptionsDocument,
    PerfDocument,
    SimulateRequest,
    SpecDocument,
)

DATA = Path(__file__).parent / "data"
SPEC: dict[str, Any] = {"name": "web-test", "cluster": {"gpus": 256}}
ROCE_ONLY: dict[str, Any] = {"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}}
SMALL_SIM_SPEC: dict[str, Any] = {"cluster": {"gpus": 32}, "fabric": {"technologies": ["roce_v2"]}}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(WebSettings(max_body_bytes=2**20, max_file_bytes=2**18))) as c:
        yield c


def _cli(*args: str) -> Any:
    return CliRunner().invoke(create_cli(), list(args))


def _cli_json(*args: str) -> Any:
    result = _cli(*args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def _error(response: Any, status: int = 422) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "code"}
    assert "\n" not in body["error"] and "Traceback" not in body["error"]
    assert body["error"].endswith(f"[{body['code']}]")
    return str(body["error"])


# --- the main job ---


def test_compare_is_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    answer = client.post("/api/compare", json={"spec": SPEC})
    assert answer.status_code == 200
    doc = answer.json()
    OptionsDocument.model_validate(doc)
    cli = _cli_json("compare", str(spec_file), "--format", "json")
    assert doc == cli
    assert doc["recommendation"]["technology"] in {"infiniband", "roce_v2"}


def test_a_yaml_spec_is_the_same_as_its_json(client: TestClient) -> None:
    as_yaml = client.post(
        "/api/compare",
        content=yaml.safe_dump(SPEC),
        headers={"content-type": "application/yaml"},
    )
    assert as_yaml.status_code == 200
    assert as_yaml.json() == client.post("/api/compare", json={"spec": SPEC}).json()


def test_design_and_cost_carry_only_their_parts(client: TestClient) -> None:
    design = client.post("/api/design", json={"spec": SPEC}).json()
    cost = client.post("/api/cost", json={"spec": SPEC}).json()
    OptionsDocument.model_validate(design)
    assert set(design["options"][0]) == {"technology", "design", "growth"}
    assert set(cost["options"][0]) == {"technology", "design", "growth", "cost"}
    assert "recommendation" not in design
    # 256 GPUs, 8 NICs per node, one rail per NIC: every GPU has its own leaf port.
    assert design["options"][0]["design"]["links"]["node_leaf"] == 256


def test_spec_route_fills_defaults_and_writes_yaml(client: TestClient) -> None:
    doc = client.post("/api/spec", json={"spec": SPEC}).json()
    SpecDocument.model_validate(doc)
    assert yaml.safe_load(doc["yaml"]) == SPEC
    assert doc["effective"]["cluster"]["gpus_per_node"] == 8


def test_reports_download_as_html_and_markdown(client: TestClient) -> None:
    html = client.post("/api/report?format=html", json={"spec": SPEC})
    md = client.post("/api/report?format=md", json={"spec": SPEC})
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "<svg" in html.text and "web-test" in html.text
    assert md.headers["content-type"].startswith("text/markdown") and "# web-test" in md.text
    assert client.post("/api/report?format=pdf", json={"spec": SPEC}).status_code == 422
    named = client.post("/api/report?format=markdown", json={"spec": SPEC})
    assert named.headers["content-type"].startswith("text/markdown") and named.text == md.text


def test_perf_is_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    body = {"spec": SPEC, "collectives": ["all_gather"], "sizes_bytes": [1024, 2**26]}
    doc = client.post("/api/perf", json=body).json()
    PerfDocument.model_validate(doc)
    cli = _cli_json("perf", str(spec_file), "-c", "all_gather", "-s", "1K,64M", "-f", "json")
    assert doc == cli
    assert len(doc["results"]) == 2 * 2  # two technologies x two sizes
    p2p = client.post("/api/perf", json={"spec": SPEC, "p2p": True}).json()
    assert {r["test"] for r in p2p["results"]} >= {"write_bw", "write_lat"}


def test_roce_config_files_lint_clean_through_the_api(client: TestClient) -> None:
    # sn5600's 128-port leaf config stays below the fixture's 256 KiB upload cap (a 256-port
    # Tomahawk-6 leaf's config_db.json is about 470 kB).
    spec = {**SPEC, "fabric": {"technologies": ["roce_v2"], "switch": {"roce_v2": "sn5600"}}}
    files = client.post("/api/roce-config", json={"spec": spec, "vendor": "sonic"}).json()["files"]
    assert "host-nic-expected.txt" in files
    uploads = [
        {"name": name, "text": text}
        for name, text in files.items()
        if name.endswith(".json") or name == "host-nic-expected.txt"
    ]
    lint = client.post("/api/lint", json={"files": uploads}).json()
    assert lint["summary"]["error"] == 0


def test_catalog_lists_entries_and_prices(client: TestClient) -> None:
    doc = client.get("/api/catalog").json()
    CatalogDocument.model_validate(doc)
    assert {"qm9700", "cx7", "infiniband"} <= {item["id"] for item in doc["items"]}
    assert all(p["basis"] for p in doc["prices"])


# --- files: lint, check-bench, calibrate ---


def _upload(path: Path, name: str | None = None) -> dict[str, str]:
    return {"name": name or path.name, "text": path.read_text()}


def test_lint_finds_a_broken_sonic_config_with_fixes(client: TestClient) -> None:
    good = DATA / "lint" / "sonic_leaf_400g.json"
    clean = client.post("/api/lint", json={"files": [_upload(good)]}).json()
    LintDocument.model_validate(clean)
    assert clean["findings"] == [] and clean["devices"][0]["format"] == "sonic"
    broken = good.read_text().replace('"mtu": "9100"', '"mtu": "1500"')
    doc = client.post("/api/lint", json={"files": [{"name": "leaf01.json", "text": broken}]})
    findings = doc.json()["findings"]
    mtu = [f for f in findings if f["rule"] == "L08"]
    assert mtu and mtu[0]["severity"] == "error" and mtu[0]["fix"]
    assert mtu[0]["file"] == "leaf01.json"


def test_lint_of_every_format_matches_the_cli() -> None:
    paths = sorted((DATA / "lint").iterdir())
    with TestClient(create_app()) as client:
        doc = client.post("/api/lint", json={"files": [_upload(p) for p in paths]}).json()
    cli = _cli_json("lint", *(str(p) for p in paths), "--format", "json")
    assert [f["rule"] for f in doc["findings"]] == [f["rule"] for f in cli["findings"]]
    assert [d["format"] for d in doc["devices"]] == [d["format"] for d in cli["devices"]]


def test_check_bench_judges_a_real_log_against_the_model(client: TestClient) -> None:
    log = DATA / "measure" / "nccl_2023_multi_roce_mpi.log"
    doc = client.post("/api/check-bench", json={"files": [_upload(log)], "spec": SPEC}).json()
    BenchDocument.model_validate(doc)
    rows = doc["measurements"]
    assert rows and all("expected" in r and "status" in r for r in rows)
    assert doc["files"][0]["runs"][0]["technology_hint"] == "roce"
    bare = client.post("/api/check-bench", json={"files": [_upload(log)]}).json()
    assert all("expected" not in r for r in bare["measurements"])


def test_calibrate_returns_the_profile_yaml(client: TestClient) -> None:
    logs = ["nccl_2025_allreduce_cut.log", "perftest_write_bw_gbits.log", "perftest_write_lat.log"]
    body = {"files": [_upload(DATA / "measure" / n) for n in logs], "spec": SPEC}
    doc = client.post("/api/calibrate", json=body).json()
    CalibrationDocument.model_validate(doc)
    assert doc["technology"] == "infiniband"
    assert doc["error_after_pct"] < doc["error_before_pct"]
    assert yaml.safe_load(doc["profile_yaml"])["source"].startswith("fabricplan calibrate")


# --- refusals: one line, the CLI's message ---


def test_a_bad_spec_is_the_cli_line(client: TestClient, tmp_path: Path) -> None:
    bad = {"cluster": {"gpus": 1001}}
    line = _error(client.post("/api/compare", json={"spec": bad}))
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(bad))
    cli = _cli("compare", str(spec_file))
    assert cli.exit_code == 2
    # the same message, with the request's spec named "spec" instead of the file's path
    assert cli.output.strip() == "error: " + line.replace("spec:", f"{spec_file}:", 1)


@pytest.mark.parametrize(
    ("route", "body", "expected"),
    [
        ("/api/compare", {"spec": {"cluster": {"gpus": 64}, "fabrik": {}}}, "fabrik: unknown key"),
        ("/api/compare", {"spec": {}}, "cluster: is required"),
        ("/api/compare", {"spec": {"cluster": {"gpus": 64, "gpu": "h900"}}}, "FP109"),
        ("/api/compare", {"spec": {"cluster": {"gpus": 64}}, "extra": 1}, "request: extra"),
        ("/api/compare", {}, "request: spec: is required"),
        ("/api/compare", {"spec": 7}, "request: spec"),
        (
            "/api/compare",
            {"spec": {"cluster": {"gpus": 64}, "cost": {"price_book": "/etc/passwd"}}},
            "FP1115",
        ),
        ("/api/perf", {"spec": SPEC, "collectives": ["all_sum"]}, "request: collectives.0"),
        ("/api/perf", {"spec": SPEC, "sizes_bytes": [0]}, "FP1119"),
        ("/api/perf", {"spec": ROCE_ONLY, "sharp": True}, "FP513"),
        (
            "/api/roce-config",
            {"spec": {**SPEC, "fabric": {"technologies": ["infiniband"]}}},
            "FP420",
        ),
        ("/api/lint", {"files": []}, "request: files"),
        ("/api/lint", {"files": [{"name": "x.txt", "text": "hello"}]}, "FP402"),
        ("/api/lint", {"files": [{"name": "x.txt", "text": "a\x00b"}]}, "FP1114"),
        ("/api/lint", {"files": [{"name": "../", "text": "x"}]}, "FP1116"),
        ("/api/check-bench", {"files": [{"name": "a.log", "text": ""}]}, "FP451"),
        ("/api/check-bench", {"files": [{"name": "a.log", "text": "x"}], "op": "sum"}, "FP466"),
        ("/api/calibrate", {"files": [{"name": "a.log", "text": "x"}]}, "request: spec"),
        ("/api/simulate", {"spec": SMALL_SIM_SPEC, "time_limit_s": 1e6}, "time_limit_s"),
        ("/api/simulate", {"spec": SMALL_SIM_SPEC, "pattern": "chaos"}, "request: pattern"),
    ],
)
def test_bad_input_is_one_line_422(
    client: TestClient, route: str, body: dict[str, Any], expected: str
) -> None:
    assert expected in _error(client.post(route, json=body))


def test_limits_name_the_field_and_the_limit(client: TestClient) -> None:
    too_many = {"spec": {"cluster": {"gpus": 1024}}, "backend": "packet"}
    line = _error(client.post("/api/simulate", json=too_many))
    assert "cluster.gpus" in line and "at most 128 GPUs" in line and "FP1110" in line
    line = _error(client.post("/api/simulate", json={"spec": SMALL_SIM_SPEC, "time_limit_s": 1e4}))
    assert "time_limit_s" in line and "600 s" in line
    big = {"spec": SMALL_SIM_SPEC, "backend": "packet", "size_bytes": 2**30}
    assert "size_bytes" in _error(client.post("/api/simulate", json=big))
    huge = {"spec": {"cluster": {"gpus": 2**21}}}
    assert "at most 1048576 GPUs" in _error(client.post("/api/compare", json=huge))


def test_bad_yaml_names_the_line(client: TestClient) -> None:
    headers = {"content-type": "application/yaml"}
    line = _error(client.post("/api/compare", content="cluster:\n  gpus: [64\n", headers=headers))
    assert line.startswith("spec:") and "FP106" in line
    assert "FP107" in _error(client.post("/api/compare", content="- 1\n", headers=headers))
    assert "FP1107" in _error(client.post("/api/compare", content=b"\xff\xfe", headers=headers))


def test_malformed_json_is_422(client: TestClient) -> None:
    response = client.post(
        "/api/compare", content="{", headers={"content-type": "application/json"}
    )
    assert "FP1104" in _error(response)


def test_oversize_body_and_file_are_413(client: TestClient) -> None:
    big = "x" * (2**20 + 1)
    line = _error(client.post("/api/lint", json={"files": [{"name": "a", "text": big}]}), 413)
    assert "FP1105" in line and "1048576" in line
    # within the body cap, above the file cap (256 KiB in this fixture)
    text = "# " + "y" * (2**18)
    line = _error(client.post("/api/lint", json={"files": [{"name": "a.cfg", "text": text}]}), 413)
    assert line.startswith("a.cfg: file too large") and "FP1113" in line


def test_unknown_routes_and_jobs_are_one_line(client: TestClient) -> None:
    assert "FP1108" in _error(client.get("/api/nothing"), 404)
    assert "FP1109" in _error(client.get("/api/jobs/abc"), 404)
    assert "FP1109" in _error(client.post("/api/jobs/abc/cancel"), 404)
    assert "FP1108" in _error(client.get("/static/../app.py"), 404)


# --- the page and its security headers ---


def test_the_page_loads_only_its_own_files(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "fabricplan" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for ref in ("/static/app.js", "/static/app.css"):
        assert ref in page.text
        assert client.get(ref).status_code == 200
    assert "http://" not in page.text and "https://" not in page.text


# --- the token ---


def test_a_token_is_required_on_every_route() -> None:
    token = "s3cret-token-for-tests"
    with TestClient(create_app(WebSettings(token=token))) as client:
        assert "FP1106" in _error(client.get("/api/catalog"), 401)
        assert "FP1106" in _error(client.get("/"), 401)
        wrong = {"authorization": "Bearer nope"}
        assert client.get("/api/catalog", headers=wrong).status_code == 401
        assert client.get("/api/catalog", headers={"authorization": f"Bearer {token}"}).is_success
        assert client.get("/api/catalog", headers={"x-fabricplan-token": token}).is_success
        # the page's link sets a cookie the page's own requests then carry
        page = client.get(f"/?token={token}")
        assert page.is_success and "fabricplan_token" in page.headers["set-cookie"]
        assert client.get("/api/catalog").is_success
        # a query token is accepted for the page only
        client.cookies.clear()
        assert client.get(f"/api/catalog?token={token}").status_code == 401


def test_only_the_allowed_host_names_are_served() -> None:
    settings = WebSettings(allowed_hosts=("127.0.0.1", "localhost", "::1"))
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        assert client.get("/api/catalog").is_success
        assert client.get("/api/catalog", headers={"host": "localhost:8000"}).is_success
        assert client.get("/api/catalog", headers={"host": "[::1]:8000"}).is_success
        rebound = client.get("/api/catalog", headers={"host": "attacker.example:8000"})
        assert "FP1123" in _error(rebound, 421)


# --- jobs ---


def _wait(client: TestClient, job_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        doc: dict[str, Any] = client.get(f"/api/jobs/{job_id}").json()
        if doc["status"] in {"done", "failed", "cancelled"}:
            return doc
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_a_flow_simulation_job_is_the_cli_document(client: TestClient, tmp_path: Path) -> None:
    body = {"spec": SMALL_SIM_SPEC, "pattern": "all_to_all", "size_bytes": 2**20}
    started = client.post("/api/simulate", json=body)
    assert started.status_code == 202
    job = JobDocument.model_validate(started.json())
    assert job.status in {"queued", "running", "done"}
    done = _wait(client, job.id)
    assert done["status"] == "done" and done["progress"] == 1.0
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SMALL_SIM_SPEC))
    cli = _cli_json("simulate", str(spec_file), "-p", "all_to_all", "-s", "1M", "-f", "json")
    for ours, theirs in zip(done["result"]["results"], cli["results"], strict=True):
        ours.pop("wall_s"), theirs.pop("wall_s")
        assert ours == theirs
    listed = client.get("/api/jobs").json()["jobs"]
    assert [j["id"] for j in listed] == [job.id] and listed[0]["result"] is None


def test_a_job_can_be_cancelled_and_a_failing_job_fails_alone() -> None:
    settings = WebSettings(job_workers=1)
    with TestClient(create_app(settings)) as client:
        long_body = {
            "spec": {"cluster": {"gpus": 1024}},
            "pattern": "all_to_all",
            "size_bytes": 2**24,
        }
        first = client.post("/api/simulate", json=long_body).json()["id"]
        queued = client.post("/api/simulate", json=long_body).json()["id"]
        cancelled = client.post(f"/api/jobs/{queued}/cancel").json()
        assert cancelled["status"] in {"cancelled", "queued"}
        client.post(f"/api/jobs/{first}/cancel")
        assert _wait(client, first)["status"] == "cancelled"
        assert _wait(client, queued)["status"] == "cancelled"
        # a switch that does not exist fails in the worker; the server keeps serving
        failing = {"spec": SMALL_SIM_SPEC, "pattern": "permutation", "fail_switches": ["spine99"]}
        failed = _wait(client, client.post("/api/simulate", json=failing).json()["id"])
        assert failed["status"] == "failed" and "spine99" in failed["error"]
        assert client.get("/api/catalog").is_success


def test_a_simulation_reports_progress_as_it_runs() -> None:
    # two technologies x three seeds: six runs, each reporting the share of its bytes delivered
    body = SimulateRequest(
        spec={"cluster": {"gpus": 128}}, pattern="permutation", size_bytes=2**24, seeds=3
    )
    label, work = simulation_work(body, WebSettings())
    seen: list[float] = []
    result = work(lambda progress, stage: seen.append(progress))
    assert label == "flow permutation 16M, 128 GPUs"
    assert [r["technology"] for r in result["results"]] == ["infiniband", "roce_v2"]
    assert any(0.0 < p < 1.0 for p in seen) and seen == sorted(seen) and seen[-1] <= 1.0


def test_a_running_job_shows_its_progress_and_stage() -> None:
    release = threading.Event()

    def work(report: Any) -> dict[str, Any]:
        report(0.5, "half way")
        release.wait(30)
        return {"answer": 42}

    board = JobBoard(workers=1, kept=2)
    try:
        job_id = board.submit("test", "waiting job", work, time_limit_s=60)
        deadline = time.monotonic() + 30
        while (view := board.view(job_id)) is not None and view.progress < 0.5:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert view is not None and view.status == "running" and view.stage == "half way"
        release.set()
        done = board.wait(job_id, 30)
        assert done.status == "done" and done.progress == 1.0 and done.result == {"answer": 42}
    finally:
        release.set()
        board.close()


def test_a_job_past_its_time_limit_fails_with_the_reason() -> None:
    def work(report: Any) -> dict[str, Any]:
        while True:
            report(0.1, "spinning")
            time.sleep(0.01)

    board = JobBoard(workers=1, kept=2)
    try:
        done = board.wait(board.submit("test", "endless", work, time_limit_s=0.2), 30)
        assert done.status == "failed" and done.error == "stopped after its time limit of 0.2 s"
    finally:
        board.close()


def test_finished_jobs_beyond_the_kept_count_are_dropped_oldest_first() -> None:
    board = JobBoard(workers=1, kept=2)
    try:
        ids = [board.submit("test", f"job {i}", lambda report: {}, 10) for i in range(4)]
        board.wait(ids[-1], 30)  # one worker runs them in order: the last one finishes last
        assert [j.id for j in board.list()] == [ids[3], ids[2]]
    finally:
        board.close()


def test_two_apps_share_no_jobs() -> None:
    with TestClient(create_app()) as first, TestClient(create_app()) as second:
        job = first.post("/api/simulate", json={"spec": SMALL_SIM_SPEC, "pattern": "incast"})
        job_id = job.json()["id"]
        assert second.get(f"/api/jobs/{job_id}").status_code == 404
        _wait(first, job_id)


def test_serve_refuses_other_hosts_without_a_token_and_short_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FABRICPLAN_TOKEN", raising=False)
    exposed = _cli("serve", "--host", "0.0.0.0")
    assert exposed.exit_code == 2 and "FP1122" in exposed.output
    short = _cli("serve", "--host", "0.0.0.0", "--token", "abc")
    assert short.exit_code == 2 and "FP1121" in short.output
    monkeypatch.setenv("FABRICPLAN_TOKEN", "x")
    assert "FP1121" in _cli("serve", "--host", "10.0.0.1").output  # the variable counts too


def test_a_sweep_job_holds_the_rows_of_every_point(client: TestClient) -> None:
    body = {"spec": SPEC, "vary": ["cluster.gpus=256,512", "fabric.oversubscription=1,2"]}
    started = client.post("/api/sweep", json=body)
    assert started.status_code == 202
    done = _wait(client, started.json()["id"])
    assert done["status"] == "done", done
    result = done["result"]
    assert result["keys"] == ["cluster.gpus", "fabric.oversubscription"] and result["points"] == 4
    assert len(result["rows"]) == 4 * 2  # points x technologies
    assert {r["technology"] for r in result["rows"]} == {"infiniband", "roce_v2"}
    rows = result["rows"]

    # The Pareto front per cluster size: an option is on it when no option of the same size is
    # at least as good on TCO and on step time and better on one.
    def beaten(r: dict[str, Any]) -> bool:
        return any(
            o["cluster.gpus"] == r["cluster.gpus"]
            and o["tco_usd"] <= r["tco_usd"]
            and o["step_s"] <= r["step_s"]
            and (o["tco_usd"] < r["tco_usd"] or o["step_s"] < r["step_s"])
            for o in rows
        )

    front = {(o["point"], o["technology"]) for o in result["options"] if o["front"]}
    unbeaten = [r for r in rows if not beaten(r)]
    assert front <= {(r["point"], r["technology"]) for r in unbeaten}
    # of options with the very same TCO and step (2:1 built 1:1 where it costs no less), one
    # stands for all on the front
    shown = {
        (r["cluster.gpus"], r["tco_usd"], r["step_s"])
        for r in rows
        if (r["point"], r["technology"]) in front
    }
    assert {(r["cluster.gpus"], r["tco_usd"], r["step_s"]) for r in unbeaten} == shown
    assert len(result["options"]) == len(rows)
    # The map: per (size, ratio) cell the technology recommended there (one seed: share 1).
    chart = result["map"]
    assert (chart["row_key"], chart["col_key"]) == ("cluster.gpus", "fabric.oversubscription")
    assert (chart["row_values"], chart["col_values"]) == ([256, 512], [1, 2])
    for i, gpus in enumerate(chart["row_values"]):
        for j, ratio in enumerate(chart["col_values"]):
            (winner,) = [
                r["technology"]
                for r in rows
                if r["recommended"]
                and r["cluster.gpus"] == gpus
                and r["fabric.oversubscription"] == ratio
            ]
            assert chart["cells"][i][j] == {"technology": winner, "share": 1.0}
    # The figures and crossover table are `fabricplan sweep-report`'s own for the same rows.
    from fabricplan.report.sweep import crossover_rows, figure_svgs, sweep_data

    data = sweep_data(rows, result["keys"], "analytic", 1)
    assert [(f["title"], f["svg"]) for f in result["figures"]] == figure_svgs(data)
    assert [f["title"] for f in result["figures"]] == [
        "Cost and step time against cluster.gpus",
        "Pareto front",
        "Recommendation map",
    ]
    header, crossing = crossover_rows(data)
    assert result["crossovers"] == {"header": header, "rows": crossing}


OVERS = ",".join(str(v) for v in range(1, 16))  # 18 GPU counts x 15 ratios: 270 points


@pytest.mark.parametrize(
    ("vary", "expected"),
    [
        (["cluster.gpus=8..1048576x2", f"fabric.oversubscription={OVERS}"], "FP1124"),
        (["cost.price_book=a.yaml,b.yaml"], "FP1115"),
        (["cluster.gpus=1001,1024"], "sweep point"),
        (["clusterr.gpus=8,16"], "FP10"),
    ],
)
def test_a_bad_sweep_is_refused_before_it_starts(
    client: TestClient, vary: list[str], expected: str
) -> None:
    assert expected in _error(client.post("/api/sweep", json={"spec": SPEC, "vary": vary}))
    assert client.get("/api/jobs").json()["jobs"] == []
