"""The lossless RoCE baseline for the box that was designed: its OS, its port names, its buffer.

The OS follows the switch model's front panel in the catalog: SONiC or EOS on Broadcom boxes,
NVUE (Cumulus) or SONiC on NVIDIA Spectrum boxes; asking for NVUE on a Broadcom box, or EOS on a
Spectrum box, is refused. Each role's ports carry the box's front-panel names at the design's
port mode (a 64-cage 800G box run at 400G has 128 ports named ``Ethernet0, Ethernet4...`` on
SONiC, ``Ethernet1/1, Ethernet1/5...`` on EOS, ``swp1s0, swp1s1...`` on Cumulus) in the order the
cut sheet cables them (host ports, then uplinks), with the box's SerDes lanes per port. The
shared buffer is the switch's catalog figure
(:func:`fabricplan.lint.baselines.generator.baseline_spec`).
"""

from __future__ import annotations

import dataclasses
import math

from fabricplan.catalog.front_panel import front_panel, port_names
from fabricplan.errors import InputFileError
from fabricplan.lint.baselines.generator import Vendor, baseline_spec, roce_baseline
from fabricplan.lint.headroom import HeadroomRecord, asic_buffer_spec, speed_scaled_headroom
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.front_panel import FrontPanelSpec, SwitchOs
from fabricplan.model.scenario import ValidScenario

VENDOR_BY_OS: dict[SwitchOs, Vendor] = {"sonic": "sonic", "cumulus": "nvue", "eos": "eos"}
"""The ``roce-config`` writer for each switch OS (NVUE is Cumulus Linux's configuration)."""


def config_os(design: FabricDesign, wanted: SwitchOs | None, option: str = "--os") -> SwitchOs:
    """The OS to configure: the one asked for if the box runs it, else the box's default
    (``option`` names what the user gave: ``--os``, or ``roce-config``'s ``--vendor``, which
    names the OS by its baseline flavour, NVUE for Cumulus).

    Raises
    ------
    InputFileError
        FP1224 when the box does not run the OS asked for (NVUE on a Broadcom box, EOS on a
        Spectrum box) or runs none the generator writes.
    """
    panel = front_panel(design.switch_id)
    oses = [
        os for os in (panel.oses if panel else ("sonic", "cumulus", "eos")) if os in VENDOR_BY_OS
    ]
    if not oses:
        raise InputFileError(
            "FP1224",
            "--os",
            f"{design.switch_id} runs no OS roce-config writes",
            None,
            "choose an Ethernet switch",
        )
    if wanted is None:
        return oses[0]
    if wanted not in oses:
        said: str = VENDOR_BY_OS.get(wanted, wanted) if option == "--vendor" else wanted
        names: list[str] = [VENDOR_BY_OS[o] if option == "--vendor" else o for o in oses]
        raise InputFileError(
            "FP1224",
            option,
            f"{design.switch_id} does not run {said}",
            said,
            f"use {' or '.join(names)} (NVUE runs on NVIDIA Spectrum boxes only)",
        )
    return wanted


def _platform_headroom(
    panel: FrontPanelSpec | None, speeds: list[float]
) -> tuple[tuple[tuple[float, float, HeadroomRecord], ...], list[str]]:
    """The SONiC platform profiles of a Broadcom box for every port speed of the design, and
    where each comes from: a listed speed takes its profile (the platform's own, or another
    platform's marked as an estimate), another speed the nearest listed speed's profile scaled
    by speed (:func:`~fabricplan.lint.headroom.speed_scaled_headroom`, an estimate)."""
    profiles = panel.sonic_pg_profiles if panel is not None else ()
    if not profiles:
        return (), []
    static: list[tuple[float, float, HeadroomRecord]] = []
    notes: dict[str, None] = {}
    listed = sorted({p.speed_gbps for p in profiles})
    for speed in speeds:
        nearest = min(listed, key=lambda s: (abs(math.log(s / speed)), s))
        for profile in profiles:
            if profile.speed_gbps != nearest:
                continue
            record = HeadroomRecord(profile.xon_bytes, profile.xoff_bytes, profile.size_bytes)
            basis = profile.source if profile.basis == "vendor" else f"estimate, {profile.note}"
            if nearest != speed:
                record = speed_scaled_headroom(record, nearest, speed)
                basis = f"{speed:g}G: estimate, the {nearest:g}G profile scaled by speed ({basis})"
            static.append((speed, profile.cable_length_m, record))
            notes[basis] = None
    return tuple(static), list(notes)


