"""``fabricplan sweep --ray ADDRESS`` joining a real, running Ray cluster.

The cluster is a head started by ``ray start --head`` (3 CPUs, no dashboard) in private user,
network and PID namespaces (tests/ray_head.py): its only interface is loopback, and whatever is
left running when the script ends is killed with its PID namespace. The sweep is the command line
itself, run in a second process that joins the head by its address, as a driver outside the
cluster would. One machine cannot show a cluster of several.

The sweep joins twice: by the head's GCS address (``127.0.0.1:PORT``) and through Ray Client
(``ray://127.0.0.1:10001``). Slow (1-2 minutes on a 2-core machine: Ray's head start and two
drivers), hence ``-m "not slow"`` leaves it out; skipped where unprivileged user namespaces are not
allowed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

import ray_head
from fabricplan.cli.app import create_app

pytest.importorskip("ray")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not ray_head.namespaces_work(), reason="no unprivileged user namespaces (unshare)"
    ),
]

SPEC = {"cluster": {"gpus": 1024}, "fabric": {"technologies": ["infiniband", "roce_v2"]}}
VARY = ["--vary", "cluster.gpus=512..2048x2", "--vary", "fabric.oversubscription=1,2"]


def _processes_naming(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = entry.joinpath("cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in command:
                found.append(command)
    return found


def test_joining_a_running_cluster_writes_what_a_local_run_writes(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    joined, local, work = tmp_path / "joined.parquet", tmp_path / "local.parquet", tmp_path / "w"
    client = tmp_path / "client.parquet"
    sweep = [str(spec), *VARY]
    command = [sys.executable, "-m", "fabricplan.cli.app", "sweep", *sweep]
    # by the head's GCS address, then through Ray Client (the head's client server, port 10001)
    script = " && ".join(
        shlex.join([*command, "-o", str(out), "--ray", address])
        for out, address in ((joined, "{address}"), (client, "ray://127.0.0.1:10001"))
    )
    done = subprocess.run(
        [sys.executable, ray_head.__file__, str(work), "--", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ),
    )
    report = json.loads((work / "report.json").read_text())
    shown = f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}\n{report.get('stderr', '')}"
    assert report["head_rc"] == 0, report["head_output"]
    assert report["command_rc"] == 0, shown
    # 3 CPUs: the head's, not this machine's 2 cores (the driver joined it, started nothing).
    for address in (report["address"], "ray://127.0.0.1:10001"):
        cluster = f"the Ray cluster at {address} ({ray_head.HEAD_CPUS} CPUs)"
        ran = f"12 rows; 6 points, 6 run now on {cluster}, 0 already done, 0 failed"
        assert ran in report["stdout"], shown

    # It was a real head, reached by its address, and everything it opened was loopback.
    port = report["address"].rsplit(":", 1)[1]
    assert report["interfaces"] == ["lo"]
    assert any(address.endswith(f":{port}") for address in report["listening"]), report
    assert len(report["listening"]) > 3  # the GCS, the raylet, the object manager, ...
    assert all(ray_head.is_loopback(address) for address in report["listening"]), report
    # Nothing was left running: not in the namespace after the head's group was killed, and
    # nothing naming this test's folder on the machine once the namespace ended.
    assert report["left_running"] == []
    assert _processes_naming(str(tmp_path)) == []

    result = CliRunner().invoke(create_app(), ["sweep", *sweep, "-o", str(local), "--workers", "1"])
    assert result.exit_code == 0, result.output
    expected = pq.read_table(local)
    assert pq.read_table(joined).equals(expected, check_metadata=True)
    assert pq.read_table(client).equals(expected, check_metadata=True)
