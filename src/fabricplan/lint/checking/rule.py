"""The rule registry, the intent the rules check against, and what a finding says.

Every rule has an id (``L01``...), a severity, a one-sentence *why*, a *fix* and the *source* the
rule comes from (docs/refs.md section C and the documents it cites). Rules L01-L15 are the checks of
docs/refs.md C.9; L16-L17 are added from the same sources (see docs/lint.md). L20-L22 check the
Spectrum-X RoCE settings (adaptive routing, SuperNIC reordering, telemetry CC), L23-L24 the UEC
profiles (packet trimming, LLR/CBFC).

Each rule also says what it makes an operator keep right: which mechanism needs it (``pfc``,
``dcqcn``, ``ethernet``, ``adaptive``), how many settings it checks on a switch and on a NIC, and
their kind. :mod:`fabricplan.lint.operations` sums these over a design's devices for the
operations burden.

>>> RULES["L05"].severity, RULES["L05"].mechanism
('error', 'pfc')
>>> sorted(RULES)[:3]
['L01', 'L02', 'L03']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from fabricplan.model.fabric import Severity

if TYPE_CHECKING:  # annotations only: the compare's operations model reads RULES, not configs
    from fabricplan.lint.model import DeviceConfig, Origin, PortConfig

Mechanism = Literal[
    "pfc", "dcqcn", "ethernet", "adaptive", "nic_reorder", "telemetry_cc", "trimming", "link_retry"
]
"""What makes a rule necessary: PFC lossless Ethernet, DCQCN congestion control, any RoCE
Ethernet link, adaptive routing on Ethernet, per-packet routing that relies on the NIC to
reorder, NIC congestion control fed by switch telemetry, packet trimming, link-level retry and
credit-based link flow control."""
SettingKind = Literal["agreement", "physical", "safety", "tuning"]
"""``agreement``: must be equal on every hop and NIC; ``physical``: depends on each port's speed
and cable; ``safety``: protects against storms and misbehaving peers; ``tuning``: thresholds and
weights that need judgement."""

SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Rule:
    """What one rule checks and says."""

    id: str
    severity: Severity
    title: str
    why: str
    fix: str
    source: str
    mechanism: Mechanism
    kind: SettingKind
    switch_settings: int
    """Settings this rule checks on one switch (per port class)."""
    nic_settings: int
    """Settings this rule checks on one NIC."""


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            id="L01",
            severity="error",
            title="PFC on exactly the RoCE priorities, on every port and NIC",
            why=(
                "A hop without PFC on the RoCE priority drops instead of pausing, and PFC on an "
                "extra priority pauses traffic that has no headroom reserved for it."
            ),
            fix=(
                "Enable PFC on the lossless priorities only, identically on every switch port and "
                "NIC."
            ),
            source=(
                "docs/refs.md C.1 (Cumulus `nv set qos roce`, SONiC qos_config.j2 pfc_enable, "
                "ConnectX `mlnx_qos --pfc`), C.9 L01"
            ),
            mechanism="pfc",
            kind="agreement",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L02",
            severity="error",
            title="RoCE DSCP maps to the lossless priority on every hop",
            why=(
                "A hop that maps the RoCE DSCP to another priority puts RoCE in a lossy queue, "
                "where it is dropped under congestion and falls back to go-back-N retransmission."
            ),
            fix=(
                "Map the RoCE DSCP (NVIDIA and Broadcom default 26) to the lossless priority on "
                "every switch and in the NIC's dscp2prio map."
            ),
            source=(
                "docs/refs.md C.1 (DSCP 26 -> priority 3 on Cumulus, Onyx, Thor2; SONiC "
                "DSCP_TO_TC_MAP), C.9 L02"
            ),
            mechanism="pfc",
            kind="agreement",
            switch_settings=1,
            nic_settings=2,
        ),
        Rule(
            id="L03",
            severity="error",
            title="CNP marking matches the NIC vendor; CNP queue strict and not dropped",
            why=(
                "CNPs that wait behind the congestion they signal, or are dropped, arrive too late "
                "for DCQCN to slow the sender, so PFC pauses take over."
            ),
            fix=(
                "Map the NIC's CNP DSCP (48 on NVIDIA and Broadcom) to a strict-priority, non-PFC "
                "queue without WRED drop; keep the NIC's CNP priority equal to that queue's "
                "priority."
            ),
            source=(
                "docs/refs.md C.1 (CNP 48/6 NVIDIA, 48/7 Broadcom Thor2), C.6 (CNP strict), C.7 "
                "(CNP priority mismatch), C.9 L03"
            ),
            mechanism="dcqcn",
            kind="agreement",
            switch_settings=2,
            nic_settings=2,
        ),
        Rule(
            id="L04",
            severity="error",
            title="ECN on the RoCE queue, Kmin < Kmax below the PFC trigger, Pmax set",
            why=(
                "Without ECN marking below the pause trigger, DCQCN never reduces the rate and "
                "congestion is handled by PFC pauses that spread across the fabric."
            ),
            fix=(
                "Enable ECN on the RoCE egress queue with min < max thresholds (bytes) below the "
                "PFC trigger and a marking probability above 0."
            ),
            source=(
                "docs/refs.md C.1 (Cumulus 150,000/1,501,500 B; SONiC AZURE_LOSSLESS), C.3, C.9 "
                "L04; Zhu et al., SIGCOMM 2015 (DCQCN)"
            ),
            mechanism="dcqcn",
            kind="tuning",
            switch_settings=3,
            nic_settings=0,
        ),
        Rule(
            id="L05",
            severity="error",
            title="PFC watchdog on every PFC port; poll <= detection <= restoration",
            why=(
                "Without a watchdog a NIC or port stuck sending pauses stops the lossless class on "
                "every hop behind it (pause storm, deadlock)."
            ),
            fix=(
                "Enable the PFC watchdog on every PFC-enabled port (SONiC default 200 ms detection "
                "and restoration, action drop), with poll <= detection and restoration >= "
                "detection."
            ),
            source=(
                "docs/refs.md C.4 (sonic-utilities pfcwd/main.py; Cumulus pfc-watchdog), C.7 "
                "(pause storms, Guo et al. SIGCOMM 2016), C.9 L05"
            ),
            mechanism="pfc",
            kind="safety",
            switch_settings=3,
            nic_settings=0,
        ),
        Rule(
            id="L06",
            severity="error",
            title="Headroom per lossless priority >= the published formula",
            why=(
                "Headroom smaller than what is in flight after a pause (cable, MTU, peer response) "
                "overflows, and the lossless priority drops packets."
            ),
            fix=(
                "Size each lossless PG's xoff from the port speed, cable length and MTU (SONiC "
                "Mellanox formula on switches, mlx5 formula on ConnectX NICs), or let the device "
                "compute it."
            ),
            source=(
                "docs/refs.md C.3 (sonic-swss buffer_headroom_mellanox.lua @18913fa35726; Linux "
                "mlx5 port_buffer.c @06449e9fba1e), C.9 L06"
            ),
            mechanism="pfc",
            kind="physical",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L07",
            severity="warning",
            title="Cable length set for headroom, not left at 0 m",
            why=(
                "Headroom is computed from the configured cable length: 0 m or a missing length "
                "reserves too little for the bytes on the wire."
            ),
            fix=(
                "Set the cable length of every PFC port to its physical length (SONiC "
                "CABLE_LENGTH, Cumulus `qos pfc ... cable-length`, `mlnx_qos --cable_len`)."
            ),
            source=(
                "docs/refs.md C.1 (SONiC role map 5/40/300 m; SN5600 0 m in a lossy design), C.3, "
                "Cumulus QoS docs (incorrect cable length causes drops), C.9 L07"
            ),
            mechanism="pfc",
            kind="physical",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L08",
            severity="error",
            title="MTU chain: host >= RoCE MTU + 96 B, switches >= host",
            why=(
                "A host MTU below RoCE MTU + 96 B silently lowers the RoCE MTU (4096 -> 2048), and "
                "a switch MTU below the host's drops full-size frames."
            ),
            fix=(
                "Set the host netdev MTU >= 4192 for RoCE MTU 4096 and every switch port MTU >= "
                "the host MTU."
            ),
            source=(
                "docs/refs.md C.5 (Linux iboe_get_mtu, include/rdma/ib_addr.h @0b5eca67bd2d), C.9 "
                "L08"
            ),
            mechanism="ethernet",
            kind="agreement",
            switch_settings=1,
            nic_settings=2,
        ),
        Rule(
            id="L09",
            severity="error",
            title="Trust DSCP on every fabric port and NIC",
            why=(
                "In a routed fabric the 802.1p field is not carried across hops, so a port that "
                "trusts PCP puts RoCE in the default priority."
            ),
            fix=(
                "Set trust to DSCP (Cumulus `pcp,dscp` or `l3`, SONiC dscp_to_tc_map, EOS `qos "
                "trust dscp`, `mlnx_qos --trust dscp`)."
            ),
            source="docs/refs.md C.1; Guo et al., SIGCOMM 2016 (DSCP-based PFC), C.9 L09",
            mechanism="pfc",
            kind="agreement",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L10",
            severity="error",
            title="Global 802.3x pause off where PFC is used",
            why=(
                "Link pause stops every priority on the link and, on ConnectX, turns every buffer "
                "lossless, undoing the separation PFC provides."
            ),
            fix=(
                "Disable 802.3x pause (flowcontrol, link-pause, `ethtool -A rx off tx off`) on PFC "
                "ports."
            ),
            source=(
                "docs/refs.md C.3 (mlx5 port_buffer.c: global pause makes all buffers lossless); "
                "Cumulus QoS docs (link pause and PFC cannot share a port), C.9 L10"
            ),
            mechanism="pfc",
            kind="safety",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L11",
            severity="error",
            title="NIC congestion control enabled on the RoCE priority",
            why=(
                "Without DCQCN on the RoCE priority the NIC ignores CNPs, ECN marks have no effect "
                "and PFC is the only brake."
            ),
            fix=(
                "Include the RoCE priority in ROCE_CC_PRIO_MASK and enable ecn/roce_rp and "
                "ecn/roce_np on it; keep the mask and the sysfs switches aligned (ConnectX-7 "
                "applies CC globally)."
            ),
            source=(
                "docs/refs.md C.2 (mlxconfig ROCE_CC_PRIO_MASK, ROCE_CC_ALGORITHM), C.7 (CX-7 fw "
                "issue 4394475), C.9 L11"
            ),
            mechanism="dcqcn",
            kind="tuning",
            switch_settings=0,
            nic_settings=3,
        ),
        Rule(
            id="L12",
            severity="warning",
            title="DCBX: one source of truth for the NIC's lossless settings",
            why=(
                "A NIC willing to take DCBX from its switch lets a switch advertisement replace "
                "its PFC and ETS settings, so a static configuration can change without notice."
            ),
            fix=(
                "Either configure the NIC statically with DCBX willing off, or run DCBX on the "
                "switch ports and let the NIC follow; not a mix."
            ),
            source="docs/refs.md C.2 (DCBX_IEEE/CEE/WILLING default True), C.9 L12",
            mechanism="pfc",
            kind="agreement",
            switch_settings=1,
            nic_settings=2,
        ),
        Rule(
            id="L13",
            severity="warning",
            title="ETS weights add up to 100 % and the RoCE queue gets bandwidth",
            why=(
                "Percent weights that do not add up are rescaled or rejected by the device, and a "
                "RoCE queue with no weight is starved by the other classes."
            ),
            fix=(
                "Give the RoCE queue a positive DWRR/ETS share (50 % in the vendor defaults) and "
                "make the percentages of a port add up to 100."
            ),
            source="docs/refs.md C.6 (Cumulus/Onyx 50/50 + CNP strict; Thor2 50/50), C.9 L13",
            mechanism="pfc",
            kind="tuning",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L14",
            severity="error",
            title="Lossless priorities within capability; a lossless pool exists",
            why=(
                "Each lossless priority needs its own headroom on every port; more than two "
                "exhaust the buffer, and without a lossless pool the PFC priority has no buffer to "
                "pause in."
            ),
            fix=(
                "Use at most two lossless priorities and configure a non-empty ingress lossless "
                "pool (SONiC ingress_lossless_pool, Cumulus roce-lossless traffic pool)."
            ),
            source=(
                "docs/refs.md C.1 (SONiC template lossless TCs 3,4; Dell SONiC `roce` two "
                "priorities), C.3, C.8, C.9 L14"
            ),
            mechanism="pfc",
            kind="physical",
            switch_settings=2,
            nic_settings=1,
        ),
        Rule(
            id="L15",
            severity="error",
            title="Adaptive routing only on links that support it",
            why=(
                "Spectrum-4 adaptive routing is not supported on 800G links or on bonds, so "
                "enabling it there leaves those links with a configuration the ASIC does not apply."
            ),
            fix="Enable adaptive routing only on L3 physical interfaces below 800G.",
            source=(
                "docs/refs.md B.5 (Cumulus ECMP docs: AR on Spectrum-4, not on 800G, not on "
                "bonds), C.9 L15"
            ),
            mechanism="adaptive",
            kind="safety",
            switch_settings=1,
            nic_settings=0,
        ),
        Rule(
            id="L16",
            severity="error",
            title="Every PFC priority is backed by a lossless buffer",
            why=(
                "PFC on a priority whose ingress PG or egress queue uses a lossy buffer profile "
                "pauses too late or not at all: the priority is lossless in name only."
            ),
            fix=(
                "Map each PFC priority to a PG with a lossless (xoff) profile and its queue to the "
                "egress lossless profile (SONiC BUFFER_PG / BUFFER_QUEUE)."
            ),
            source=(
                "docs/refs.md C.8 (SONiC BUFFER_PG 3-4 lossless, BUFFER_QUEUE 3-4 "
                "egress_lossless_profile; mlx5 port_buffer.c buffer lossy bit follows PFC)"
            ),
            mechanism="pfc",
            kind="physical",
            switch_settings=2,
            nic_settings=0,
        ),
        Rule(
            id="L17",
            severity="error",
            title="PFC is both sent and honoured",
            why=(
                "A port that does not send PFC drops when its buffer fills; a port that ignores "
                "received PFC overruns the peer's headroom."
            ),
            fix="Enable PFC rx and tx on every lossless port.",
            source=(
                "Cumulus QoS docs (`qos pfc <profile> rx|tx`); docs/refs.md C.1 (Cumulus roce: "
                "rx-enabled, tx-enabled)"
            ),
            mechanism="pfc",
            kind="safety",
            switch_settings=1,
            nic_settings=0,
        ),
        Rule(
            id="L20",
            severity="error",
            title="Adaptive routing on every fabric port of a fabric that routes adaptively",
            why=(
                "Per-packet adaptive routing only spreads the RoCE priority where every switch "
                "applies it: a fabric port left on ECMP hashes whole flows again, and its "
                "collisions return on that hop."
            ),
            fix=(
                "Enable adaptive routing on every switch-facing L3 port (Cumulus `nv set "
                "interface <swp> router adaptive-routing enable on`, with the global `router "
                "adaptive-routing enable on`), or on none."
            ),
            source=(
                "Cumulus Linux user guide, 'Adaptive Routing' (Spectrum-4: per-packet for RoCEv2 "
                "unicast, enabled per interface); NVIDIA Spectrum-X whitepaper (2023)"
            ),
            mechanism="nic_reorder",
            kind="agreement",
            switch_settings=1,
            nic_settings=0,
        ),
        Rule(
            id="L21",
            severity="error",
            title="Out-of-order placement on every NIC behind per-packet adaptive routing",
            why=(
                "Per-packet adaptive routing delivers one flow's packets out of order; a NIC "
                "that does not place them out of order takes each as a loss and goes back N, "
                "which costs more than the collisions the routing removes."
            ),
            fix=(
                "Run a NIC that places out-of-order packets (BlueField-3 or ConnectX-8 SuperNIC "
                "with the Spectrum-X profile) on every GPU port, or turn adaptive routing off."
            ),
            source=(
                "NVIDIA Spectrum-X whitepaper (2023: the SuperNIC reorders); NVIDIA NIC "
                "Configuration Operator, 'Spectrum-X NIC Configuration' (ConnectX-8 and "
                "BlueField-3 SuperNIC only); MLNX_OFED 'Out-of-Order (OOO) Data Placement'"
            ),
            mechanism="nic_reorder",
            kind="agreement",
            switch_settings=0,
            nic_settings=1,
        ),
        Rule(
            id="L22",
            severity="error",
            title="Telemetry congestion control on both the switches and the NICs",
            why=(
                "Spectrum-X congestion control is computed in the NIC from telemetry the "
                "switches add: a NIC without it does not slow down, a switch without the "
                "telemetry leaves the NIC blind, and congestion falls back to PFC pauses."
            ),
            fix=(
                "Enable the switches' congestion telemetry and the NICs' Spectrum-X CC "
                "(DOCA SPC-X CC algorithm) together, on the RoCE priority."
            ),
            source=(
                "NVIDIA Spectrum-X whitepaper (2023: congestion control from in-band "
                "telemetry); NVIDIA NIC Configuration Operator, 'Spectrum-X NIC Configuration' "
                "(DOCA SPC-X CC algorithm package)"
            ),
            mechanism="telemetry_cc",
            kind="agreement",
            switch_settings=1,
            nic_settings=1,
        ),
        Rule(
            id="L23",
            severity="error",
            title="Packet trimming on the data queue of every switch port of a trimming fabric",
            why=(
                "A lossy transport that relies on trimming learns of an overflow from the "
                "trimmed header within one round trip; a queue that drops instead leaves the "
                "loss to the retransmission timer."
            ),
            fix=(
                "Give the data queues of every port an egress buffer profile with "
                "`packet_discard_action: trim` (SONiC BUFFER_PROFILE / BUFFER_QUEUE), the same "
                "on every switch."
            ),
            source=(
                "UE Specification 1.0 (2025-06: packet trimming); sonic-buffer-profile.yang and "
                "sonic-swss orchagent/buffer/bufferschema.h (packet_discard_action drop|trim, "
                "egress only)"
            ),
            mechanism="trimming",
            kind="agreement",
            switch_settings=1,
            nic_settings=0,
        ),
        Rule(
            id="L24",
            severity="error",
            title="LLR and CBFC set alike on every link of the fabric",
            why=(
                "Link-level retry and credit-based flow control work only when both ends of a "
                "link run them: a port with LLR facing one without it never gets a frame "
                "replayed, and a CBFC sender facing a receiver that returns no credits stops."
            ),
            fix=(
                "Enable LLR (and CBFC, if used) on every switch port and NIC of the fabric, or "
                "on none (UEC link profile)."
            ),
            source="UE Specification 1.0 (2025-06: link-level retry and credit-based flow control "
            "are negotiated per link)",
            mechanism="link_retry",
            kind="agreement",
            switch_settings=2,
            nic_settings=2,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One problem in one device's configuration."""

    rule: str
    severity: Severity
    device: str
    setting: str
    """The offending setting (key path or command)."""
    value: str
    """Its value as read (or ``missing``)."""
    what: str
    """What is wrong, in a few words."""
    file: str
    line: int | None = None
    key: str | None = None
    path: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        """``setting = value: what``."""
        return f"{self.setting} = {self.value}: {self.what}"

    @property
    def why(self) -> str:
        return RULES[self.rule].why

    @property
    def fix(self) -> str:
        return RULES[self.rule].fix

    @property
    def source(self) -> str:
        return RULES[self.rule].source

    def as_dict(self) -> dict[str, object]:
        """The JSON form (``rule``, ``severity``, ``device``, ``message`` first)."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "device": self.device,
            "message": self.message,
            "setting": self.setting,
            "value": self.value,
            "why": self.why,
            "fix": self.fix,
            "source": self.source,
            "file": self.file,
            "line": self.line,
            "key": self.key,
        }


DEFAULT_LOSSLESS_PRIORITIES = frozenset({3})
"""docs/refs.md C.9 L01: RoCE on priority 3 (Cumulus, Onyx, Thor2, ConnectX recipes)."""
DEFAULT_ROCE_DSCP = 26
"""docs/refs.md C.1: RoCE data DSCP 26 on Cumulus, Thor2 and the AMD/Arista examples."""
DEFAULT_CNP_DSCP = 48
"""docs/refs.md C.1: NVIDIA and Broadcom both mark CNPs with DSCP 48."""
DEFAULT_ROCE_MTU_BYTES = 4096
"""The largest RoCE path MTU (docs/refs.md C.5)."""


@dataclass(frozen=True, slots=True)
class IntentSpec:
    """What the user says the fabric should use; ``None`` lets the linter infer it."""

    lossless_priorities: frozenset[int] | None = None
    roce_dscp: int | None = None
    cnp_dscp: int | None = None
    cnp_priority: int | None = None


@dataclass(frozen=True)
class LosslessIntent:
    """The lossless settings the rules check every device against, and where each came from."""

    lossless_priorities: frozenset[int]
    roce_dscp: int | None
    cnp_dscp: int
    cnp_priority: int | None
    roce_mtu_bytes: int = DEFAULT_ROCE_MTU_BYTES
    basis: dict[str, str] = field(default_factory=dict)


def _most_common(values: Iterable[object], preferred: object = None) -> object | None:
    counts = Counter(values)
    if not counts:
        return None
    # Ties go to the catalog default, then to the smallest repr: never to the file order.
    return min(counts, key=lambda value: (-counts[value], value != preferred, repr(value)))


def infer_intent(
    devices: Sequence[DeviceConfig], given: IntentSpec | None = None
) -> LosslessIntent:
    """The intent the rules use: what the user gave, else what the NICs say, else the switches.

    NICs come first because they originate the marking; the switches must follow them.

    >>> from fabricplan.lint.model import DeviceConfig, PortConfig
    >>> sw = DeviceConfig("leaf1", "switch", "sonic", "leaf1.json",
    ...     ports=(PortConfig("Ethernet0", pfc_priorities=frozenset({3, 4})),))
    >>> sorted(infer_intent([sw]).lossless_priorities)
    [3, 4]
    """
    given = given or IntentSpec()
    nics = [d for d in devices if d.kind == "nic"]
    switches = [d for d in devices if d.kind == "switch"]
    basis: dict[str, str] = {}

    priorities = given.lossless_priorities
    basis["lossless_priorities"] = "given"
    if priorities is None:
        nic_sets = [p.pfc_set for d in nics for p in d.ports if p.pfc_priorities is not None]
        switch_sets = [p.pfc_set for d in switches for p in d.ports if p.pfc_set]
        found = _most_common(nic_sets, DEFAULT_LOSSLESS_PRIORITIES) or _most_common(
            switch_sets, DEFAULT_LOSSLESS_PRIORITIES
        )
        if isinstance(found, frozenset) and found:
            priorities = found
            basis["lossless_priorities"] = "NIC PFC setting" if nic_sets else "switch PFC setting"
        else:
            priorities = DEFAULT_LOSSLESS_PRIORITIES
            basis["lossless_priorities"] = "default"

    roce_dscp = given.roce_dscp
    basis["roce_dscp"] = "given"
    if roce_dscp is None:
        found_dscp = _most_common(
            d.nic.roce_dscp for d in nics if d.nic is not None and d.nic.roce_dscp is not None
        )
        roce_dscp = found_dscp if isinstance(found_dscp, int) else None
        basis["roce_dscp"] = "NIC traffic class"
    if roce_dscp is None:
        roce_dscp = _switch_roce_dscp(switches, priorities)
        basis["roce_dscp"] = "switch DSCP maps" if roce_dscp is not None else "unknown"

    cnp_dscp = given.cnp_dscp
    basis["cnp_dscp"] = "given"
    if cnp_dscp is None:
        found_cnp = _most_common(
            d.nic.cnp_dscp for d in nics if d.nic is not None and d.nic.cnp_dscp is not None
        )
        cnp_dscp = found_cnp if isinstance(found_cnp, int) else DEFAULT_CNP_DSCP
        basis["cnp_dscp"] = "NIC CNP_DSCP" if isinstance(found_cnp, int) else "default"

    cnp_priority = given.cnp_priority
    if cnp_priority is None:
        found_prio = _most_common(
            d.nic.cnp_priority for d in nics if d.nic is not None and d.nic.cnp_priority is not None
        )
        cnp_priority = found_prio if isinstance(found_prio, int) else None

    roce_mtu = _most_common(
        d.nic.roce_mtu_bytes for d in nics if d.nic is not None and d.nic.roce_mtu_bytes
    )
    return LosslessIntent(
        lossless_priorities=priorities,
        roce_dscp=roce_dscp,
        cnp_dscp=cnp_dscp,
        cnp_priority=cnp_priority,
        roce_mtu_bytes=roce_mtu if isinstance(roce_mtu, int) else DEFAULT_ROCE_MTU_BYTES,
        basis=basis,
    )


def _switch_roce_dscp(switches: Sequence[DeviceConfig], priorities: frozenset[int]) -> int | None:
    """The DSCP most switch ports send to a lossless priority (26 wins a tie: the NIC default)."""
    counts: Counter[int] = Counter()
    for device in switches:
        for port in device.ports:
            if port.dscp_to_priority and port.trust in ("dscp", "both"):
                counts.update(d for d, p in port.dscp_to_priority.items() if p in priorities)
    if not counts:
        return None
    best = max(counts.values())
    tied = sorted(d for d, n in counts.items() if n == best)
    return DEFAULT_ROCE_DSCP if DEFAULT_ROCE_DSCP in tied else tied[0]


@dataclass(frozen=True)
class LintContext:
    """What every check sees: all devices of the fabric and the intent."""

    devices: tuple[DeviceConfig, ...]
    intent: LosslessIntent

    @property
    def switches(self) -> tuple[DeviceConfig, ...]:
        return tuple(d for d in self.devices if d.kind == "switch")

    @property
    def nics(self) -> tuple[DeviceConfig, ...]:
        return tuple(d for d in self.devices if d.kind == "nic")


Check = Callable[[LintContext], Iterator[LintFinding]]


def lossless_domain(device: DeviceConfig) -> tuple[PortConfig, ...]:
    """Ports that must be lossless: a NIC's port; a switch's admin-up physical ports.

    Bonds are left out: PFC, buffers and the watchdog live on their member ports.
    """
    if device.kind == "nic":
        return device.ports
    return tuple(p for p in device.ports if p.kind == "physical" and (p.admin_up or p.pfc_set))


MAX_LISTED_PORTS = 3


def port_list(ports: Sequence[PortConfig]) -> str:
    """Name a group of ports compactly.

    >>> from fabricplan.lint.model import PortConfig
    >>> port_list([PortConfig("Ethernet0")])
    'Ethernet0'
    >>> port_list([PortConfig(f"swp{i}") for i in range(1, 6)])
    'swp1, swp2, swp3 and 2 more'
    """
    names = [port.name for port in ports]
    if len(names) <= MAX_LISTED_PORTS:
        return ", ".join(names)
    return f"{', '.join(names[:MAX_LISTED_PORTS])} and {len(names) - MAX_LISTED_PORTS} more"


def finding(
    rule: str,
    device: DeviceConfig,
    setting: str,
    value: object,
    what: str,
    origin: Origin | None = None,
    severity: Severity | None = None,
) -> LintFinding:
    """Build a finding of ``rule`` for ``device`` (the rule's severity unless overridden)."""
    where = origin or device.origin
    return LintFinding(
        rule=rule,
        severity=severity or RULES[rule].severity,
        device=device.name,
        setting=setting,
        value=format_value(value),
        what=what,
        file=where.file,
        line=where.line,
        key=where.key,
        path=where.path,
    )


def format_value(value: object) -> str:
    """A value as a user reads it: sets as ``{3,4}``, ``None`` as ``missing``.

    >>> format_value(frozenset({4, 3})), format_value(None), format_value(200.0)
    ('{3,4}', 'missing', '200')
    """
    if value is None:
        return "missing"
    if isinstance(value, frozenset | set):
        return "{" + ",".join(str(v) for v in sorted(value)) + "}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


K = TypeVar("K")


def grouped(
    ports: Iterable[PortConfig], key: Callable[[PortConfig], K]
) -> list[tuple[K, list[PortConfig]]]:
    """Ports grouped by ``key`` (in first-seen order), so that one finding names many ports."""
    groups: dict[K, list[PortConfig]] = {}
    for port in ports:
        groups.setdefault(key(port), []).append(port)
    return list(groups.items())


def sort_findings(findings: Iterable[LintFinding]) -> list[LintFinding]:
    """Errors first, then by rule, device and setting."""
    return sorted(
        findings,
        key=lambda f: (SEVERITY_ORDER[f.severity], f.rule, f.device, f.setting),
    )
