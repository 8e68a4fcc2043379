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

from fabricplan.catalog.front_panel import front_panel, port_names
from fabricplan.errors import InputFileError
from fabricplan.lint.baselines.generator import Vendor, baseline_spec, roce_baseline
from fabricplan.lint.headroom import HeadroomRecord
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.front_panel import SwitchOs
from fabricplan.model.scenario import ValidScenario

VENDOR_BY_OS: dict[SwitchOs, Vendor] = {"sonic": "sonic", "cumulus": "nvue", "eos": "eos"}
"""The ``roce-config`` writer for each switch OS (NVUE is Cumulus Linux's configuration)."""


def config_os(design: FabricDesign, wanted: SwitchOs | None) -> SwitchOs:
    """The OS to configure: the one asked for if the box runs it, else the box's default.

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
        raise InputFileError(
            "FP1224",
            "--os",
            f"{design.switch_id} does not run {wanted}",
            wanted,
            f"use {' or '.join(oses)} (NVUE runs on NVIDIA Spectrum boxes only)",
        )
    return wanted


def roce_config_files(
    valid: ValidScenario, design: FabricDesign, wanted: SwitchOs | None = None
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
    os = config_os(design, wanted)
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
    static = tuple(
        (
            profile.speed_gbps,
            profile.cable_length_m,
            HeadroomRecord(profile.xon_bytes, profile.xoff_bytes, profile.size_bytes),
        )
        for profile in (panel.sonic_pg_profiles if panel is not None else ())
    )
    spec = dataclasses.replace(
        spec, switch_roles=tuple(roles), lanes_per_port=lanes, static_headroom=static
    )
    files = roce_baseline(spec, VENDOR_BY_OS[os])
    asic = valid.switches[design.technology].asic or "unknown ASIC"
    if os == "sonic" and static:
        sources = dict.fromkeys(p.source for p in panel.sonic_pg_profiles) if panel else {}
        headroom = (
            f"headroom of {asic} ports from the platform's own SONiC profiles"
            f" ({'; '.join(sources)}),"
            " the Mellanox formula only for speeds they do not list"
        )
    elif os == "sonic" and not asic.startswith("Spectrum"):
        headroom = (
            f"no SONiC headroom profile of {asic} is in the catalog: the Spectrum-3 formula's"
            " figures stand in (an assumption; replace them with the platform's"
            " pg_profile_lookup.ini)"
        )
    else:
        headroom = f"headroom as the {os} section above says for {asic}"
    files["baseline.md"] += (
        f"\nBox: {design.switch_id} ({asic}, {os}), {design.radix} ports at"
        f" {design.port_speed_gbps:g}G named as its front panel ({names[0]} ... {names[-1]}),"
        f" {lanes or 'default'} lanes per port; shared buffer from the catalog; {headroom}.\n"
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
    return roce_config_files(valid, design_fabric(valid, technology), box_os[vendor])
