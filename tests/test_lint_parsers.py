"""Parsers: what each reads from its format, one-line input errors with the file and line or key,
and property-based fuzzing (any input gives a finding list or a clear input error)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricplan.errors import InputFileError
from fabricplan.lint.checking.linter import lint_devices
from fabricplan.lint.reading.config_file import parse_device_config, read_device_config
from fabricplan.lint.reading.eos import parse_eos
from fabricplan.lint.reading.mlnx_qos import parse_mlnx_qos, parse_nic_cc
from fabricplan.lint.reading.nvue import parse_nvue
from fabricplan.lint.reading.sonic import parse_sonic

DATA = Path(__file__).parent / "data" / "lint"
FUZZ = settings(
    # A longer hunt: FABRICPLAN_FUZZ_EXAMPLES=5000 pytest tests/test_lint_parsers.py -k fuzz
    max_examples=int(os.environ.get("FABRICPLAN_FUZZ_EXAMPLES", "120")),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow],
)


def error_of(call: object, *args: str) -> InputFileError:
    with pytest.raises(InputFileError) as info:
        call(*args)  # type: ignore[operator]
    return info.value


# --- SONiC ---------------------------------------------------------------------------------


def test_sonic_fixture_reads_every_table() -> None:
    device = read_device_config(DATA / "sonic_leaf_400g.json")
    assert (device.name, device.kind, device.format, len(device.ports)) == (
        "leaf01",
        "switch",
        "sonic",
        16,
    )
    host, uplink = device.ports[0], device.ports[8]
    assert (host.name, host.role, host.cable_length_m, uplink.role, uplink.cable_length_m) == (
        "Ethernet0",
        "host",
        5.0,
        "fabric",
        40.0,
    )
    assert host.dscp_to_priority is not None and host.dscp_to_priority[26] == 3
    assert host.ingress_buffers[3].xoff_bytes == 115712
    assert uplink.ingress_buffers[3].xoff_bytes == 143360
    assert host.ecn[3].min_threshold_bytes == 1048576 and host.scheduler[6].kind == "strict"
    assert host.watchdog is not None and host.watchdog.poll_ms == 200
    assert host.egress_lossless_queues == frozenset({3})
    assert device.lossless_mtu_bytes == 1024


def test_sonic_references_with_table_prefix() -> None:
    text = json.dumps(
        {
            "PORT_QOS_MAP": {
                "Ethernet0": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3,4"}
            },
            "DSCP_TO_TC_MAP": {"AZURE": {"3": "3", "4": "4"}},
        }
    )
    port = parse_sonic(text, "t.json").ports[0]
    assert port.dscp_to_priority == {3: 3, 4: 4} and port.pfc_set == {3, 4}


@pytest.mark.parametrize(
    ("document", "code", "where"),
    [
        ('{"PORT": [1]}', "FP405", "t.json: PORT"),
        ("[]", "FP405", "t.json"),
        ('{"FOO": {}}', "FP408", "t.json"),
        (
            '{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,9"}}}',
            "FP409",
            "PORT_QOS_MAP|Ethernet0.pfc_enable",
        ),
        (
            '{"BUFFER_PG": {"Ethernet0|3": {"profile": "nope"}}, "PORT": {"Ethernet0": {}}}',
            "FP405",
            "BUFFER_PG|Ethernet0|3.profile",
        ),
        ('{"PORT": {"Ethernet0": {"speed": "fast"}}}', "FP406", "PORT|Ethernet0.speed"),
    ],
)
def test_sonic_input_errors(document: str, code: str, where: str) -> None:
    error = error_of(parse_sonic, document, "t.json")
    assert error.code == code and where in str(error) and "\n" not in str(error)


def test_sonic_invalid_json_names_line_and_column() -> None:
    error = error_of(parse_sonic, '{\n  "PORT": {\n    "Ethernet0": }\n}', "leaf.json")
    assert error.code == "FP403" and str(error).startswith("leaf.json:3:")


# --- NVUE ----------------------------------------------------------------------------------


def test_nvue_fixture_expands_roce_and_ranges() -> None:
    device = read_device_config(DATA / "nvue_spine.yaml")
    assert device.name == "spine01" and len(device.ports) == 32
    port = device.ports[31]
    assert port.name == "swp32" and port.pfc_set == {3} and port.trust == "both"
    assert port.ecn[3].max_threshold_bytes == 1_500_000 and port.cable_length_m == 100
    assert port.watchdog is not None and port.watchdog.detection_ms == 100 * 3
    assert port.adaptive_routing is True


def test_nvue_lossy_mode_has_no_pfc() -> None:
    text = "- set:\n    qos:\n      roce:\n        mode: lossy\n"
    port = parse_nvue(text, "t.yaml").ports[0]
    assert port.pfc_priorities is None and port.ecn[3].ecn_enabled


def test_nvue_port_profile_overrides_global() -> None:
    text = yaml.safe_dump(
        [
            {
                "set": {
                    "qos": {
                        "roce": {"enable": "on"},
                        "pfc": {"short": {"switch-priority": {"3": {}}, "cable-length": 5}},
                    },
                    "interface": {
                        "swp1,3": {"type": "swp", "qos": {"pfc": {"profile": "short"}}},
                        "swp2": {"type": "swp"},
                    },
                }
            }
        ]
    )
    ports = {p.name: p for p in parse_nvue(text, "t.yaml").ports}
    assert sorted(ports) == ["swp1", "swp2", "swp3"]
    assert (ports["swp1"].cable_length_m, ports["swp2"].cable_length_m) == (5, 100)


@pytest.mark.parametrize(
    ("document", "code", "where"),
    [
        ("- set:\n  qos: [\n", "FP404", "t.yaml:"),
        ("just text", "FP407", "t.yaml"),
        (
            "- set:\n    qos:\n      mapping:\n        default-global:\n          trust: l9\n",
            "FP409",
            "qos.mapping.default-global.trust",
        ),
        (
            "- set:\n    interface:\n      swp1:\n        qos:\n          pfc:\n"
            "            profile: nope\n",
            "FP405",
            "interface.swp1.qos.pfc.profile",
        ),
    ],
)
def test_nvue_input_errors(document: str, code: str, where: str) -> None:
    error = error_of(parse_nvue, document, "t.yaml")
    assert error.code == code and where in str(error)


# --- EOS -----------------------------------------------------------------------------------


def test_eos_fixture_applies_service_profile_and_global_maps() -> None:
    device = read_device_config(DATA / "eos_leaf.cfg")
    assert [p.name for p in device.ports] == [
        "Ethernet1/1",
        "Ethernet1/5",
        "Ethernet2/1",
        "Ethernet2/5",
    ]
    port = device.ports[0]
    # 150 kbytes = 150 * 1024 B in the EOS CLI's units.
    assert port.ecn[3].min_threshold_bytes == 150 * 1024
    assert port.scheduler[6].kind == "strict" and port.scheduler[3].weight == 50
    assert port.watchdog is not None and (port.watchdog.detection_ms, port.watchdog.poll_ms) == (
        200,
        100,
    )
    # EOS default map: DSCP 0-7 -> TC1.
    assert port.dscp_to_priority is not None and port.dscp_to_priority[0] == 1


def test_eos_switched_port_trusts_cos_by_default() -> None:
    device = parse_eos("interface Ethernet1-2\n   priority-flow-control on\n", "t.cfg")
    assert [(p.name, p.trust) for p in device.ports] == [("Ethernet1", "pcp"), ("Ethernet2", "pcp")]


def test_eos_ecn_in_segments_keeps_raw_values() -> None:
    text = (
        "interface Ethernet1\n   tx-queue 3\n      random-detect ecn minimum-threshold 2000"
        " segments maximum-threshold 10000 segments max-mark-probability 20 weight 0\n"
    )
    profile = parse_eos(text, "t.cfg").ports[0].ecn[3]
    assert profile.min_threshold_bytes is None and profile.min_threshold_raw == 2000
    assert profile.threshold_unit == "segments"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("random-detect ecn minimum-threshold 1 furlongs maximum-threshold 2 furlongs", "FP409"),
        ("random-detect ecn minimum-threshold", "FP406"),
    ],
)
def test_eos_input_errors_name_the_line(line: str, code: str) -> None:
    text = f"hostname x\ninterface Ethernet1\n   tx-queue 3\n      {line}\n"
    error = error_of(parse_eos, text, "leaf.cfg")
    assert error.code == code and str(error).startswith("leaf.cfg:4:")


def test_eos_priority_out_of_range() -> None:
    error = error_of(
        parse_eos, "interface Ethernet1\n   priority-flow-control priority 9 no-drop\n", "leaf.cfg"
    )
    assert error.code == "FP409" and str(error).startswith("leaf.cfg:2:")


# --- host side -----------------------------------------------------------------------------


def test_mlnx_qos_fixture() -> None:
    device = read_device_config(DATA / "gpu01_mlnx_qos.txt")
    port, nic = device.ports[0], device.nic
    assert device.kind == "nic" and port.name == "eth0"
    assert port.pfc_set == {3} and port.cable_length_m == 3 and port.mtu_bytes == 9000
    assert port.priority_to_queue is not None and port.priority_to_queue[3] == 3
    assert nic is not None and nic.buffer_sizes_bytes == (20016, 156624, 0, 0, 0, 0, 0, 0)
    assert nic.prio2buffer == (0, 0, 0, 1, 0, 0, 0, 0)


def test_nic_cc_fixture() -> None:
    nic = read_device_config(DATA / "gpu01_nic_cc.txt").nic
    assert nic is not None
    assert (nic.vendor, nic.cnp_dscp, nic.cnp_priority, nic.cc_algorithm) == (
        "nvidia",
        48,
        6,
        "ecn",
    )
    assert nic.cc_priorities == frozenset(range(8)) == nic.cc_rp_enabled
    # ToS 106 = DSCP 26 << 2 | ECT(0).
    assert nic.roce_dscp == 26 and nic.roce_mtu_bytes == 4096 and nic.dcbx_willing is False


def test_mlxconfig_extended_columns_read_current() -> None:
    text = "*        ROCE_CC_PRIO_MASK_P1        255          8          8\n"
    nic = parse_nic_cc(text, "t.txt").nic
    assert nic is not None and nic.cc_priorities == frozenset({3})


@pytest.mark.parametrize(
    ("text", "code", "prefix"),
    [
        (
            "PFC configuration:\n  priority 0 1 2 3 4 5 6 7\n  enabled 0 0 0 2 0 0 0 0\n",
            "FP406",
            "h.txt:3:",
        ),
        ("NCCL_IB_TC=300\n", "FP409", "h.txt:1:"),
        ("ROCE_CC_PRIO_MASK_P1 lots\n", "FP406", "h.txt:1:"),
        ("hello\n", "FP408", "h.txt"),
    ],
)
def test_host_input_errors(text: str, code: str, prefix: str) -> None:
    error = error_of(parse_mlnx_qos, text, "h.txt")
    assert error.code == code and str(error).startswith(prefix)


# --- detection and reading -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("sonic_leaf_400g.json", "sonic"),
        ("nvue_spine.yaml", "nvue"),
        ("eos_leaf.cfg", "eos"),
        ("gpu01_mlnx_qos.txt", "mlnx_qos"),
        ("gpu01_nic_cc.txt", "nic_cc"),
    ],
)
def test_auto_detects_every_fixture(name: str, fmt: str) -> None:
    assert read_device_config(DATA / name).format == fmt


def test_detection_and_read_errors(tmp_path: Path) -> None:
    assert error_of(parse_device_config, "what is this", "x.txt").code == "FP402"
    assert error_of(parse_device_config, "x", "x.txt", "junos").code == "FP410"
    assert error_of(parse_device_config, "  \n", "x.txt").code == "FP408"
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01")
    assert error_of(read_device_config, str(binary)).code == "FP401"
    latin = tmp_path / "l.txt"
    latin.write_bytes(b"hostname caf\xe9\n")
    assert error_of(read_device_config, str(latin)).code == "FP401"
    assert error_of(read_device_config, str(tmp_path / "missing.json")).code == "FP401"


# --- fuzzing: any input is a device (that lints) or an InputFileError ---------------------------


def _survives(parse: object, text: str) -> None:
    try:
        device = parse(text, "fuzz")  # type: ignore[operator]
    except InputFileError as error:
        assert error.code.startswith("FP4") and "\n" not in str(error)
        return
    result = lint_devices([device])
    assert all(f.rule.startswith("L") for f in result.findings)


SONIC_KEYS = st.sampled_from(
    [
        "PORT",
        "PORT_QOS_MAP",
        "DSCP_TO_TC_MAP",
        "QUEUE",
        "SCHEDULER",
        "WRED_PROFILE",
        "BUFFER_PG",
        "BUFFER_PROFILE",
        "BUFFER_POOL",
        "BUFFER_QUEUE",
        "CABLE_LENGTH",
        "PFC_WD",
        "Ethernet0",
        "Ethernet0|3",
        "Ethernet0,Ethernet4|0-2",
        "AZURE",
        "global",
        "pfc_enable",
        "speed",
        "mtu",
        "dscp_to_tc_map",
        "profile",
        "xoff",
        "size",
        "pool",
        "scheduler",
        "wred_profile",
        "type",
        "weight",
        "ecn",
        "green_min_threshold",
        "detection_time",
        "3",
        "26",
        "NULL",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**7),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "3",
            "3,4",
            "0-7",
            "9100",
            "400000",
            "5m",
            "AZURE",
            "NULL",
            "ecn_all",
            "STRICT",
            "DWRR",
            "[BUFFER_PROFILE|x]",
            "",
            "x",
        ]
    ),
    st.text(max_size=8),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.dictionaries(SONIC_KEYS, inner, max_size=4) | st.lists(inner, max_size=3),
    max_leaves=25,
)


@FUZZ
@given(st.dictionaries(SONIC_KEYS, JSON_VALUES, max_size=6))
def test_fuzz_sonic_structures(document: dict[str, object]) -> None:
    _survives(parse_sonic, json.dumps(document))


@pytest.mark.parametrize("parse", [parse_sonic, parse_nvue])
@FUZZ
@given(st.text(max_size=200))
def test_fuzz_text(parse: object, text: str) -> None:
    _survives(parse, text)


NVUE_KEYS = st.sampled_from(
    [
        "set",
        "header",
        "qos",
        "roce",
        "enable",
        "mode",
        "pfc",
        "default-global",
        "switch-priority",
        "cable-length",
        "rx",
        "tx",
        "congestion-control",
        "traffic-class",
        "min-threshold",
        "ecn",
        "mapping",
        "trust",
        "dscp",
        "egress-scheduler",
        "bw-percent",
        "interface",
        "swp1-4",
        "swp1",
        "link",
        "mtu",
        "speed",
        "type",
        "profile",
        "pfc-watchdog",
        "router",
        "adaptive-routing",
        "traffic-pool",
        "memory-percent",
        "3",
        "26",
    ]
)
NVUE_VALUES = st.recursive(
    SCALARS | st.sampled_from(["on", "off", "lossless", "lossy", "l3", "swp", "400G", "dwrr"]),
    lambda inner: st.dictionaries(NVUE_KEYS, inner, max_size=4) | st.lists(inner, max_size=3),
    max_leaves=25,
)


@FUZZ
@given(NVUE_VALUES)
def test_fuzz_nvue_structures(document: object) -> None:
    _survives(parse_nvue, yaml.safe_dump([{"set": document}]))


TOKENS = st.sampled_from(
    [
        "3",
        "26",
        "48",
        "9",
        "-1",
        "x",
        "0.2",
        "kbytes",
        "segments",
        "bytes",
        "no-drop",
        "on",
        "off",
        "dscp",
        "cos",
        "Ethernet1",
        "Ethernet1/1-4",
        "strict",
        "percent",
        "to",
        "traffic-class",
    ]
)
EOS_LINES = st.one_of(
    st.sampled_from(
        [
            "hostname leaf",
            "interface Ethernet1",
            "interface Ethernet1/1-2",
            "qos profile P",
            "   service-profile P",
            "   priority-flow-control on",
            "   no switchport",
            "!",
            "   uc-tx-queue 3",
            "   tx-queue 6",
            "      priority strict",
            "   mtu 9214",
            "priority-flow-control pause watchdog default timeout 0.2",
            "   flowcontrol receive on",
            "   dcbx mode ieee",
            "   no priority-flow-control pause watchdog",
        ]
    ),
    st.builds(lambda a, b: f"qos map dscp {a} to traffic-class {b}", TOKENS, TOKENS),
    st.builds(lambda a: f"   priority-flow-control priority {a} no-drop", TOKENS),
    st.builds(lambda a, b: f"   qos trust {a} {b}", TOKENS, TOKENS),
    st.builds(
        lambda a, b, c: (
            f"      random-detect ecn minimum-threshold {a} {b} "
            f"maximum-threshold {a} {c} max-mark-probability {a}"
        ),
        TOKENS,
        TOKENS,
        TOKENS,
    ),
    st.builds(lambda a: f"      bandwidth percent {a}", TOKENS),
    st.text(max_size=30),
)


@FUZZ
@given(st.lists(EOS_LINES, max_size=25))
def test_fuzz_eos(lines: list[str]) -> None:
    _survives(parse_eos, "\n".join(lines))


HOST_LINES = st.one_of(
    st.sampled_from(
        [
            "PFC configuration:",
            "dscp2prio mapping:",
            "DCBX mode: OS controlled",
            "Priority trust state: dscp",
            "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%",
            "\t priority:  3",
            "Configurations:",
            "RX: on",
            "Speed: 400000Mb/s",
        ]
    ),
    st.builds(lambda a: f"\tpriority    {a}", st.text("0123456789 ", max_size=20)),
    st.builds(lambda a: f"\tenabled     {a}", st.text("0123 ", max_size=20)),
    st.builds(lambda a, b: f"\tprio:{a} dscp:{b}", TOKENS, st.text("0123456789,", max_size=20)),
    st.builds(lambda a: f"Cable len: {a}", TOKENS),
    st.builds(lambda a: f"Receive buffer size (bytes): {a}", st.text("0123456789,", max_size=20)),
    st.builds(
        lambda k, v: f"        {k}_P1        {v}",
        st.sampled_from(
            ["ROCE_CC_PRIO_MASK", "CNP_DSCP", "CNP_802P_PRIO", "DCBX_WILLING", "ROCE_CC_ALGORITHM"]
        ),
        TOKENS | st.sampled_from(["0xff", "True(1)", "ECN(0)"]),
    ),
    st.builds(lambda p, v: f"/sys/class/net/eth0/ecn/roce_rp/enable/{p}:{v}", TOKENS, TOKENS),
    st.builds(lambda v: f"NCCL_IB_TC={v}", TOKENS),
    st.builds(lambda v: f"2: eth0: <UP> mtu {v} qdisc", TOKENS),
    st.text(max_size=30),
)


@pytest.mark.parametrize("parse", [parse_mlnx_qos, parse_nic_cc])
@FUZZ
@given(st.lists(HOST_LINES, max_size=25))
def test_fuzz_host_lines(parse: object, lines: list[str]) -> None:
    _survives(parse, "\n".join(lines))


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_auto_detection(text: str) -> None:
    try:
        device = parse_device_config(text, "fuzz")
    except InputFileError as error:
        assert error.code.startswith("FP4")
        return
    lint_devices([device])
