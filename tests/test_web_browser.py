"""The page in real headless Chromium: what an architect does with it, end to end.

The server runs in a thread on 127.0.0.1 (a free port); Chromium (Debian's ``/usr/bin/chromium``)
is driven by Playwright with a fresh profile. Every request the page makes is intercepted: one to
anywhere but the app fails the test. Expected answers are asked of the API for the spec the page
shows (its YAML editor), so the tests check that the page shows the model's answer, not a number
written here. Screenshots go to the test's temporary folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DATA = Path(__file__).parent / "data"
TIMEOUT_MS = 60_000

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run installs Debian's chromium")
    pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api")
uvicorn = pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _serving(token: str | None = None) -> Iterator[str]:
    """The app on 127.0.0.1 and a free port, in a thread, until the block ends."""
    from fabricplan.web.app import create_app
    from fabricplan.web.limit import WebSettings

    port = _free_port()
    settings = WebSettings(job_workers=1, token=token)
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with _serving() as url:
        yield url


@pytest.fixture
def page(base_url: str, tmp_path: Path) -> Iterator[Any]:
    outside: list[str] = []
    with playwright_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            viewport={"width": 1500, "height": 1000},
            accept_downloads=True,
        )

        def guard(route: Any) -> None:
            if route.request.url.startswith(base_url + "/"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        context.route("**/*", guard)
        errors: list[str] = []
        tab = context.new_page()
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(base_url + "/")
        tab.wait_for_selector("#verdict")
        yield tab
        context.close()
    assert outside == [], f"the page asked for something outside the app: {outside}"
    assert errors == [], f"the page raised: {errors}"


def _api_compare(base_url: str, spec_yaml: str) -> dict[str, Any]:
    request = urllib.request.Request(
        base_url + "/api/compare",
        data=spec_yaml.encode(),
        headers={"content-type": "application/yaml"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return dict(json.loads(response.read()))


def _answers(page: Any) -> int:
    return int(page.evaluate("() => Number(document.body.dataset.answers || 0)"))


def _wait_for_new_answer(page: Any, before: int) -> None:
    page.wait_for_function(f"() => Number(document.body.dataset.answers || 0) > {before}")
    page.wait_for_selector("#busy", state="hidden")


def _shows_the_api_answer(page: Any, base_url: str) -> str:
    expected = _api_compare(base_url, page.input_value("#yaml"))
    tech = expected["recommendation"]["technology"]
    name = {"infiniband": "InfiniBand", "roce_v2": "RoCEv2", "roce_v1": "RoCEv1"}[tech]
    verdict = page.inner_text("#verdict")
    assert f"Recommended: {name}" in verdict
    assert f"{expected['spec']['cluster']['gpus']:,}" in verdict
    rec = expected["recommendation"]
    assert rec["preset"] in page.inner_text("#objective")
    # the ranked money table: one column per ranked option, the API's order, every money term
    money = page.inner_text("#money")
    ranked = [r["technology"] for r in rec["ranking"]]
    header = page.inner_text("#money tr:nth-child(1)")
    names = {"infiniband": "InfiniBand", "roce_v2": "RoCEv2", "roce_v1": "RoCEv1"}
    positions = [header.index(f"{i + 1}. {names[t]}") for i, t in enumerate(ranked)]
    assert positions == sorted(positions)
    for label in (
        "capex",
        "energy",
        "support",
        "staff",
        "GPU time",
        "growth",
        "configuration risk",
    ):
        assert label in money
    assert page.locator("#money tr[data-term='total_usd'] td").count() == 1 + len(ranked)
    assert page.locator("#reasons li").count() == min(6, len(rec["reasons"]))
    return tech


def test_gpu_count_and_priorities_move_the_answer(page: Any, base_url: str, tmp_path: Path) -> None:
    page.screenshot(path=str(tmp_path / "start.png"), full_page=True)
    _shows_the_api_answer(page, base_url)
    plot_before = page.inner_html("#plot-busbw")
    design_before = page.inner_text("#options")

    before = _answers(page)
    page.fill("#f-gpus", "4096")
    page.dispatch_event("#f-gpus", "change")
    _wait_for_new_answer(page, before)
    assert "gpus: 4096" in page.input_value("#yaml")
    _shows_the_api_answer(page, base_url)
    assert page.inner_html("#plot-busbw") != plot_before
    assert page.inner_text("#options") != design_before
    page.screenshot(path=str(tmp_path / "gpus-4096.png"), full_page=True)

    before = _answers(page)
    page.select_option("#f-priorities", "cost_sensitive")
    _wait_for_new_answer(page, before)
    assert "priorities: cost_sensitive" in page.input_value("#yaml")
    _shows_the_api_answer(page, base_url)

    # a spec path of the decision: a growth target makes growth money on the scale
    assert page.locator("#w-weight-scalability").count() == 0  # no weight sliders any more
    before = _answers(page)
    page.click("#advanced summary")
    page.fill("#f-growth", "8192")
    page.dispatch_event("#f-growth", "change")
    _wait_for_new_answer(page, before)
    assert "target_gpus: 8192" in page.input_value("#yaml")
    _shows_the_api_answer(page, base_url)
    before = _answers(page)
    page.select_option("#f-sharp", "off")
    _wait_for_new_answer(page, before)
    assert re.search(r"sharp: [\x27\"]?off", page.input_value("#yaml"))
    _shows_the_api_answer(page, base_url)

    # the YAML editor drives the form
    before = _answers(page)
    text = page.input_value("#yaml").replace("gpus: 4096", "gpus: 1024")
    page.fill("#yaml", text)
    # the editor is read 400 ms after the last key (and checked by the server) before it asks for
    # a compare: wait for the form to take it, or a compare still running (the blur of the last
    # field) could end the wait with the answer for 4,096 GPUs
    page.wait_for_function("() => document.querySelector('#f-gpus').value === '1024'")
    _wait_for_new_answer(page, before)
    assert page.input_value("#f-gpus") == "1024"
    _shows_the_api_answer(page, base_url)
    page.screenshot(path=str(tmp_path / "whatif.png"), full_page=True)


def test_a_bad_value_shows_the_cli_line(page: Any) -> None:
    page.fill("#f-gpus", "1001")
    page.dispatch_event("#f-gpus", "change")
    page.wait_for_selector("#compare-error:not([hidden])")
    line = page.inner_text("#compare-error")
    assert line.startswith("spec: cluster.gpus: must be a multiple of cluster.gpus_per_node=8")
    assert line.endswith("[FP101]")
    page.fill("#yaml", "cluster:\n  gpus: [64\n")
    page.wait_for_selector("#yaml-error:not([hidden])")
    assert "not valid YAML" in page.inner_text("#yaml-error")


def test_dropped_configs_and_logs_get_verdicts(page: Any, tmp_path: Path) -> None:
    page.click("button[data-tab=lint]")
    broken = tmp_path / "leaf01.json"
    sonic = (DATA / "lint" / "sonic_leaf_400g.json").read_text()
    broken.write_text(sonic.replace('"mtu": "9100"', '"mtu": "1500"'))
    page.set_input_files("#file-lint", [str(broken), str(DATA / "lint" / "gpu01_mlnx_qos.txt")])
    page.wait_for_selector("#lint-verdict")
    verdict = page.inner_text("#lint-verdict")
    assert "1 error" in verdict.lower() and "over 2 devices" in verdict
    assert "leaf01 (sonic" in verdict and "gpu01_mlnx_qos (mlnx_qos" in verdict
    findings = page.inner_text("#lint-findings")
    assert "L08" in findings and "Set the host netdev MTU" in findings
    page.screenshot(path=str(tmp_path / "lint.png"), full_page=True)

    page.click("button[data-tab=bench]")
    page.set_input_files("#file-bench", [str(DATA / "measure" / "nccl_2023_multi_roce_mpi.log")])
    page.wait_for_selector("#bench-verdict")
    verdict = page.inner_text("#bench-verdict")
    assert "33 measurements" in verdict and "slow" in verdict.lower()
    assert "of expected" in page.inner_text("#bench-findings")
    assert page.locator(".bench-panel svg polygon").count() >= 1  # the expected band
    assert page.locator(".bench-panel svg circle").count() >= 33
    page.screenshot(path=str(tmp_path / "bench.png"), full_page=True)


def test_a_simulation_shows_progress_and_one_can_be_cancelled(
    page: Any, base_url: str, tmp_path: Path
) -> None:
    page.fill("#f-gpus", "128")
    page.dispatch_event("#f-gpus", "change")
    page.click("button[data-tab=simulate]")
    # the first job runs at the packet level (seconds even with its kernels compiled: a flow
    # job ends in milliseconds once numba is warm, and the second would then run, not wait)
    page.select_option("#s-backend", "packet")
    page.select_option("#s-pattern", "all_to_all")
    page.select_option("#s-size", "16777216")  # the server's packet limit
    page.fill("#s-seeds", "4")
    page.click("#s-start")
    page.wait_for_selector(".job[data-status=running], .job[data-status=done]")
    first = page.get_attribute(".job", "data-job")
    # a second job waits for the one worker; cancel it
    page.select_option("#s-backend", "flow")
    page.fill("#s-seeds", "1")
    page.select_option("#s-size", "268435456")
    page.click("#s-start")
    page.wait_for_function("() => document.querySelectorAll('.job').length === 2")
    second = page.get_attribute(".job", "data-job")
    assert second != first
    page.click(f"button[data-cancel='{second}']")
    page.wait_for_selector(f".job[data-job='{second}'][data-status=cancelled]")
    page.screenshot(path=str(tmp_path / "jobs.png"), full_page=True)
    page.wait_for_selector(f".job[data-job='{first}'][data-status=done]", timeout=180_000)
    page.wait_for_selector("#sim-result")
    assert "completion" in page.inner_text("#sim-result")
    page.screenshot(path=str(tmp_path / "simulation.png"), full_page=True)
    # the jobs and the result survive a reload
    page.reload()
    page.wait_for_selector("#verdict")
    page.click("button[data-tab=simulate]")
    page.wait_for_selector(f".job[data-job='{first}'][data-status=done]")
    page.wait_for_selector(f".job[data-job='{second}'][data-status=cancelled]")
    page.wait_for_selector("#sim-result")


def test_a_sweep_runs_as_a_job_and_draws_its_points(page: Any, tmp_path: Path) -> None:
    page.click("button[data-tab=simulate]")
    page.fill("#w-vary", "cluster.gpus=512,1024,2048")
    page.click("#w-start")
    page.wait_for_selector("#sweep-result", timeout=180_000)
    result = page.locator("#sweep-result")
    assert result.locator("tr").count() == 1 + 3 * 2  # header + points x technologies
    # TCO and step against size, then TCO against step: every point and technology in each
    assert result.locator("svg circle").count() == 3 * 3 * 2
    pareto = page.locator("#sweep-pareto")
    assert pareto.locator("circle").count() == 3 * 2
    # one front per cluster size (a larger cluster is no alternative to a smaller one)
    assert pareto.locator("polyline").count() == 3
    assert "per cluster size" in pareto.inner_text()
    assert page.locator("#sweep-map").count() == 0  # one varied key: no map
    # and the sweep-report's own figures: against size (crossovers dotted) and the Pareto front
    report = page.locator("#sweep-report figure.report-figure")
    assert report.count() == 2
    assert "Cost and step time against cluster.gpus" in report.nth(0).inner_text()
    assert report.nth(0).locator("svg").count() == 1
    page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)


def test_a_sweep_over_two_keys_draws_the_recommendation_map(page: Any, tmp_path: Path) -> None:
    page.click("button[data-tab=simulate]")
    page.fill("#w-vary", "cluster.gpus=256,1024")
    page.fill("#w-vary2", "fabric.oversubscription=1,2,3")
    page.click("#w-start")
    page.wait_for_selector("#sweep-map", timeout=180_000)
    cells = page.locator("#sweep-map rect.cell")
    assert cells.count() == 2 * 3
    # each cell is the technology the table marks as recommended at that point
    rows = page.locator("#sweep-result table tr")
    recommended = []
    for i in range(1, rows.count()):
        cols = rows.nth(i).locator("td")
        if "✔" in cols.nth(6).inner_text():
            recommended.append(cols.nth(2).inner_text())
    shown = [cells.nth(i).get_attribute("data-technology") for i in range(cells.count())]
    names = {"infiniband": "InfiniBand", "roce_v2": "RoCEv2", "roce_v1": "RoCEv1"}
    assert [names[t or ""] for t in shown] == recommended
    page.screenshot(path=str(tmp_path / "sweep-map.png"), full_page=True)


def test_downloads_are_the_report_json_markdown_and_spec(page: Any, tmp_path: Path) -> None:
    saved = {}
    for kind in ("html", "json", "md", "spec"):
        with page.expect_download() as info:
            page.click(f"button[data-download={kind}]")
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        saved[kind] = path.read_text()
    assert "<svg" in saved["html"] and "recommendation" in json.loads(saved["json"])
    assert saved["md"].startswith("# ") and "gpus:" in saved["spec"]


def test_with_a_token_the_page_link_opens_the_app(tmp_path: Path) -> None:
    token = "page-token-0123456789"
    with _serving(token) as url, playwright_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        assert tab.goto(url + "/").status == 401
        tab.goto(f"{url}/?token={token}")
        tab.wait_for_selector("#verdict")  # the page's own requests carried the token's cookie
        assert "token" not in tab.url
        context.close()
