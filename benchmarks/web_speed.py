"""Requests per second of ``POST /api/compare`` (analytic) at 1 and 8 concurrent clients.

The server is ``uvicorn`` in a subprocess on 127.0.0.1 (one worker process, the app's default
settings); each client is a thread with its own keep-alive connection sending the same 2,048-GPU
spec. Every run is a bounded number of requests; the table gives requests per second over the run
and the median and 95th-percentile latency. docs/performance.md records it.

    .venv/bin/python benchmarks/web_speed.py
"""

from __future__ import annotations

import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

CONCURRENCY = (1, 8)
REQUESTS_PER_CLIENT = {1: 40, 8: 10}
"""Bounded runs: 40 requests for one client, 80 in all for eight."""
WARMUP_REQUESTS = 3
SPEC = {
    "name": "bench-web",
    "cluster": {"gpus": 2048, "gpus_per_node": 8, "nics_per_node": 8, "nic_speed_gbps": 400},
    "fabric": {"technologies": ["infiniband", "roce_v2"], "topology": "rail_optimized"},
}
STARTUP_S = 60.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(port: int) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/api/jobs")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


def _client(port: int, count: int, body: bytes, latencies: list[float]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"content-type": "application/json"}
    for _ in range(count):
        start = time.perf_counter()
        connection.request("POST", "/api/compare", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"compare answered {response.status}")
        latencies.append(time.perf_counter() - start)
    connection.close()


def run(port: int, clients: int, per_client: int) -> tuple[float, float, float]:
    """(requests/s, median latency s, p95 latency s) for ``clients`` threads."""
    body = json.dumps({"spec": SPEC}).encode()
    latencies: list[float] = []
    threads = [
        threading.Thread(target=_client, args=(port, per_client, body, latencies))
        for _ in range(clients)
    ]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return len(latencies) / wall, statistics.median(ordered), p95


def main() -> None:
    port = _free_port()
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "fabricplan.web.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        _wait_ready(port)
        run(port, 1, WARMUP_REQUESTS)
        machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
        print(
            f"machine: {machine}, Python {platform.python_version()}; load {os.getloadavg()[0]:.1f}"
        )
        print(f"{'clients':>8} {'requests':>9} {'req/s':>7} {'median (ms)':>12} {'p95 (ms)':>9}")
        for clients in CONCURRENCY:
            per_client = REQUESTS_PER_CLIENT[clients]
            rate, median, p95 = run(port, clients, per_client)
            print(
                f"{clients:>8} {clients * per_client:>9} {rate:>7.1f} {1e3 * median:>12.0f}"
                f" {1e3 * p95:>9.0f}"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
