"""Front panels of the catalog switches and the port names their operating systems use.

:func:`port_names` turns a switch's port mode (64 x 400G on a 32-cage twin-port box, 128 x 400G
on a 64-cage box broken out 2 ways...) into the names the chosen OS prints, so that a cut sheet,
an LLDP table and a switch configuration name the same port the same way.

>>> panel = front_panel("qm9700")
>>> port_names(panel, 64, "mlnx-os")[:3], port_names(panel, 128, "mlnx-os")[:3]
(('1/1/1', '1/1/2', '1/2/1'), ('1/1/1/1', '1/1/1/2', '1/1/2/1'))
>>> port_names(front_panel("sn5600"), 128, "cumulus")[:3]
('swp1s0', 'swp1s1', 'swp2s0')
>>> port_names(front_panel("ufispace-s9321-64e"), 64, "sonic")[:2]
('Ethernet0', 'Ethernet8')
>>> port_names(front_panel("ufispace-s9321-64e"), 128, "eos")[:3]
('Ethernet1/1', 'Ethernet1/5', 'Ethernet2/1')
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from fabricplan.catalog.loader import parse_entries
from fabricplan.errors import CatalogError
from fabricplan.model.front_panel import FrontPanelSpec, PortNamingSpec, SwitchOs

FRONT_PANEL_FILE = "front_panels.yaml"

GENERIC_PORT_TEMPLATE = "port{port}"
"""Port names for a switch the catalog has no front panel for (a user's generic switch)."""


@lru_cache(maxsize=1)
def _panels() -> dict[str, FrontPanelSpec]:
    text = resources.files("fabricplan.catalog").joinpath("data", FRONT_PANEL_FILE).read_text()
    entries = parse_entries(text, FrontPanelSpec, FRONT_PANEL_FILE)  # type: ignore[type-var]
    return {entry.switch: entry for entry in entries}


def front_panel(switch_id: str) -> FrontPanelSpec | None:
    """The front panel of a catalog switch, or ``None`` when the catalog has none.

    >>> front_panel("sn5600").cages, front_panel("no-such-switch") is None
    (64, True)
    """
    return _panels().get(switch_id)


def front_panel_ids() -> tuple[str, ...]:
    """Switch ids with a front panel in the catalog."""
    return tuple(_panels())


def port_names(
    panel: FrontPanelSpec | None, ports: int, os: SwitchOs | None = None
) -> tuple[str, ...]:
    """The names of ``ports`` logical ports of a box (its port mode), in front-panel order.

    Parameters
    ----------
    panel
        The front panel (``None``: generic names ``port1``, ``port2``, ...).
    ports
        Logical ports of the mode in use (64 at 800G, 128 at 400G on a 64-cage box).
    os
        The OS whose names to use; ``None`` for the panel's first OS.

    Raises
    ------
    CatalogError
        FP1230 when the mode does not divide evenly over the cages, or the OS has no naming for
        this box.
    """
    if panel is None:
        return tuple(GENERIC_PORT_TEMPLATE.format(port=i + 1) for i in range(ports))
    naming = next((n for n in panel.namings if os is None or n.os == os), None)
    if naming is None:
        raise CatalogError(
            "FP1230",
            f"front panel {panel.switch}",
            "no port names for this OS",
            os,
            f"use one of {', '.join(panel.oses)}",
        )
    per_cage, rest = divmod(ports, panel.cages)
    native = panel.native_ports_per_cage
    if rest or per_cage < native or per_cage % native:
        raise CatalogError(
            "FP1230",
            f"front panel {panel.switch}",
            f"{ports} ports do not divide over {panel.cages} cages",
            ports,
            "use a port mode of the switch",
        )
    return _named(panel, naming, ports, per_cage, 0)


def fabric_port_names(
    panel: FrontPanelSpec, ports: int, os: SwitchOs | None = None
) -> tuple[str, ...]:
    """The names of a scheduled-fabric leaf's ``ports`` fabric ports, on its fabric cages.

    The fabric cages follow the host cages (``panel.fabric_cages``, see
    :attr:`~fabricplan.model.front_panel.FrontPanelSpec.fabric_naming_basis`).

    >>> panel = front_panel("arista-7700r4c-38pe")
    >>> fabric_port_names(panel, 20)[:2], fabric_port_names(panel, 40)[-1]
    (('Ethernet19/1', 'Ethernet20/1'), 'Ethernet38/5')

    Raises
    ------
    CatalogError
        FP1230 when the box has no fabric cages, the mode does not divide over them, or the OS
        has no naming for the box.
    """
    naming = next((n for n in panel.namings if os is None or n.os == os), None)
    per_cage, rest = divmod(ports, panel.fabric_cages) if panel.fabric_cages else (0, 1)
    if naming is None or rest or per_cage < panel.native_ports_per_cage:
        raise CatalogError(
            "FP1230",
            f"front panel {panel.switch}",
            f"no names for {ports} fabric ports on {panel.fabric_cages} fabric cages in {os}",
            ports,
            "use a scheduled-fabric leaf's fabric port mode",
        )
    return _named(panel, naming, ports, per_cage, panel.cages)


def _named(
    panel: FrontPanelSpec, naming: PortNamingSpec, ports: int, per_cage: int, first_cage0: int
) -> tuple[str, ...]:
    """``ports`` names, ``per_cage`` to a cage, from cage ``first_cage0 + 1`` on."""
    native = panel.native_ports_per_cage
    template = naming.native if per_cage == native else naming.split
    lanes_per_port = max(panel.lanes_per_cage // per_cage, 1)
    splits = per_cage // native
    names = []
    for index in range(ports):
        cage0, sub = divmod(index, per_cage)
        cage0 += first_cage0
        native_sub, split_sub = divmod(sub, splits)
        names.append(
            template.format(
                cage=cage0 + 1,
                sub=sub,
                sub1=sub + 1,
                nsub1=native_sub + 1,
                ssub=split_sub,
                ssub1=split_sub + 1,
                lane=cage0 * panel.lanes_per_cage + sub * lanes_per_port,
                cage_lane1=sub * lanes_per_port + 1,
                port=index + 1,
            )
        )
    return tuple(names)
