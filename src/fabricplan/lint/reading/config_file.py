"""Read one configuration file: detect its format and hand it to the right parser.

Detection (``device_type="auto"``) looks at the text only: a JSON object is SONiC config_db; a
YAML document with ``header:``/``set:`` (or top-level ``qos:``/``interface:``) is NVUE; text with
``PFC configuration:`` or ``Priority trust state:`` is mlnx_qos output; ``interface Ethernet...``,
``hostname``, ``qos map``/``qos profile`` or ``priority-flow-control`` lines are EOS; mlxconfig,
sysfs ECN or RoCE traffic-class lines are NIC CC settings.

>>> detect_format('{"PORT": {}}', "x")
'sonic'
>>> detect_format("- header:\\n    model: SN5600\\n- set:\\n    qos: {}\\n", "x")
'nvue'
>>> detect_format("ROCE_CC_PRIO_MASK_P1  255\\n", "x")
'nic_cc'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal, get_args

from fabricplan.errors import InputFileError
from fabricplan.input_file import FileKind, read_bytes
from fabricplan.lint.model import DeviceConfig, DeviceFormat
from fabricplan.lint.reading.eos import parse_eos
from fabricplan.lint.reading.mlnx_qos import parse_mlnx_qos, parse_nic_cc
from fabricplan.lint.reading.nvue import parse_nvue
from fabricplan.lint.reading.sonic import parse_sonic
from fabricplan.lint.value import input_error

DeviceType = Literal["auto", "sonic", "nvue", "eos", "mlnx_qos", "nic_cc"]
DEVICE_TYPES: tuple[str, ...] = get_args(DeviceType)

PARSERS: dict[DeviceFormat, Callable[[str, str], DeviceConfig]] = {
    "sonic": parse_sonic,
    "nvue": parse_nvue,
    "eos": parse_eos,
    "mlnx_qos": parse_mlnx_qos,
    "nic_cc": parse_nic_cc,
}

MAX_FILE_BYTES = 64 * 2**20
CONFIG_FILE = FileKind(
    "configuration file",
    InputFileError,
    "FP401",
    max_bytes=MAX_FILE_BYTES,
    fix="check the path and permissions",
)
"""A switch or NIC configuration: a regular file of at most 64 MiB."""
"""Largest configuration file read (a 512-port config_db is a few MB)."""

_NVUE_RE = re.compile(r"^(- )?(header|set):", re.MULTILINE)
_NVUE_TOP_RE = re.compile(r"^(qos|interface|router|system):\s*$", re.MULTILINE)
_EOS_RE = re.compile(
    r"^(interface (Ethernet|Port-Channel)\S*|hostname \S+|qos (map|profile) |"
    r"priority-flow-control |! Command: show running-config)",
    re.MULTILINE | re.IGNORECASE,
)
_MLNX_QOS_RE = re.compile(
    r"^\s*(PFC configuration:|Priority trust state:|dscp2prio mapping:)", re.MULTILINE
)
_NIC_CC_RE = re.compile(
    r"(^\s*\*?\s*(ROCE_CC_|CNP_DSCP|CNP_802P_PRIO|DCBX_)\w*_P[12]\b|ecn/roce_(rp|np)/|"
    r"default_roce_tos|NCCL_IB_TC\s*=|^Configurations:)",
    re.MULTILINE,
)


def detect_format(text: str, file: str) -> DeviceFormat:
    """The format of ``text``, or FP402 when none fits."""
    head = text.lstrip()
    if head.startswith("{"):
        return "sonic"
    if _MLNX_QOS_RE.search(text):
        return "mlnx_qos"
    if _NVUE_RE.search(text) or _NVUE_TOP_RE.search(text):
        return "nvue"
    if _EOS_RE.search(text):
        return "eos"
    if _NIC_CC_RE.search(text):
        return "nic_cc"
    raise input_error(
        "FP402",
        file,
        "cannot tell the configuration format",
        None,
        "pass --device-type sonic|nvue|eos|mlnx_qos|nic_cc",
    )


def parse_device_config(text: str, file: str, device_type: str = "auto") -> DeviceConfig:
    """Parse configuration ``text`` (named ``file`` in messages) as ``device_type``."""
    if device_type not in DEVICE_TYPES:
        raise input_error(
            "FP410",
            "--device-type",
            "unknown device type",
            device_type,
            f"use one of {', '.join(DEVICE_TYPES)}",
        )
    if not text.strip():
        raise input_error("FP408", file, "the file is empty", None, "give a configuration file")
    fmt: DeviceFormat = (
        detect_format(text, file) if device_type == "auto" else device_type  # type: ignore[assignment]
    )
    return PARSERS[fmt](text, file)


def read_text(path: str | Path) -> str:
    """The text of a file, or FP401 (missing, unreadable, binary, not UTF-8, too large)."""
    file = str(path)
    data = read_bytes(path, CONFIG_FILE)
    if b"\x00" in data:
        raise input_error(
            "FP401",
            file,
            "binary file, not configuration text",
            None,
            "give the text the device prints",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise input_error(
            "FP401", file, "not UTF-8 text", f"byte {exc.start}", "save it as UTF-8"
        ) from None


def read_device_config(path: str | Path, device_type: str = "auto") -> DeviceConfig:
    """Read and parse one configuration file.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "gpu01.txt")
    ...     _ = open(path, "w").write("CNP_DSCP_P1 48\\n")
    ...     read_device_config(path).nic.cnp_dscp
    48
    """
    return parse_device_config(read_text(path), str(path), device_type)
