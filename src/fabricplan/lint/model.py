"""The normalized model every parser returns: one :class:`DeviceConfig` per file.

A switch and a NIC are described with the same :class:`PortConfig` (a NIC is a device with one
port), so that a rule such as "PFC on exactly the RoCE priorities" reads the same on both. NIC-only
facts (CNP marking, congestion control, DCBX) live in :class:`NicSettings`.

Priorities and queues
---------------------
``dscp_to_priority`` maps a DSCP to a *switch priority* (SONiC and EOS call it the traffic class,
Cumulus the switch priority, the NIC the user priority); PFC is enabled per priority;
``priority_to_queue`` maps a priority to the egress queue (traffic class) whose ECN profile and
scheduler apply. Where a format has no separate queue map the map is the identity.

A field that is ``None`` was not found in the input: rules skip what they cannot see rather than
guess.

>>> port = PortConfig(name="Ethernet0", pfc_priorities=frozenset({3}))
>>> port.queue_of(3), port.origin_of("pfc_priorities")
(3, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

DeviceKind = Literal["switch", "nic"]
DeviceFormat = Literal["sonic", "nvue", "eos", "mlnx_qos", "nic_cc"]
TrustMode = Literal["dscp", "pcp", "both", "port"]
"""What a port classifies on. ``both`` (Cumulus ``pcp,dscp``) uses DSCP for IP packets."""
PortRole = Literal["host", "fabric"]
"""``host`` faces servers; ``fabric`` faces another switch."""
SchedulerKind = Literal["strict", "dwrr", "ets", "vendor"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a setting was read: the file and, where known, its line and key path."""

    file: str
    line: int | None = None
    key: str | None = None
    path: tuple[str, ...] = ()
    """The key path inside a JSON or YAML document, used to find the line when it is needed."""

    def describe(self) -> str:
        """``file:line (key)`` as far as known.

        >>> Origin("leaf.json", 12, "PORT|Ethernet0.mtu").describe()
        'leaf.json:12 (PORT|Ethernet0.mtu)'
        """
        text = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{text} ({self.key})" if self.key else text


@dataclass(frozen=True, slots=True)
class EcnProfile:
    """ECN/WRED marking on one egress queue.

    Thresholds are in bytes when the unit is known; ``threshold_unit`` keeps the unit the device
    used (EOS can give ``segments``, whose size depends on the ASIC, then bytes are ``None``).
    """

    ecn_enabled: bool
    min_threshold_bytes: float | None = None
    max_threshold_bytes: float | None = None
    mark_probability_pct: float | None = None
    drop_enabled: bool = False
    """WRED drops (not only marks) packets of this queue."""
    threshold_unit: str = "bytes"
    min_threshold_raw: float | None = None
    max_threshold_raw: float | None = None
    name: str = ""


@dataclass(frozen=True, slots=True)
class QueueScheduler:
    """How one egress queue (or NIC traffic class) is scheduled."""

    kind: SchedulerKind
    weight: float | None = None
    """DWRR weight or ETS bandwidth percent."""
    weight_is_percent: bool = False
    """True when the weights of a port are percentages that must add up to 100."""


@dataclass(frozen=True, slots=True)
class BufferProfile:
    """The ingress buffer (priority group) that holds one priority's traffic."""

    name: str
    lossless: bool
    """True when the profile reserves headroom (it has xoff) or belongs to a lossless pool."""
    size_bytes: float | None = None
    xoff_bytes: float | None = None
    """Headroom above the pause trigger: bytes that may still arrive after PFC is sent."""
    xon_bytes: float | None = None
    dynamic: bool = False
    """The switch computes the headroom itself (SONiC ``NULL`` profile, dynamic buffer mode)."""
    static_threshold_bytes: float | None = None
    """Static shared-buffer limit: the PG sends PFC when its shared use reaches it."""
    dynamic_th: float | None = None
    """Dynamic-threshold exponent: the PG may use ``2**dynamic_th`` times the free pool."""
    pool: str | None = None
    packet_discard_action: Literal["drop", "trim"] | None = None
    """What a queue with this (egress) profile does with a packet it has no room for: drop it,
    or trim it to its header and forward that (SONiC ``BUFFER_PROFILE.packet_discard_action``,
    sonic-buffer-profile.yang; trimming is allowed on egress queues only)."""


@dataclass(frozen=True, slots=True)
class BufferPool:
    """A shared buffer pool of a switch."""

    name: str
    size_bytes: float | None
    direction: Literal["ingress", "egress"] | None = None
    lossless: bool = False
    shared_headroom_bytes: float | None = None
    memory_percent: float | None = None
    """Share of the switch buffer (Cumulus traffic pools give a percentage, not bytes)."""

    @property
    def empty(self) -> bool:
        """True when the pool is configured with no memory at all."""
        return self.size_bytes == 0 or self.memory_percent == 0


@dataclass(frozen=True, slots=True)
class Watchdog:
    """PFC watchdog (pause-storm detection) on one port."""

    enabled: bool
    detection_ms: float | None = None
    restoration_ms: float | None = None
    poll_ms: float | None = None
    action: str | None = None


