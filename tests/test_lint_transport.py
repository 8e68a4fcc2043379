"""The Spectrum-X RoCE settings (L20-L22) and the UEC profiles (L23-L24) on normalized devices.

A clean fabric (two switches, two NICs) has adaptive routing on every fabric port, SuperNICs
that place packets out of order, telemetry CC on both halves, trimming on the data queue and
LLR on every link end; each planted fault is one setting flipped on one device and raises
exactly its rule, there. The file-level faults of L20 (NVUE) and L23 (SONiC) are in
tests/test_lint_rules.py; L24 on a real SONiC file (the LLR design's ``LLR_PORT`` table,
tests/data/lint_llr/sonic_leaf_llr.json) is at the end of this file.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricplan.lint.checking.linter import lint_devices, lint_files
from fabricplan.lint.checking.rule import IntentSpec
from fabricplan.lint.model import DeviceConfig, NicSettings, PortConfig
from fabricplan.lint.reading.config_file import read_device_config

TRANSPORT_RULES = {"L20", "L21", "L22", "L23", "L24"}
INTENT = IntentSpec(lossless_priorities=frozenset({3}))


def _switch(name: str) -> DeviceConfig:
    ports = tuple(
        PortConfig(
            f"swp{i}",
            role="fabric" if i > 2 else "host",
            adaptive_routing=True,
            trimming_queues=frozenset({3}),
            link_level_retry=True,
        )
        for i in range(1, 5)
    )
    return DeviceConfig(name, "switch", "nvue", f"{name}.yaml", ports=ports, telemetry=True)


def _nic(name: str) -> DeviceConfig:
    return DeviceConfig(
        name,
        "nic",
        "nic_cc",
        f"{name}.txt",
        ports=(PortConfig("eth0", link_level_retry=True),),
        nic=NicSettings(out_of_order_placement=True, telemetry_cc=True),
    )


def clean_fabric() -> list[DeviceConfig]:
    return [_switch("leaf1"), _switch("spine1"), _nic("gpu01"), _nic("gpu02")]


def _ports(device: DeviceConfig, **changes: object) -> DeviceConfig:
    """``device`` with its fabric ports (a NIC: its port) changed."""
    ports = tuple(
        dataclasses.replace(p, **changes) if p.role != "host" else p  # type: ignore[arg-type]
        for p in device.ports
    )
    return dataclasses.replace(device, ports=ports)


def _nic_settings(device: DeviceConfig, **changes: object) -> DeviceConfig:
    assert device.nic is not None
    return dataclasses.replace(device, nic=dataclasses.replace(device.nic, **changes))  # type: ignore[arg-type]


Fault = Callable[[list[DeviceConfig]], list[DeviceConfig]]


def _on(index: int, change: Callable[[DeviceConfig], DeviceConfig]) -> Fault:
    def plant(devices: list[DeviceConfig]) -> list[DeviceConfig]:
        out = list(devices)
        out[index] = change(out[index])
        return out

    return plant


MODEL_PLANTED: list[tuple[str, Fault]] = [
    ("L20", _on(1, lambda d: _ports(d, adaptive_routing=False))),
    ("L21", _on(2, lambda d: _nic_settings(d, out_of_order_placement=False))),
    ("L22", _on(3, lambda d: _nic_settings(d, telemetry_cc=False))),
    ("L22", _on(0, lambda d: dataclasses.replace(d, telemetry=False))),
    ("L23", _on(1, lambda d: _ports(d, trimming_queues=frozenset({1})))),
    ("L24", _on(3, lambda d: _ports(d, link_level_retry=False))),
]
"""(rule, fault): each flips one setting on one device of :func:`clean_fabric`."""
FAULTY_DEVICE = {0: "leaf1", 1: "spine1", 2: "gpu01", 3: "gpu02"}


def _transport_findings(devices: list[DeviceConfig]) -> list[tuple[str, str]]:
    result = lint_devices(devices, INTENT)
    return [(f.rule, f.device) for f in result.findings if f.rule in TRANSPORT_RULES]


def test_the_clean_fabric_passes_the_transport_rules() -> None:
    assert _transport_findings(clean_fabric()) == []


@pytest.mark.parametrize(
    ("rule", "fault"), MODEL_PLANTED, ids=[f"{r}-{i}" for i, (r, _) in enumerate(MODEL_PLANTED)]
)
def test_each_planted_setting_raises_exactly_its_rule(rule: str, fault: Fault) -> None:
    clean = clean_fabric()
    planted = fault(clean)
    changed = [i for i, (a, b) in enumerate(zip(clean, planted, strict=True)) if a != b]
    assert len(changed) == 1
    assert _transport_findings(planted) == [(rule, FAULTY_DEVICE[changed[0]])]


def test_a_fabric_without_the_mechanisms_raises_none_of_them() -> None:
    # ECMP, no telemetry, no trimming, no LLR anywhere: nothing is relied on, nothing to match.
    plain = [
        DeviceConfig(
            "leaf1",
            "switch",
            "sonic",
            "leaf1.json",
            ports=(PortConfig("Ethernet0", adaptive_routing=False, trimming_queues=frozenset()),),
            telemetry=False,
        ),
        DeviceConfig(
            "gpu01",
            "nic",
            "nic_cc",
            "gpu01.txt",
            ports=(PortConfig("eth0", link_level_retry=False),),
            nic=NicSettings(out_of_order_placement=False, telemetry_cc=False),
        ),
    ]
    assert _transport_findings(plain) == []


def test_host_ports_need_no_adaptive_routing() -> None:
    devices = clean_fabric()
    leaf = devices[0]
    devices[0] = dataclasses.replace(
        leaf,
        ports=tuple(
            dataclasses.replace(p, adaptive_routing=False) if p.role == "host" else p
            for p in leaf.ports
        ),
    )
    assert _transport_findings(devices) == []


def test_unstated_settings_are_skipped_not_guessed() -> None:
    unstated = DeviceConfig("gpu01", "nic", "nic_cc", "gpu01.txt", ports=(PortConfig("eth0"),))
    devices = [_switch("leaf1"), unstated]
    assert _transport_findings(devices) == []


# --- L24 on a SONiC config_db.json --------------------------------------------------------------

LLR_FILE = Path(__file__).parent / "data" / "lint_llr" / "sonic_leaf_llr.json"
"""A UEC leaf: 4 x 800G ports, LLR on in both directions on each (``LLR_PORT``, static mode)."""


def _llr_file(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(LLR_FILE.read_text())
    change(data)
    path = tmp_path / LLR_FILE.name
    path.write_text(json.dumps(data, indent=4))
    return path


def _l24(path: Path) -> list[tuple[str, str, str]]:
    findings = lint_files([path], intent=INTENT).findings
    return [(f.device, f.setting, f.value) for f in findings if f.rule == "L24"]


def test_the_sonic_llr_tables_give_each_ports_link_level_retry(tmp_path: Path) -> None:
    device = read_device_config(LLR_FILE)
    assert [(p.name, p.link_level_retry) for p in device.ports] == [
        (f"Ethernet{n}", True) for n in (0, 8, 16, 24)
    ]
    assert _l24(LLR_FILE) == []

    def one_way(data: dict[str, Any]) -> None:
        data["LLR_PORT"]["Ethernet16"]["llr_remote"] = "disabled"

    # Receive-only LLR on one uplink: that link end does not retry what it sends, so it
    # disagrees with the others (L24, on that port).
    assert _l24(_llr_file(tmp_path, one_way)) == [("uleaf01", "Ethernet16 LLR", "off")]

    def unlisted(data: dict[str, Any]) -> None:
        del data["LLR_PORT"]["Ethernet24"]

    # A port without an LLR_PORT entry has LLR disabled (the design's default).
    assert _l24(_llr_file(tmp_path, unlisted)) == [("uleaf01", "Ethernet24 LLR", "off")]

    def dynamic(data: dict[str, Any]) -> None:
        data["LLR_CONFIG"]["GLOBAL"]["mode"] = "dynamic"
        data["LLR_PORT"]["Ethernet24"]["llr_local"] = "disabled"

    # In dynamic mode LLDP negotiates LLR: the file says nothing per port, nothing to compare.
    path = _llr_file(tmp_path, dynamic)
    assert {p.link_level_retry for p in read_device_config(path).ports} == {None}
    assert _l24(path) == []
