"""The host side: ``mlnx_qos`` output and NIC congestion-control settings, as the tools print them.

Two device types share this reader:

``mlnx_qos``
    The output of ``mlnx_qos -i <netdev>`` (docs/refs.md C.8): ``DCBX mode``, ``Priority trust
    state``, the ``dscp2prio mapping`` block, ``Receive buffer size``, ``Cable len``, the ``PFC
    configuration`` table (``priority``/``enabled``/``buffer`` rows) and the per-TC lines
    ``tc: N ratelimit: ..., tsa: ets|strict|vendor[, bw: X%]`` followed by ``priority: P``.
    Lines of the NIC CC format below may follow in the same file.

``nic_cc``
    NIC congestion-control and marking settings. No single tool prints them all, so the format
    is the concatenation of what the usual commands print (any subset, in any order):

    - ``mlxconfig -d <dev> q`` lines ``NAME  VALUE`` (``ROCE_CC_PRIO_MASK_P1 255``,
      ``ROCE_CC_ALGORITHM_P1 ECN(0)``, ``CNP_DSCP_P1 48``, ``CNP_802P_PRIO_P1 6``,
      ``DCBX_WILLING_P1 False(0)``, ``DCBX_IEEE_P1``, ``DCBX_CEE_P1``; ``NAME=VALUE`` is accepted
      too). Port 1 (``_P1``) is read; ``_P2`` lines are ignored.
    - ``grep -H . /sys/class/net/<if>/ecn/roce_{rp,np}/enable/*`` lines
      ``.../ecn/roce_rp/enable/3:1``.
    - the RoCE traffic class: ``.../default_roce_tos:106`` (rdma_cm configfs),
      ``.../tc/1/traffic_class:106`` or ``NCCL_IB_TC=106``; DSCP = ToS >> 2.
    - ``ip link show <if>`` (``... mtu 9000 ...``) for the netdev MTU and ``ibv_devinfo``
      (``active_mtu: 4096 (5)``) for the RoCE MTU.
    - ``ethtool <if>`` (``Speed: 400000Mb/s``) and ``ethtool -a <if>`` (``RX: off``, ``TX: off``)
      for the speed and 802.3x pause.
    - ``Device type: ConnectX7`` (mlxconfig header) or a ``bnxt`` device name names the vendor.

    Lines that match none of these are ignored; a file where nothing matches is an input error.

>>> text = '''Priority trust state: dscp
... Cable len: 5
... PFC configuration:
...         priority    0   1   2   3   4   5   6   7
...         enabled     0   0   0   1   0   0   0   0
... ROCE_CC_PRIO_MASK_P1        0x08
... CNP_DSCP_P1                 48
... '''
>>> nic = parse_mlnx_qos(text, "gpu01-eth0.txt")
>>> port = nic.ports[0]
>>> port.trust, port.cable_length_m, sorted(port.pfc_set), sorted(nic.nic.cc_priorities)
('dscp', 5.0, [3], [3])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fabricplan.lint.model import (
    DeviceConfig,
    DeviceFormat,
    NicSettings,
    Origin,
    PortConfig,
    QueueScheduler,
    SchedulerKind,
    TrustMode,
)
from fabricplan.lint.value import (
    input_error,
    to_bool,
    to_dscp,
    to_float,
    to_int,
    to_priority,
)
from fabricplan.lint.vendor_default import DSCP_SHIFT_IN_TOS
from fabricplan.units import mbps_to_gbps

MLXCONFIG_KEYS = frozenset(
    {
        "ROCE_CC_PRIO_MASK",
        "ROCE_CC_ALGORITHM",
        "CNP_DSCP",
        "CNP_802P_PRIO",
        "DCBX_IEEE",
        "DCBX_CEE",
        "DCBX_WILLING",
    }
)
VENDOR_WORDS = {
    "connectx": "nvidia",
    "bluefield": "nvidia",
    "mlx5": "nvidia",
    "bnxt": "broadcom",
    "thor": "broadcom",
}

_MLXCONFIG_RE = re.compile(r"^\s*\*?\s*([A-Z0-9_]+?)_P([12])\s*[= ]\s*(\S+)(?:\s+(\S+))?")
_SYSFS_ECN_RE = re.compile(r"ecn/roce_(rp|np)/enable/(\d+)\s*:\s*(\S+)\s*$")
_TOS_RE = re.compile(r"(?:default_roce_tos|traffic_class)\s*:\s*(\S+)\s*$|NCCL_IB_TC\s*=\s*(\S+)")
_IP_LINK_RE = re.compile(r"^\d+:\s+(\S+?):\s.*\bmtu\s+(\d+)")
_ACTIVE_MTU_RE = re.compile(r"^\s*active_mtu:\s*(\d+)")
_SPEED_RE = re.compile(r"^\s*Speed:\s*(\d+)\s*Mb/s", re.IGNORECASE)
_PAUSE_RE = re.compile(r"^\s*(RX|TX):\s*(on|off)\s*$")
_TC_RE = re.compile(r"^\s*tc:\s*(\d+)\s+ratelimit:.*?tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)\s*%)?")
_TC_PRIORITY_RE = re.compile(r"^\s*priority:\s*([\d\s,]+)$")
_DSCP2PRIO_RE = re.compile(r"^\s*prio:\s*(\d+)\s+dscp:\s*([\d,\s]*)$")


@dataclass
class _Host:
    """What has been read so far from a host file."""

    file: str
    fmt: DeviceFormat
    found: bool = False
    trust: TrustMode | None = None
    dscp_to_priority: dict[int, int] | None = None
    pfc: frozenset[int] | None = None
    cable_m: float | None = None
    mtu: int | None = None
    speed_gbps: float | None = None
    interface: str | None = None
    link_pause: bool | None = None
    tc_of_priority: dict[int, int] = field(default_factory=dict)
    scheduler: dict[int, QueueScheduler] = field(default_factory=dict)
    buffer_sizes: tuple[int, ...] | None = None
    prio2buffer: tuple[int, ...] | None = None
    vendor: str | None = None
    cnp_dscp: int | None = None
    cnp_priority: int | None = None
    cc_mask: frozenset[int] | None = None
    rp: dict[int, bool] = field(default_factory=dict)
    np: dict[int, bool] = field(default_factory=dict)
    cc_algorithm: str | None = None
    roce_dscp: int | None = None
    roce_mtu: int | None = None
    dcbx_mode: Literal["os", "firmware"] | None = None
    dcbx_willing: bool | None = None
    dcbx_ieee: bool | None = None
    dcbx_cee: bool | None = None
    port_where: dict[str, Origin] = field(default_factory=dict)
    nic_where: dict[str, Origin] = field(default_factory=dict)


def parse_mlnx_qos(text: str, file: str) -> DeviceConfig:
    """Read ``mlnx_qos`` output (NIC CC lines may follow in the same file).

    Raises
    ------
    InputFileError
        FP406/FP409 with file:line for a bad value; FP408 when nothing in the file is recognised.
    """
    return _parse(text, file, "mlnx_qos")


def parse_nic_cc(text: str, file: str) -> DeviceConfig:
    """Read NIC congestion-control settings (the ``nic_cc`` text format of this module)."""
    return _parse(text, file, "nic_cc")


def _parse(text: str, file: str, fmt: DeviceFormat) -> DeviceConfig:
    host = _Host(file=file, fmt=fmt)
    lines = text.splitlines()
    index = 0
    pending_tc: int | None = None
    while index < len(lines):
        line = lines[index]
        number = index + 1
        index += 1
        if pending_tc is not None:
            match = _TC_PRIORITY_RE.match(line)
            if match is not None:
                for token in match.group(1).replace(",", " ").split():
                    host.tc_of_priority[to_priority(token, f"{file}:{number}")] = pending_tc
                continue
            pending_tc = None
        if line.strip().startswith("PFC configuration:"):
            index = _pfc_table(host, lines, index)
            continue
        if line.strip().startswith("dscp2prio mapping:"):
            index = _dscp_table(host, lines, index)
            continue
        tc = _TC_RE.match(line)
        if tc is not None:
            pending_tc = _tc_line(host, tc, number)
            continue
        _line(host, line, number)
    if not host.found:
        raise input_error(
            "FP408",
            file,
            f"nothing recognised as {fmt} output",
            None,
            "give the output of `mlnx_qos -i <if>` or the NIC CC lines described in docs/lint.md",
        )
    return _device(host)


def _mark(host: _Host, target: dict[str, Origin], name: str, number: int, text: str) -> None:
    host.found = True
    target[name] = Origin(host.file, number, text.strip()[:80])


def _line(host: _Host, line: str, number: int) -> None:
    where = f"{host.file}:{number}"
    stripped = line.strip()
    if stripped.startswith("DCBX mode:"):
        host.dcbx_mode = "firmware" if "firmware" in stripped.lower() else "os"
        _mark(host, host.nic_where, "dcbx_mode", number, line)
    elif stripped.startswith("Priority trust state:"):
        value = stripped.split(":", 1)[1].strip().lower()
        host.trust = "dscp" if value == "dscp" else "pcp" if value == "pcp" else None
        _mark(host, host.port_where, "trust", number, line)
    elif stripped.startswith("Cable len:"):
        host.cable_m = to_float(stripped.split(":", 1)[1], where)
        _mark(host, host.port_where, "cable_length_m", number, line)
    elif stripped.startswith("Receive buffer size"):
        host.buffer_sizes = tuple(
            to_int(token, where) for token in stripped.split(":", 1)[1].split(",") if token.strip()
        )
        _mark(host, host.nic_where, "buffer_sizes_bytes", number, line)
    elif stripped.startswith("Device type:"):
        host.vendor = _vendor(stripped) or host.vendor
        host.found = True
    elif (match := _MLXCONFIG_RE.match(line)) is not None and match.group(1) in MLXCONFIG_KEYS:
        if match.group(2) == "1":
            # With `mlxconfig q -e` the columns are Default, Current, Next Boot: keep Current.
            value = (
                match.group(4)
                if match.group(4) and line.lstrip().startswith("*")
                else (match.group(3))
            )
            _mlxconfig(host, match.group(1), value, where, number, line)
    elif (match := _SYSFS_ECN_RE.search(stripped)) is not None:
        point, priority, value = match.groups()
        enabled = to_bool(value, where)
        target = host.rp if point == "rp" else host.np
        target[to_priority(priority, where)] = enabled
        _mark(host, host.nic_where, f"cc_{point}_enabled", number, line)
    elif (match := _TOS_RE.search(stripped)) is not None:
        tos = to_int(match.group(1) or match.group(2), where)
        if not 0 <= tos <= 255:
            raise input_error("FP409", where, "ToS must be 0-255", tos)
        host.roce_dscp = tos >> DSCP_SHIFT_IN_TOS
        _mark(host, host.nic_where, "roce_dscp", number, line)
    elif (match := _IP_LINK_RE.match(stripped)) is not None:
        host.interface = match.group(1).split("@")[0]
        host.mtu = to_int(match.group(2), where)
        _mark(host, host.port_where, "mtu_bytes", number, line)
    elif (match := _ACTIVE_MTU_RE.match(line)) is not None:
        host.roce_mtu = to_int(match.group(1), where)
        _mark(host, host.nic_where, "roce_mtu_bytes", number, line)
    elif (match := _SPEED_RE.match(line)) is not None:
        host.speed_gbps = mbps_to_gbps(to_float(match.group(1), where))
        _mark(host, host.port_where, "speed_gbps", number, line)
    elif (match := _PAUSE_RE.match(line)) is not None:
        on = match.group(2) == "on"
        host.link_pause = on or bool(host.link_pause)
        _mark(host, host.port_where, "link_pause", number, line)


def _vendor(text: str) -> str | None:
    lowered = text.lower()
    for word, vendor in VENDOR_WORDS.items():
        if word in lowered:
            return vendor
    return None


def _mlxconfig(host: _Host, key: str, value: str, where: str, number: int, line: str) -> None:
    if key == "ROCE_CC_PRIO_MASK":
        try:
            mask = int(value.split("(")[0], 0)
        except ValueError:
            raise input_error("FP406", where, "expected a priority bit mask", value) from None
        if not 0 <= mask <= 255:
            raise input_error("FP409", where, "priority mask must be 0-255", mask)
        host.cc_mask = frozenset(bit for bit in range(8) if mask >> bit & 1)
        _mark(host, host.nic_where, "cc_priorities", number, line)
    elif key == "ROCE_CC_ALGORITHM":
        host.cc_algorithm = value.split("(")[0].lower()
        _mark(host, host.nic_where, "cc_algorithm", number, line)
    elif key == "CNP_DSCP":
        host.cnp_dscp = to_dscp(value.split("(")[0], where)
        _mark(host, host.nic_where, "cnp_dscp", number, line)
    elif key == "CNP_802P_PRIO":
        host.cnp_priority = to_priority(value.split("(")[0], where)
        _mark(host, host.nic_where, "cnp_priority", number, line)
    elif key == "DCBX_WILLING":
        host.dcbx_willing = to_bool(value, where)
        _mark(host, host.nic_where, "dcbx_willing", number, line)
    elif key == "DCBX_IEEE":
        host.dcbx_ieee = to_bool(value, where)
        _mark(host, host.nic_where, "dcbx_ieee", number, line)
    elif key == "DCBX_CEE":
        host.dcbx_cee = to_bool(value, where)
        _mark(host, host.nic_where, "dcbx_cee", number, line)


def _pfc_table(host: _Host, lines: list[str], index: int) -> int:
    """The ``priority``/``enabled``/``buffer`` rows after ``PFC configuration:``."""
    rows: dict[str, list[str]] = {}
    while index < len(lines):
        words = lines[index].split()
        if not words or words[0] not in ("priority", "enabled", "buffer"):
            break
        rows[words[0]] = words[1:]
        number = index + 1
        where = f"{host.file}:{number}"
        if words[0] == "enabled":
            flags = [to_int(token, where) for token in words[1:]]
            if len(flags) != 8 or any(flag not in (0, 1) for flag in flags):
                raise input_error(
                    "FP406", where, "expected eight 0/1 PFC flags", lines[index].strip()
                )
            host.pfc = frozenset(p for p, flag in enumerate(flags) if flag)
            _mark(host, host.port_where, "pfc_priorities", number, lines[index])
        elif words[0] == "buffer":
            host.prio2buffer = tuple(to_int(token, where) for token in words[1:])
            host.found = True
        index += 1
    return index


def _dscp_table(host: _Host, lines: list[str], index: int) -> int:
    mapping: dict[int, int] = {}
    start = index
    while index < len(lines):
        match = _DSCP2PRIO_RE.match(lines[index])
        if match is None:
            break
        where = f"{host.file}:{index + 1}"
        priority = to_priority(match.group(1), where)
        for token in match.group(2).replace(",", " ").split():
            mapping[to_dscp(token, where)] = priority
        index += 1
    if mapping:
        host.dscp_to_priority = mapping
        _mark(host, host.port_where, "dscp_to_priority", start, "dscp2prio mapping")
    return index


def _tc_line(host: _Host, match: re.Match[str], number: int) -> int:
    where = f"{host.file}:{number}"
    tc = to_priority(match.group(1), where)
    tsa = match.group(2).lower()
    kind: SchedulerKind = "strict" if tsa == "strict" else "ets" if tsa == "ets" else "vendor"
    weight = to_float(match.group(3), where) if match.group(3) else None
    host.scheduler[tc] = QueueScheduler(kind, weight, weight_is_percent=kind == "ets")
    _mark(host, host.port_where, f"scheduler.{tc}", number, match.group(0))
    return tc


def _device(host: _Host) -> DeviceConfig:
    nic = NicSettings(
        vendor=host.vendor,
        cnp_dscp=host.cnp_dscp,
        cnp_priority=host.cnp_priority,
        cc_priorities=host.cc_mask,
        cc_rp_enabled=frozenset(p for p, on in host.rp.items() if on) if host.rp else None,
        cc_np_enabled=frozenset(p for p, on in host.np.items() if on) if host.np else None,
        cc_algorithm=host.cc_algorithm,
        roce_dscp=host.roce_dscp,
        roce_mtu_bytes=host.roce_mtu,
        dcbx_mode=host.dcbx_mode,
        dcbx_willing=host.dcbx_willing,
        dcbx_ieee=host.dcbx_ieee,
        dcbx_cee=host.dcbx_cee,
        buffer_sizes_bytes=host.buffer_sizes,
        prio2buffer=host.prio2buffer,
        where=host.nic_where,
    )
    port = PortConfig(
        name=host.interface or "nic",
        speed_gbps=host.speed_gbps,
        mtu_bytes=host.mtu,
        cable_length_m=host.cable_m,
        role="host",
        trust=host.trust,
        dscp_to_priority=host.dscp_to_priority,
        priority_to_queue=host.tc_of_priority or None,
        pfc_priorities=host.pfc,
        link_pause=host.link_pause,
        scheduler=host.scheduler,
        where=host.port_where,
    )
    return DeviceConfig(
        name=Path(host.file).stem,
        kind="nic",
        format=host.fmt,
        file=host.file,
        ports=(port,),
        lossless_pool_required=False,
        nic=nic,
    )