@dataclass(frozen=True)
class PortConfig:
    """One port of a switch, or the one port of a NIC."""

    name: str
    speed_gbps: float | None = None
    mtu_bytes: int | None = None
    """IP MTU (L2 header excluded), as SONiC, Cumulus, EOS and Linux all give it."""
    lanes: int | None = None
    cable_length_m: float | None = None
    role: PortRole | None = None
    kind: Literal["physical", "bond"] = "physical"
    admin_up: bool = True
    trust: TrustMode | None = None
    dscp_to_priority: Mapping[int, int] | None = None
    priority_to_queue: Mapping[int, int] | None = None
    pfc_priorities: frozenset[int] | None = None
    """Priorities with PFC; ``None`` = PFC not configured at all (no pause on any priority)."""
    pfc_rx: bool | None = None
    """The port honours received PFC frames."""
    pfc_tx: bool | None = None
    """The port sends PFC frames."""
    link_pause: bool | None = None
    """Global 802.3x pause (all traffic) is on."""
    ecn: Mapping[int, EcnProfile] = field(default_factory=dict)
    """ECN profile per egress queue."""
    scheduler: Mapping[int, QueueScheduler] = field(default_factory=dict)
    """Scheduler per egress queue."""
    ingress_buffers: Mapping[int, BufferProfile] = field(default_factory=dict)
    """Ingress buffer profile per priority (only where the input names one)."""
    egress_lossless_queues: frozenset[int] | None = None
    """Egress queues with a lossless buffer profile (SONiC ``BUFFER_QUEUE``)."""
    watchdog: Watchdog | None = None
    adaptive_routing: bool | None = None
    trimming_queues: frozenset[int] | None = None
    """Egress queues that trim a packet they cannot hold (UEC packet trimming); ``None``: the
    input does not say."""
    link_level_retry: bool | None = None
    """Link-level retry (UEC LLR) on this link."""
    credit_flow_control: bool | None = None
    """Credit-based link flow control (UEC CBFC) on this link."""
    dcbx: str | None = None
    """DCBX mode advertised on this port (``ieee``, ``cee``) or ``None`` when off."""
    where: Mapping[str, Origin] = field(default_factory=dict)
    """Where each field was read (field name -> origin)."""

    def queue_of(self, priority: int) -> int:
        """The egress queue of ``priority`` (identity when no map is given)."""
        if self.priority_to_queue is None:
            return priority
        return self.priority_to_queue.get(priority, priority)

    def origin_of(self, name: str) -> Origin | None:
        """Where field ``name`` was read, or ``None`` when the input did not say."""
        return self.where.get(name)

    @property
    def pfc_set(self) -> frozenset[int]:
        """The PFC priorities, empty when PFC is not configured."""
        return self.pfc_priorities or frozenset()


@dataclass(frozen=True)
class NicSettings:
    """What only a NIC has: CNP marking, congestion control, RoCE marking, DCBX."""

    vendor: str | None = None
    cnp_dscp: int | None = None
    cnp_priority: int | None = None
    cc_priorities: frozenset[int] | None = None
    """Priorities with congestion control (``ROCE_CC_PRIO_MASK``)."""
    cc_rp_enabled: frozenset[int] | None = None
    """Priorities whose reaction point (rate limiter) is enabled (sysfs ``ecn/roce_rp``)."""
    cc_np_enabled: frozenset[int] | None = None
    """Priorities whose notification point (CNP sender) is enabled (sysfs ``ecn/roce_np``)."""
    cc_algorithm: str | None = None
    out_of_order_placement: bool | None = None
    """The NIC places RoCE packets that arrive out of order (Spectrum-X SuperNIC, ConnectX OOO
    data placement) instead of taking them as a loss."""
    telemetry_cc: bool | None = None
    """The NIC runs the congestion control that reads the switches' in-band telemetry
    (Spectrum-X CC)."""
    roce_dscp: int | None = None
    """DSCP of RoCE data packets (from the traffic class / ToS the host sets)."""
    roce_mtu_bytes: int | None = None
    dcbx_mode: Literal["os", "firmware"] | None = None
    dcbx_willing: bool | None = None
    dcbx_ieee: bool | None = None
    dcbx_cee: bool | None = None
    buffer_sizes_bytes: tuple[int, ...] | None = None
    prio2buffer: tuple[int, ...] | None = None
    where: Mapping[str, Origin] = field(default_factory=dict)

    def origin_of(self, name: str) -> Origin | None:
        """Where field ``name`` was read."""
        return self.where.get(name)


@dataclass(frozen=True)
class DeviceConfig:
    """One device as read from one file."""

    name: str
    kind: DeviceKind
    format: DeviceFormat
    file: str
    ports: tuple[PortConfig, ...] = ()
    buffer_pools: tuple[BufferPool, ...] = ()
    lossless_pool_required: bool = True
    """False when the format sizes lossless buffers itself (no pool to check)."""
    nic: NicSettings | None = None
    asic: str | None = None
    """ASIC or platform when the input names it (e.g. SONiC ``DEVICE_METADATA.platform``)."""
    lossless_mtu_bytes: int | None = None
    """SONiC ``LOSSLESS_TRAFFIC_PATTERN.mtu`` (the headroom formula's lossless MTU)."""
    small_packet_percentage: float | None = None
    telemetry: bool | None = None
    """The switch adds the in-band congestion telemetry a telemetry-driven NIC CC reads
    (Spectrum-X)."""
    where: Mapping[str, Origin] = field(default_factory=dict)

    @property
    def origin(self) -> Origin:
        """The file as a whole."""
        return Origin(self.file)

    def origin_of(self, name: str) -> Origin:
        """Where device-level field ``name`` was read (the file when unknown)."""
        return self.where.get(name, self.origin)

    @property
    def pfc_ports(self) -> tuple[PortConfig, ...]:
        """Ports with PFC on at least one priority."""
        return tuple(port for port in self.ports if port.pfc_set)

    def lossless_pool(self) -> BufferPool | None:
        """The ingress lossless pool, if the input names one."""
        for pool in self.buffer_pools:
            if pool.lossless and pool.direction in ("ingress", None):
                return pool
        return None
