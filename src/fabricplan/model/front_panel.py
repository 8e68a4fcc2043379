"""A switch model's front panel: its cages and the names its operating systems give the ports.

Kept apart from :class:`~fabricplan.model.hardware.SwitchSpec` so that the port names of a model
(which only the export files need) live beside their own source.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen

SwitchOs = Literal["mlnx-os", "cumulus", "sonic", "eos"]
"""Operating systems whose port names the catalog knows (``mlnx-os`` covers NVIDIA's InfiniBand
switch OS; ``cumulus`` is Cumulus Linux, configured with NVUE)."""


class PortNamingSpec(Frozen):
    """How one OS names the ports of one switch model.

    Templates are :meth:`str.format` strings over ``cage`` (1-based), ``sub``/``sub1`` (port in
    the cage, 0/1-based), ``nsub1`` (native port of the cage, 1-based), ``ssub``/``ssub1`` (split
    of that native port), ``lane`` (first SerDes lane of the port, 0-based over the box),
    ``cage_lane1`` (first lane in the cage, 1-based) and ``port`` (logical port, 1-based).
    """

    os: SwitchOs
    native: str
    """Template when a cage carries its native number of ports."""
    split: str
    """Template when the cages are split into more, slower ports (breakout)."""
    source: str = Field(min_length=3)


class SonicPgProfileSpec(Frozen):
    """A lossless PG profile a SONiC platform ships (``pg_profile_lookup.ini``), for the ASICs
    whose headroom SONiC does not compute (Broadcom)."""

    speed_gbps: float = Field(gt=0)
    cable_length_m: float = Field(gt=0)
    """Longest cable the profile is listed for."""
    size_bytes: int = Field(ge=0)
    xon_bytes: int = Field(ge=0)
    xoff_bytes: int = Field(gt=0)
    xon_offset_bytes: int = Field(ge=0)
    source: str = Field(min_length=3)
    basis: Literal["vendor", "estimate"] = "vendor"
    """``vendor``: the platform's own file; ``estimate``: another platform's profile stands in
    (``note`` says which and why)."""
    note: str = ""


class FrontPanelSpec(Frozen):
    """The cages of a switch model and its port names per OS (first OS = the default one)."""

    switch: str
    """Catalog id of the switch."""
    cages: int = Field(gt=0)
    connector: str
    native_ports_per_cage: int = Field(gt=0)
    """Logical ports of one cage at the native mode (2 for twin-port OSFP)."""
    lanes_per_cage: int = Field(gt=0)
    namings: tuple[PortNamingSpec, ...] = Field(min_length=1)
    source: str = Field(min_length=3)
    date: str = Field(pattern=r"^\d{4}(-\d{2}){0,2}$")
    part_number: str = ""
    """Vendor orderable part number of the switch, where one was found (else empty)."""
    netbox_manufacturer: str = ""
    netbox_model: str = ""
    """Manufacturer and model of the box in the NetBox device-type library, where it has one
    (the export's NetBox devices then match an imported device type)."""
    sonic_pg_profiles: tuple[SonicPgProfileSpec, ...] = ()
    """The SONiC platform's own lossless profiles, where the box's ASIC has no SONiC headroom
    formula (Broadcom); empty otherwise."""
    note: str = ""
    sonic_platform: str = ""
    """The box's SONiC platform name (``DEVICE_METADATA.platform``), where a source names it."""
    sonic_pool_bytes: int = Field(default=0, ge=0)
    """The SONiC ingress lossless pool of the platform, for a box whose switch entry has no
    buffer figure (0: use the switch's ``buffer_bytes``); ``sonic_pool_basis`` says whence."""
    sonic_pool_basis: str = ""
    fabric_cages: int = Field(default=0, ge=0)
    """Cages of a scheduled-fabric leaf that carry cells to the fabric elements, numbered after
    the host cages (``cages + 1`` ...) and named by the same templates; 0 on other boxes."""
    fabric_naming_basis: str = ""
    """Why the fabric cages are named as they are (a source, or an estimate and its basis)."""

    @property
    def oses(self) -> tuple[SwitchOs, ...]:
        return tuple(naming.os for naming in self.namings)
