"""Each lint rule against realistic configurations: the clean fabric lints clean, and each planted
fault raises exactly its rule, on the device where it was planted, and nothing else.

The fabric is tests/data/lint/: a SONiC 400G leaf, a Cumulus NVUE spine, an Arista EOS leaf, and
one host (mlnx_qos output and NIC CC settings). A fault is a small edit of one file's text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricplan.lint.checking.linter import LintResult, lint_files
from fabricplan.lint.checking.rule import RULES

DATA = Path(__file__).parent / "data" / "lint"
FILES = {
    "sonic": "sonic_leaf_400g.json",
    "nvue": "nvue_spine.yaml",
    "eos": "eos_leaf.cfg",
    "mlnx_qos": "gpu01_mlnx_qos.txt",
    "nic_cc": "gpu01_nic_cc.txt",
}
DEVICE = {
    "sonic": "leaf01",
    "nvue": "spine01",
    "eos": "leaf02",
    "mlnx_qos": "gpu01_mlnx_qos",
    "nic_cc": "gpu01_nic_cc",
}


def replace_once(old: str, new: str, occurrence: int = 0) -> Callable[[str], str]:
    """Replace ``old`` (found once), or its ``occurrence``-th of two or more (1-based)."""

    def edit(text: str) -> str:
        if not occurrence:
            assert text.count(old) == 1, f"fixture changed: {old!r} found {text.count(old)} times"
            return text.replace(old, new)
        assert text.count(old) >= occurrence, f"fixture changed: {old!r}"
        head, *rest = text.split(old)
        parts = [head]
        for i, part in enumerate(rest, start=1):
            parts.append(new if i == occurrence else old)
            parts.append(part)
        return "".join(parts)

    return edit


def sonic_edit(
    change: Callable[[dict[str, dict[str, dict[str, str]]]], None],
) -> Callable[[str], str]:
    def edit(text: str) -> str:
        data = json.loads(text)
        change(data)
        return json.dumps(data, indent=4)

    return edit


def nvue_insert_qos(block: str) -> Callable[[str], str]:
    """Insert lines under ``set.qos`` (6-space indented keys)."""
    return replace_once(
        "      pfc-watchdog:\n        polling-interval",
        block + "      pfc-watchdog:\n        polling-interval",
    )


def lint_fabric(
    tmp_path: Path, target: str | None = None, edit: Callable[[str], str] | None = None
) -> LintResult:
    paths = []
    for kind, name in FILES.items():
        text = (DATA / name).read_text()
        if kind == target and edit is not None:
            text = edit(text)
        path = tmp_path / name
        path.write_text(text)
        paths.append(path)
    return lint_files(paths)


def _del_watchdog(data: dict[str, dict[str, dict[str, str]]]) -> None:
    del data["PFC_WD"]["Ethernet0"]


def _small_xoff(data: dict[str, dict[str, dict[str, str]]]) -> None:
    data["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"] = "80000"


def _zero_cable(data: dict[str, dict[str, dict[str, str]]]) -> None:
    data["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "0m"


def _cnp_not_strict(data: dict[str, dict[str, dict[str, str]]]) -> None:
    data["SCHEDULER"]["scheduler.2"] = {"type": "DWRR", "weight": "10"}


def _lossy_egress(data: dict[str, dict[str, dict[str, str]]]) -> None:
    for key, value in data["BUFFER_QUEUE"].items():
        if key.endswith("|3"):
            value["profile"] = "q_lossy_profile"


def _trim_only_lossy_queues(data: dict[str, dict[str, dict[str, str]]]) -> None:
    # Trimming on the lossy queues 0-2 and 4-6, but the RoCE data queue 3 still drops.
    data["BUFFER_PROFILE"]["q_lossy_profile"]["packet_discard_action"] = "trim"


PLANTED: list[tuple[str, str, Callable[[str], str]]] = [
    (
        "L01",
        "nvue",
        nvue_insert_qos(
            "      pfc:\n        default-global:\n          switch-priority:\n"
            "            '3': {}\n            '4': {}\n"
        ),
    ),
    (
        "L02",
        "eos",
        replace_once("qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 2"),
    ),
    ("L03", "sonic", sonic_edit(_cnp_not_strict)),
    (
        "L04",
        "nvue",
        nvue_insert_qos(
            "      congestion-control:\n        default-global:\n          traffic-class:\n"
            "            '3':\n              ecn: disable\n"
        ),
    ),
    ("L05", "sonic", sonic_edit(_del_watchdog)),
    ("L06", "sonic", sonic_edit(_small_xoff)),
    ("L07", "sonic", sonic_edit(_zero_cable)),
    ("L08", "nic_cc", replace_once("mtu 9000 qdisc", "mtu 4096 qdisc")),
    ("L09", "eos", replace_once("   qos trust dscp\n", "   qos trust cos\n")),
    (
        "L10",
        "eos",
        replace_once(
            "   description gpu09-eth0\n", "   description gpu09-eth0\n   flowcontrol receive on\n"
        ),
    ),
    (
        "L11",
        "nic_cc",
        replace_once(
            "ROCE_CC_PRIO_MASK_P1                        255",
            "ROCE_CC_PRIO_MASK_P1                        0x40",
        ),
    ),
    (
        "L12",
        "nic_cc",
        replace_once(
            "DCBX_WILLING_P1                             False(0)",
            "DCBX_WILLING_P1                             True(1)",
        ),
    ),
    (
        "L13",
        "eos",
        replace_once(
            "   uc-tx-queue 1\n      no priority\n      bandwidth percent 50",
            "   uc-tx-queue 1\n      no priority\n      bandwidth percent 40",
        ),
    ),
    (
        "L14",
        "nvue",
        nvue_insert_qos(
            "      traffic-pool:\n        roce-lossless:\n          memory-percent: 0\n"
        ),
    ),
    (
        "L15",
        "nvue",
        replace_once(
            "        description: leaf17-32 uplink\n        link:\n"
            "          mtu: 9216\n          speed: 400G",
            "        description: leaf17-32 uplink\n        link:\n"
            "          mtu: 9216\n          speed: 800G",
        ),
    ),
    ("L16", "sonic", sonic_edit(_lossy_egress)),
    (
        "L17",
        "nvue",
        nvue_insert_qos("      pfc:\n        default-global:\n          rx: disable\n"),
    ),
    (
        "L20",
        "nvue",
        replace_once(
            "          pfc-watchdog: {}\n        router:\n          adaptive-routing:\n"
            "            enable: on\n",
            "          pfc-watchdog: {}\n        router:\n          adaptive-routing:\n"
            "            enable: off\n",
            occurrence=2,
        ),
    ),
    ("L23", "sonic", sonic_edit(_trim_only_lossy_queues)),
]


def test_every_rule_has_a_planted_fault() -> None:
    from test_lint_transport import MODEL_PLANTED

    planted = {rule for rule, _, _ in PLANTED} | {rule for rule, _ in MODEL_PLANTED}
    assert sorted(planted) == sorted(RULES)


def test_clean_fabric_has_no_findings(tmp_path: Path) -> None:
    result = lint_fabric(tmp_path)
    assert [f.message for f in result.findings] == []
    assert result.exit_code == 0
    # The intent came from the host, which originates the marking.
    assert result.intent.lossless_priorities == {3}
    assert (result.intent.roce_dscp, result.intent.cnp_dscp) == (106 >> 2, 48)


@pytest.mark.parametrize("kind", sorted(FILES))
def test_each_clean_file_alone_has_no_findings(kind: str) -> None:
    result = lint_files([DATA / FILES[kind]])
    assert [f.message for f in result.findings] == []


@pytest.mark.parametrize(("rule", "target", "edit"), PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_fault_raises_exactly_its_rule(
    tmp_path: Path, rule: str, target: str, edit: Callable[[str], str]
) -> None:
    result = lint_fabric(tmp_path, target, edit)
    assert {f.rule for f in result.findings} == {rule}, [f.message for f in result.findings]
    assert {f.device for f in result.findings} == {DEVICE[target]}
    item = result.findings[0]
    assert item.file.endswith(FILES[target])
    assert item.why == RULES[rule].why and item.fix and item.source
    # Every finding points at a line of the file it names.
    assert item.line is not None and item.line >= 1
    expected_exit = 1 if any(f.severity == "error" for f in result.findings) else 0
    assert result.exit_code == expected_exit


def test_finding_line_points_at_the_planted_setting(tmp_path: Path) -> None:
    edit = replace_once("   qos trust dscp\n", "   qos trust cos\n")
    result = lint_fabric(tmp_path, "eos", edit)
    (item,) = result.findings
    lines = (tmp_path / FILES["eos"]).read_text().splitlines()
    assert lines[item.line - 1].strip() == "qos trust cos"  # type: ignore[operator]


def test_headroom_finding_states_the_formula_value(tmp_path: Path) -> None:
    result = lint_fabric(tmp_path, "sonic", sonic_edit(_small_xoff))
    (item,) = result.findings
    # 400G, 5 m, MTU 9100 on Spectrum-3: ceil_1024(1024 + 70305.3 * 1.625) = 115712 B.
    assert "115712 B" in item.message and item.value == "80000 B"
    assert item.setting.startswith("Ethernet0, Ethernet4, Ethernet8 and 5 more")


def test_nic_cnp_priority_of_another_vendor_is_a_warning(tmp_path: Path) -> None:
    # Broadcom Thor2 sends CNPs on priority 7; the switches put DSCP 48 in priority 6.
    edit = replace_once(
        "CNP_802P_PRIO_P1                            6",
        "CNP_802P_PRIO_P1                            7",
    )
    result = lint_fabric(tmp_path, "nic_cc", edit)
    assert [(f.rule, f.severity) for f in result.findings] == [("L03", "warning")]
    assert result.exit_code == 0


def test_roce_mtu_derivation_names_the_lower_mtu(tmp_path: Path) -> None:
    result = lint_fabric(tmp_path, "nic_cc", replace_once("mtu 9000 qdisc", "mtu 4096 qdisc"))
    (item,) = result.findings
    # 4096 - 96 B of RoCE headers leaves 4000 B: the largest IB MTU that fits is 2048.
    assert "falls to 2048" in item.message


def test_switch_port_below_host_mtu(tmp_path: Path) -> None:
    result = lint_fabric(tmp_path, "eos", lambda t: t.replace("   mtu 9214\n", "   mtu 8000\n"))
    assert {f.rule for f in result.findings} == {"L08"}
    assert "below the host MTU 9000" in result.findings[0].message


def test_given_intent_overrides_inference(tmp_path: Path) -> None:
    from fabricplan.lint.checking.rule import IntentSpec

    result = lint_files(
        [DATA / FILES["nvue"]], intent=IntentSpec(lossless_priorities=frozenset({4}))
    )
    assert {f.rule for f in result.findings} >= {"L01"}


def test_docs_list_every_rule_as_the_registry_says() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "lint.md").read_text()
    for rule in RULES.values():
        row = f"| {rule.id} | {rule.severity} | {rule.title.replace('|', chr(92) + '|')} |"
        assert row in docs, rule.id
        assert rule.why in docs