def roce_config_files(
    valid: ValidScenario, design: FabricDesign, wanted: SwitchOs | None = None, option: str = "--os"
) -> dict[str, str]:
    """Every file of the baseline for the designed box (see the module docstring).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "ufispace-s9321-64e"}}})
    >>> files = roce_config_files(valid, design_fabric(valid, "roce_v2"), "eos")
    >>> [line for line in files["eos-leaf.cfg"].splitlines() if line.startswith("interface")][:3]
    ['interface Ethernet1/1', 'interface Ethernet1/5', 'interface Ethernet2/1']
    """
    os = config_os(design, wanted, option)
    panel = front_panel(design.switch_id)
    names = port_names(panel, design.radix, os)
    spec = baseline_spec(valid, design)
    roles = []
    for role in spec.switch_roles:
        count = sum(group.count for group in role.port_groups)
        roles.append(dataclasses.replace(role, port_names=names[:count]))
    lanes = None
    if panel is not None:
        lanes = max(panel.lanes_per_cage * panel.cages // design.radix, 1)
    switch = valid.switches[design.technology]
    asic = switch.asic or "unknown ASIC"
    speeds = sorted({g.speed_gbps for role in roles for g in role.port_groups})
    static, static_notes = _platform_headroom(panel, speeds)
    buffer, buffer_note = spec.buffer_bytes, "the switch catalog's buffer"
    if switch.buffer_bytes is not None:
        buffer_note += f" ({switch.buffer_bytes.basis})"
    elif panel is not None and panel.sonic_pool_bytes:
        buffer, buffer_note = float(panel.sonic_pool_bytes), panel.sonic_pool_basis
    else:
        buffer_note = "no buffer figure for the box: the generator's SN5600 pool stands in"
    formula_asic = asic_buffer_spec(switch.asic)
    spec = dataclasses.replace(
        spec,
        switch_roles=tuple(roles),
        lanes_per_port=lanes,
        static_headroom=static,
        buffer_bytes=buffer,
        asic=formula_asic or spec.asic,
        sonic_platform=panel.sonic_platform if panel is not None else "",
    )
    files = roce_baseline(spec, VENDOR_BY_OS[os])
    if os != "sonic":
        headroom = f"{os} sizes the headroom of {asic} ports itself from the cable length"
    elif static:
        headroom = (
            f"headroom of {asic} ports from SONiC platform profiles: {'; '.join(static_notes)}"
        )
    elif formula_asic is not None:
        headroom = (
            f"headroom of {asic} ports from SONiC's Mellanox formula with the {formula_asic.name}"
            " ASIC_TABLE figures"
        )
    else:
        headroom = (
            f"no SONiC headroom figures of {asic} are in the catalog: the Spectrum-3 formula's"
            " figures stand in (an assumption; replace them with the platform's"
            " pg_profile_lookup.ini)"
        )
    files["baseline.md"] += (
        f"\nBox: {design.switch_id} ({asic}, {os}), {design.radix} ports at"
        f" {design.port_speed_gbps:g}G named as its front panel ({names[0]} ... {names[-1]}),"
        f" {lanes or 'default'} lanes per port; shared buffer"
        f" {f'{buffer:,.0f} B' if buffer else 'default'} from {buffer_note}; {headroom}.\n"
    )
    return files


def spec_roce_config_files(
    valid: ValidScenario, vendor: Vendor, origin: str = "spec"
) -> dict[str, str]:
    """``roce-config``'s files for the spec's RoCE fabric (``roce_v2``, else ``roce_v1``).

    FP420 when the spec names no RoCE technology. ``vendor`` is the baseline's flavour
    (``sonic``, ``nvue``, ``eos``), which picks the box's OS.

    >>> from fabricplan.spec import parse_spec
    >>> files = spec_roce_config_files(parse_spec({"cluster": {"gpus": 64}}), "sonic")
    >>> "host-nic-expected.txt" in files
    True
    """
    from fabricplan.topology.designer import design_fabric

    technology = next((t for t in ("roce_v2", "roce_v1") if t in valid.technologies), None)
    if technology is None:
        raise InputFileError(
            "FP420",
            f"{origin}: fabric.technologies",
            "names no RoCE technology",
            list(valid.technologies),
            "add roce_v2 to fabric.technologies",
        )
    box_os: dict[str, SwitchOs] = {"sonic": "sonic", "nvue": "cumulus", "eos": "eos"}
    if vendor not in box_os:
        raise InputFileError(
            "FP421", "--vendor", "unknown vendor", vendor, f"use one of {', '.join(box_os)}"
        )
    return roce_config_files(valid, design_fabric(valid, technology), box_os[vendor], "--vendor")
