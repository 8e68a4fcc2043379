"""The packet backend behind the seam, and ``fabricplan simulate --backend packet``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricplan.backends import backend_names, get_backend
from fabricplan.cli.app import create_app
from fabricplan.errors import ModelError
from fabricplan.model.results import PerfRequest
from fabricplan.sim.packet.performance import packet_network_for
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric

SPEC = "cluster:\n  gpus: 32\nfabric:\n  technologies: [infiniband, roce_v2]\n"


app = create_app()


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(SPEC)
    return path


def test_packet_backend_answers_the_seam_and_respects_the_nic_rate() -> None:
    assert "packet" in backend_names()
    valid = parse_spec({"cluster": {"gpus": 32}})
    request = PerfRequest(
        collectives=("all_reduce",), sizes_bytes=(2**10, 2**22), p2p=False, step=False
    )
    for tech in ("infiniband", "roce_v2"):
        result = get_backend("packet").perform(valid, design_fabric(valid, tech), request)
        assert result.backend == "packet" and result.technology == tech
        assert [p.size_bytes for p in result.collectives] == [2**10, 2**22]
        big = result.collectives[1]
        # A ring all_reduce's busbw cannot beat the 8 NICs' payload rate (400 Gb/s each).
        tech_spec = valid.technologies[tech]
        share = tech_spec.mtu_bytes / (tech_spec.mtu_bytes + tech_spec.header_bytes.value)
        assert 0 < big.busbw_GBps <= 8 * 400 / 8 * share


def test_packet_backend_refuses_fabrics_too_large_to_simulate() -> None:
    valid = parse_spec({"cluster": {"gpus": 8192}, "fabric": {"technologies": ["roce_v2"]}})
    with pytest.raises(ModelError, match="FP544"):
        packet_network_for(valid, design_fabric(valid, "roce_v2"))


def test_simulate_packet_json_has_the_packet_extras(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--backend",
            "packet",
            "--pattern",
            "incast",
            "--size",
            "256K",
            "--senders",
            "3",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["backend"] == "packet"
    for record in doc["results"]:
        for key in ("events", "pauses", "drops", "retransmits", "queue_depth", "stalled_ports"):
            assert key in record
        assert record["backend"] == "packet"
        assert record["status"] == "done"
        assert record["events"] > 0
        assert record["flows"] == 3  # three senders to one receiver


def test_simulate_packet_takes_hpcc_and_prints_a_table(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--backend",
            "packet",
            "--pattern",
            "permutation",
            "--size",
            "1M",
            "--cc",
            "hpcc",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "congestion control hpcc" in out.output
    assert "events" in out.output and "retransmits" in out.output


def test_traffic_too_large_for_packets_is_a_clear_error(runner: CliRunner, spec: Path) -> None:
    out = runner.invoke(
        app,
        [
            "simulate",
            str(spec),
            "--backend",
            "packet",
            "--pattern",
            "permutation",
            "--size",
            "100G",
        ],
    )
    assert out.exit_code == 2
    assert "FP546" in out.output
