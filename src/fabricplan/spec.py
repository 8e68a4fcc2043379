"""Read a cluster spec (YAML file, text or dict) and resolve it against the catalog.

This is the one place that checks input: what it returns, a
:class:`~fabricplan.model.scenario.ValidScenario`, is trusted by everything after it.

>>> valid = parse_spec({"cluster": {"gpus": 1024}})
>>> valid.switches["infiniband"].id, valid.nics["roce_v2"].id
('qm9700', 'cx7')
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from fabricplan.catalog.loader import Catalog, load_catalog, load_price_book
from fabricplan.errors import CatalogError, SpecError
from fabricplan.input_file import FileKind, load_yaml, read_text
from fabricplan.model.hardware import (
    CableSpec,
    Figure,
    NicSpec,
    PortMode,
    PriceEntry,
    SwitchSpec,
    TechnologySpec,
)
from fabricplan.model.scenario import (
    GenericNicSpec,
    GenericSwitchSpec,
    ScenarioSpec,
    TechnologyName,
    ValidScenario,
    deployed_technology,
)
from fabricplan.units import gbps_to_tbps

__all__ = [
    "USER_SOURCE",
    "load_spec",
    "load_spec_file",
    "parse_spec",
    "read_spec",
    "replace_spec",
    "resolve",
]

USER_SOURCE = "given in the cluster spec"


def _is_union_tag(part: str) -> bool:
    """Pydantic names union branches in error locations (``literal[...]``, ``PriorityWeights``)."""
    return (
        "[" in part
        or part.startswith(("function-", "constrained-"))
        or part[:1].isupper()
        or part in {"str", "int", "float", "bool"}
    )


def _pydantic_error(exc: ValidationError, origin: str) -> SpecError:
    """One line naming the field, the value and the fix, from pydantic's first error."""
    errors = exc.errors()
    # A union (e.g. preset name | weights) reports one error per branch: keep the branch that
    # matches the kind of value given.
    mismatched = {
        "literal_error",
        "string_type",
        "model_type",
        "dict_type",
        "model_attributes_type",
    }
    err = next(
        (
            e
            for e in errors
            if not (e["type"] in mismatched and any(_is_union_tag(str(p)) for p in e["loc"]))
        ),
        errors[0],
    )
    loc = ".".join(str(p) for p in err["loc"] if not _is_union_tag(str(p)))
    where = f"{origin}: {loc}" if loc else origin
    kind = err["type"]
    value = err.get("input")
    msg = str(err["msg"])
    if kind == "extra_forbidden":
        return SpecError("FP102", where, "unknown key", None, "remove it or check its spelling")
    if kind == "missing":
        return SpecError("FP103", where, "is required", None, "add it to the spec")
    if kind == "value_error":
        # Our own validators already phrase "field: what (value); fix".
        text = msg.removeprefix("Value error, ")
        field, _, rest = text.partition(": ")
        what, _, fix = rest.partition("; ")
        return SpecError("FP101", f"{origin}: {field}", what, None, fix)
    if kind in {"literal_error", "enum"}:
        expected = err.get("ctx", {}).get("expected", "")
        return SpecError(
            "FP104", where, "is not one of the allowed values", value, f"use {expected}"
        )
    strict = _strict_type_error(kind, value, where)
    if strict is not None:
        return strict
    shown = value if isinstance(value, str | int | float | bool) else type(value).__name__
    return SpecError("FP105", where, msg.lower(), shown, "fix the value")


NUMBER_TYPES = {"int_type": "a whole number", "float_type": "a number"}
"""Pydantic's strict-number error types (``model/base.py`` makes every number field strict)."""


def _reads_as_number(text: str) -> bool:
    """Whether ``text`` is a finite number in quotes (``"12"``, ``" 1e3 "``)."""
    try:
        number = float(text)
    except ValueError:
        return False
    return number - number == 0


def _strict_type_error(kind: str, value: Any, where: str) -> SpecError | None:
    """The message for a value the strict number and bool fields refuse: a quoted number
    (FP1412), a true/false or a fraction for a number (FP105), anything but true/false for a
    flag (FP1413). None for any other error (other text for a number stays FP105)."""
    if kind == "bool_type":
        shown = value if isinstance(value, str | int | float) else type(value).__name__
        return SpecError("FP1413", where, "is not true or false", shown, "write true or false")
    wanted = NUMBER_TYPES.get(kind)
    if wanted is None:
        return None
    if isinstance(value, bool):
        return SpecError("FP105", where, f"a true/false is not {wanted}", value, "write the number")
    if isinstance(value, str) and _reads_as_number(value):
        return SpecError(
            "FP1412",
            where,
            f"is a number in quotes (text, where {wanted} goes)",
            value,
            "write the number without quotes",
        )
    if isinstance(value, float):
        return SpecError("FP105", where, "is not a whole number", value, "write a whole number")
    return None


SPEC_FILE = FileKind("spec", SpecError, "FP108", yaml_code="FP106", fix="check the path")
"""A cluster spec: UTF-8 YAML of at most 16 MiB (a 100k-GPU spec is a few kB)."""


def _read_yaml(text: str, origin: str) -> Any:
    return load_yaml(text, origin, SPEC_FILE)


SPEC_NUMBER_LIMIT = 1e12
"""Largest magnitude of any number in a spec (no GPU count, price, length or rate of a cluster
comes near it): every field, including ones added later, is bounded by it before its own
range is checked, so no model downstream overflows on a 1e308 or a 400-digit integer."""


def _out_of_scale(value: Any) -> bool:
    """A number that is NaN or larger in magnitude than :data:`SPEC_NUMBER_LIMIT`."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return value != value or abs(value) > SPEC_NUMBER_LIMIT


def _check_magnitudes(data: Any, origin: str) -> None:
    """Refuse any number above :data:`SPEC_NUMBER_LIMIT` in magnitude, naming its key path."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend(((*path, str(i)), v) for i, v in enumerate(value))
        elif _out_of_scale(value):
            shown = value if isinstance(value, float) else f"a {value.bit_length()}-bit integer"
            raise SpecError(
                "FP105",
                f"{origin}: {'.'.join(path)}",
                "is not a finite number of a cluster's size",
                shown,
                f"use a value within ±{SPEC_NUMBER_LIMIT:g}",
            )


def read_spec(data: Any, origin: str = "spec") -> ScenarioSpec:
    """Validate the structure of a spec given as a mapping.

    Parameters
    ----------
    data
        The spec document (as YAML would load it).
    origin
        Where it came from, for error messages.

    Returns
    -------
    ScenarioSpec
        Every default filled in; catalog ids not yet resolved.

    Raises
    ------
    SpecError
        FP101-FP107 naming the field, the value and the fix.

    Examples
    --------
    >>> read_spec({"cluster": {"gpus": 64}}).cluster.nodes
    8
    """
    if not isinstance(data, dict):
        raise SpecError(
            "FP107",
            origin,
            "a spec is a mapping with at least 'cluster:'",
            None,
            "run `fabricplan init` for a starter spec",
        )
    _check_magnitudes(data, origin)
    try:
        return ScenarioSpec.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(exc, origin) from None


def load_spec_file(path: str | os.PathLike[str]) -> ScenarioSpec:
    """Read and validate a spec file's structure.

    Parameters
    ----------
    path
        A YAML file.

    Returns
    -------
    ScenarioSpec
        As :func:`read_spec` gives it.

    Raises
    ------
    SpecError
        FP108 when the file cannot be read, FP106 for invalid YAML, FP1xx for its content.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "spec.yaml"
    ...     _ = path.write_text("cluster: {gpus: 16}")
    ...     load_spec_file(path).cluster.gpus
    16
    """
    file = os.fspath(path)
    text = read_text(file, SPEC_FILE)
    return read_spec(_read_yaml(text, file), file)


def _generic_switch(
    tech: TechnologyName, tech_spec: TechnologySpec, given: GenericSwitchSpec
) -> SwitchSpec:
    def user(value: float) -> Figure:
        return Figure(value=value, basis="estimate", note="given by the user")

    ports, speed = given.ports, given.port_speed_gbps
    return SwitchSpec.model_validate(
        {
            "id": f"generic-{tech.replace('_', '-')}-switch",
            "name": f"Generic {ports}x{speed:g}G switch",
            "source": USER_SOURCE,
            "date": "2026",
            "family": tech_spec.switch_family,
            "port_modes": [PortMode(ports=ports, speed_gbps=speed)],
            "capacity_tbps": user(gbps_to_tbps(ports * speed)),
            "latency_ns": user(given.latency_ns),
            "buffer_bytes": user(given.buffer_bytes) if given.buffer_bytes else None,
            "power_w": user(given.power_w if given.power_w is not None else 0.0),
            "adaptive_routing": True,
            # A switch given by its figures does what the deployed technology asks of its links.
            "link_level_retry": tech_spec.link_level_retry,
            "credit_flow_control": needs_cbfc(tech_spec),
        }
    )


def _generic_nic(given: GenericNicSpec) -> NicSpec:
    return NicSpec.model_validate(
        {
            "id": "generic-nic",
            "name": f"Generic {given.speed_gbps:g}G NIC",
            "source": USER_SOURCE,
            "date": "2026",
            "families": ["infiniband", "ethernet"],
            "speed_gbps": given.speed_gbps,
            "latency_ns": Figure(
                value=given.latency_ns, basis="estimate", note="given by the user"
            ),
            "power_w": Figure(
                value=given.power_w or 0.0, basis="estimate", note="given by the user"
            ),
        }
    )


def switch_eligible(switch: SwitchSpec, tech: TechnologySpec) -> str | None:
    """Why ``switch`` cannot serve as ``tech``'s leaf switch, or ``None`` when it can.

    A fabric element (cell switch) is never a leaf; a scheduled-fabric leaf (one with fabric
    ports) serves only a technology with fabric elements and such a technology needs one; a
    technology with ``switch_asics`` takes only those ASICs.

    >>> from fabricplan.catalog.loader import load_catalog
    >>> catalog = load_catalog()
    >>> sx = catalog.get_typed("spectrum_x", TechnologySpec, "doc")
    >>> switch_eligible(catalog.get_typed("sn5600", SwitchSpec, "doc"), sx) is None
    True
    >>> switch_eligible(catalog.get_typed("ufispace-s9321-64e", SwitchSpec, "doc"), sx)
    'its ASIC Tomahawk 5 is not one spectrum_x needs (Spectrum-4)'
    """
    if switch.family != tech.switch_family:
        return f"it is an {switch.family} switch, but {tech.id} needs {tech.switch_family}"
    if switch.role == "fabric_element":
        return "it is a fabric element (a cell switch with no host ports), not a leaf"
    if tech.fabric_element_asics and not switch.fabric_port_modes:
        return f"{tech.id} needs a scheduled-fabric leaf with fabric ports"
    if switch.fabric_port_modes and not tech.fabric_element_asics:
        return (
            f"it is a scheduled-fabric leaf whose fabric ports only reach fabric elements;"
            f" {tech.id} has none"
        )
    if tech.link_level_retry and not switch.link_level_retry:
        return "it states no link-level retry (LLR), which fabric.uec.link_level_retry asks for"
    if needs_cbfc(tech) and not switch.credit_flow_control:
        return (
            "it states no credit-based flow control (CBFC), which"
            " fabric.uec.credit_flow_control asks for"
        )
    if tech.switch_asics and switch.asic not in tech.switch_asics:
        return (
            f"its ASIC {switch.asic or 'unknown'} is not one {tech.id} needs"
            f" ({', '.join(tech.switch_asics)})"
        )
    return None


def needs_cbfc(tech: TechnologySpec) -> bool:
    """Credit flow control on an Ethernet technology: UEC's CBFC, which the switches must run
    (InfiniBand's credits are every IB switch's).

    >>> from fabricplan.catalog.loader import load_catalog
    >>> needs_cbfc(load_catalog().get_typed("infiniband", TechnologySpec, "doc"))
    False
    """
    return tech.link_flow_control == "credit" and tech.switch_family == "ethernet"


def _link_features(tech: TechnologySpec) -> str:
    """The optional link features ``tech`` is deployed with, in words (empty when none)."""
    wanted = [
        name
        for name, on in (
            ("link-level retry (LLR)", tech.link_level_retry),
            ("credit-based flow control (CBFC)", needs_cbfc(tech)),
        )
        if on
    ]
    return " and ".join(wanted)


def _eligible_switches(
    catalog: Catalog, tech: TechnologySpec, speed_gbps: float
) -> list[SwitchSpec]:
    """Catalog switches that may be ``tech``'s leaves at ``speed_gbps``; for a technology that
    trims packets, only switches that trim when any does (the others are tried only when none
    fits)."""
    fitting = [
        s
        for s in catalog.of_kind(SwitchSpec)
        if switch_eligible(s, tech) is None and s.port_mode_for(speed_gbps) is not None
    ]
    if tech.packet_trimming and any(s.packet_trimming for s in fitting):
        fitting = [s for s in fitting if s.packet_trimming]
    return fitting


def _no_eligible_switch(tech: TechnologySpec, speed_gbps: float, origin: str) -> SpecError:
    features = _link_features(tech)
    if features:
        return SpecError(
            "FP661",
            f"{origin}: fabric.uec",
            f"no catalog {tech.switch_family} switch with {features} has {speed_gbps:g}G ports",
            None,
            "turn the feature off, change cluster.nic_speed_gbps, or give a generic switch's"
            f" figures in fabric.switch.{tech.id}",
        )
    needs = f" with ASIC {' or '.join(tech.switch_asics)}" if tech.switch_asics else ""
    code = "FP622" if tech.switch_asics or tech.fabric_element_asics else "FP110"
    return SpecError(
        code,
        f"{origin}: fabric.switch.{tech.id}",
        f"no catalog {tech.switch_family} switch{needs} has {speed_gbps:g}G ports",
        None,
        "change cluster.nic_speed_gbps, leave this technology out, or add such a switch to"
        " the catalog"
        if code == "FP622"
        else "name a switch or give a generic switch's figures",
    )


def _pick_switch(
    catalog: Catalog, tech: TechnologySpec, speed_gbps: float, origin: str
) -> SwitchSpec:
    """``auto``: the eligible catalog switch with the largest radix at the NIC speed (fewest
    tiers and switches), ties broken by the lower default price, then by id."""
    fitting = _eligible_switches(catalog, tech, speed_gbps)
    if not fitting:
        raise _no_eligible_switch(tech, speed_gbps, origin)

    def key(s: SwitchSpec) -> tuple[int, float, str]:
        mode = s.port_mode_for(speed_gbps)
        radix = mode.ports if mode else 0
        price = catalog.prices[s.id].price_usd if s.id in catalog.prices else float("inf")
        return (-radix, price, s.id)

    return min(fitting, key=key)


def _switch_candidates(
    catalog: Catalog, tech: TechnologySpec, speed_gbps: float
) -> tuple[SwitchSpec, ...]:
    """Every eligible catalog switch (:func:`switch_eligible`) with a port mode at
    ``speed_gbps`` (natively or as a breakout), largest radix first; the design search tries
    each."""
    fitting = _eligible_switches(catalog, tech, speed_gbps)

    def radix(s: SwitchSpec) -> int:
        mode = s.port_mode_for(speed_gbps)
        return mode.ports if mode else 0

    return tuple(sorted(fitting, key=lambda s: (-radix(s), s.id)))


def _pick_fabric_element(
    catalog: Catalog, tech: TechnologySpec, leaf: SwitchSpec, speed_gbps: float, origin: str
) -> SwitchSpec:
    """The fabric element of a scheduled fabric: a catalog ``fabric_element`` with one of
    ``tech.fabric_element_asics`` and ports at the leaf's fabric port speed (the leaf's fabric
    mode at the NIC speed, else its native one), largest radix first."""
    fabric_mode = leaf.fabric_port_mode_for(speed_gbps) or leaf.fabric_port_modes[0]
    fitting = [
        s
        for s in catalog.of_kind(SwitchSpec)
        if s.role == "fabric_element"
        and s.asic in tech.fabric_element_asics
        and s.port_mode_for(fabric_mode.speed_gbps) is not None
    ]
    if not fitting:
        raise SpecError(
            "FP624",
            f"{origin}: fabric.switch.{tech.id}",
            f"no catalog fabric element ({', '.join(tech.fabric_element_asics)}) has"
            f" {fabric_mode.speed_gbps:g}G ports for the fabric ports of {leaf.id}",
            None,
            "add such a fabric element to the catalog or choose another leaf",
        )

    def key(s: SwitchSpec) -> tuple[int, str]:
        mode = s.port_mode_for(fabric_mode.speed_gbps)
        return (-(mode.ports if mode else 0), s.id)

    return min(fitting, key=key)


def _pick_nic(
    catalog: Catalog, tech: TechnologySpec, speed_gbps: float, default_id: str, origin: str
) -> NicSpec:
    """``auto``: the node's default NIC if it fits, else the first catalog NIC of the family at
    the NIC speed; a technology with ``nics`` takes only those."""
    family = tech.switch_family
    candidates = [default_id] + [n.id for n in catalog.of_kind(NicSpec)]
    for nic_id in candidates:
        nic = catalog.get_typed(nic_id, NicSpec, f"{origin}: cluster.nic")
        if tech.nics and nic.id not in tech.nics:
            continue
        if family in nic.families and nic.speed_gbps == speed_gbps:
            return nic
    if tech.nics:
        speeds = sorted(
            {catalog.get_typed(n, NicSpec, f"{origin}: cluster.nic").speed_gbps for n in tech.nics}
        )
        raise SpecError(
            "FP623",
            f"{origin}: cluster.nic_speed_gbps",
            f"{tech.id} needs one of the NICs {', '.join(tech.nics)}, none of which runs at"
            " this speed",
            speed_gbps,
            f"use {' or '.join(f'{v:g}' for v in speeds)} or leave {tech.id} out",
        )
    raise SpecError(
        "FP111",
        f"{origin}: cluster.nic_speed_gbps",
        f"no catalog {family} NIC runs at this speed",
        speed_gbps,
        "use 100, 200, 400 or 800, or give cluster.nic as figures",
    )


def resolve(
    spec: ScenarioSpec, catalog: Catalog | None = None, origin: str = "spec"
) -> ValidScenario:
    """Resolve catalog ids, pick ``auto`` hardware and check what needs the catalog.

    Parameters
    ----------
    spec
        A structurally valid spec.
    catalog
        The catalog to resolve against (default: the shipped one).
    origin
        Where the spec came from, for error messages.

    Returns
    -------
    ValidScenario
        The spec with its node, NICs, switches, technologies, cables and prices resolved.

    Raises
    ------
    SpecError
        FP109-FP116 for catalog references that do not fit; FP620-FP624 for a switch or NIC the
        technology cannot use (see :func:`switch_eligible`) or none it can.

    Examples
    --------
    >>> resolve(read_spec({"cluster": {"gpus": 64}})).node.gpus_per_node
    8
    """
    catalog = catalog or load_catalog()
    from fabricplan.model.hardware import NodeSpec  # local: keeps the import list short

    assumptions: list[str] = []
    if spec.priorities == "ethernet_team" and "infiniband" not in spec.team.model_fields_set:
        spec = spec.model_copy(update={"team": spec.team.model_copy(update={"infiniband": "none"})})
        assumptions.append(
            "priorities ethernet_team: team.infiniband taken as none (not set in the spec); the"
            " staff and configuration-risk money follow from it"
        )
    cluster = spec.cluster
    try:
        node = catalog.get_typed(cluster.gpu, NodeSpec, f"{origin}: cluster.gpu")
    except CatalogError as exc:
        raise SpecError("FP109", exc.where, exc.what, exc.value, exc.fix) from None
    if node.gpus_per_node != cluster.gpus_per_node:
        assumptions.append(
            f"node {node.id} has {node.gpus_per_node} GPUs; the spec's gpus_per_node="
            f"{cluster.gpus_per_node} is used for the fabric"
        )
    technologies: dict[TechnologyName, TechnologySpec] = {}
    switches: dict[TechnologyName, SwitchSpec] = {}
    nics: dict[TechnologyName, NicSpec] = {}
    candidates: dict[TechnologyName, tuple[SwitchSpec, ...]] = {}
    fabric_elements: dict[TechnologyName, SwitchSpec] = {}
    speed = cluster.nic_speed_gbps
    for name in spec.fabric.technologies:
        tech = deployed_technology(
            catalog.get_typed(name, TechnologySpec, f"{origin}: fabric.technologies"),
            name,
            spec.fabric,
        )
        technologies[name] = tech
        features = _link_features(tech)
        if features:
            assumptions.append(
                f"{name}: {features} on every link (fabric.uec); the switches must state it,"
                " the NICs' ends of the host links are taken to run it too (no catalog NIC"
                " states it)"
            )
        choice = spec.fabric.switch.get(name, "auto")
        where = f"{origin}: fabric.switch.{name}"
        if isinstance(choice, GenericSwitchSpec):
            switch = _generic_switch(name, tech, choice)
        elif choice == "auto":
            switch = _pick_switch(catalog, tech, speed, origin)
            tried = _switch_candidates(catalog, tech, speed)
            candidates[name] = tried
            which = f"every eligible catalog {tech.switch_family} switch"
            if tech.switch_asics:
                which += f" with ASIC {' or '.join(tech.switch_asics)}"
            if tech.packet_trimming and all(s.packet_trimming for s in tried):
                which += " that trims packets"
            if features:
                which += f" with {features}"
            assumptions.append(
                f"{name}: switch auto -> the design search tries"
                f" {', '.join(s.id for s in tried)} ({which} with {speed:g}G ports); pin one"
                f" with fabric.switch.{name}"
            )
        else:
            try:
                switch = catalog.get_typed(choice, SwitchSpec, where)
            except CatalogError as exc:
                raise SpecError("FP109", exc.where, exc.what, exc.value, exc.fix) from None
            why = switch_eligible(switch, tech)
            if why is not None and switch.family == tech.switch_family:
                fitting = _switch_candidates(catalog, tech, speed)
                raise SpecError(
                    "FP620",
                    where,
                    f"{switch.id} cannot be a {name} switch: {why}",
                    choice,
                    f"use one of {', '.join(s.id for s in fitting)} or auto"
                    if fitting
                    else f"leave {name} out or use auto",
                )
        if isinstance(choice, GenericSwitchSpec) and tech.fabric_element_asics:
            raise SpecError(
                "FP620",
                where,
                f"a generic switch has no fabric ports, but {name} needs a scheduled-fabric leaf",
                None,
                "name a catalog leaf (e.g. arista-7700r4c-38pe) or auto",
            )
        if switch.family != tech.switch_family:
            raise SpecError(
                "FP112",
                where,
                f"{switch.id} is an {switch.family} switch, but {name} needs an"
                f" {tech.switch_family} switch",
                None,
                f"choose an {tech.switch_family} switch or 'auto'",
            )
        if switch.max_port_speed_gbps < speed:
            raise SpecError(
                "FP113",
                where,
                f"{switch.id} ports top out at {switch.max_port_speed_gbps:g}G, below"
                f" the NIC speed",
                speed,
                "choose a faster switch or lower cluster.nic_speed_gbps",
            )
        switches[name] = switch
        candidates.setdefault(name, (switch,))
        if tech.fabric_element_asics:
            fabric_elements[name] = _pick_fabric_element(catalog, tech, switch, speed, origin)
        sharp = spec.fabric.sharp
        if (
            isinstance(sharp, dict)
            and sharp.get(name) == "on"
            and not (
                tech.in_network_reduction and any(c.in_network_reduction for c in candidates[name])
            )
        ):
            raise SpecError(
                "FP701",
                f"{origin}: fabric.sharp.{name}",
                f"{switch.id} with {name} has no in-network reduction",
                "on",
                "use auto or off, or choose a switch with SHARP",
            )
        if isinstance(cluster.nic, GenericNicSpec):
            nics[name] = _generic_nic(cluster.nic)
        elif cluster.nic == "auto":
            nics[name] = _pick_nic(catalog, tech, speed, node.default_nic, origin)
        else:
            try:
                nic = catalog.get_typed(cluster.nic, NicSpec, f"{origin}: cluster.nic")
            except CatalogError as exc:
                raise SpecError("FP109", exc.where, exc.what, exc.value, exc.fix) from None
            if tech.nics and nic.id not in tech.nics:
                raise SpecError(
                    "FP621",
                    f"{origin}: cluster.nic",
                    f"{nic.id} cannot serve {name}, which needs one of {', '.join(tech.nics)}",
                    cluster.nic,
                    f"use one of {', '.join(tech.nics)}, auto, or leave {name} out of"
                    " fabric.technologies",
                )
            if tech.switch_family not in nic.families:
                raise SpecError(
                    "FP114",
                    f"{origin}: cluster.nic",
                    f"{nic.id} does not speak {tech.switch_family}, needed by {name}",
                    None,
                    "choose a NIC that does, or 'auto'",
                )
            if nic.speed_gbps < speed:
                raise SpecError(
                    "FP115",
                    f"{origin}: cluster.nic",
                    f"{nic.id} runs at {nic.speed_gbps:g}G, below cluster.nic_speed_gbps",
                    speed,
                    "lower nic_speed_gbps or choose a faster NIC",
                )
            nics[name] = nic
    lay = spec.layout
    per_rack = lay.nodes_per_rack
    racks = (
        f"{per_rack} nodes per rack"
        if isinstance(per_rack, int)
        else "nodes per rack auto (4 of up to 8 GPUs; a rack-scale NVLink domain fills its rack)"
    )
    assumptions.append(
        f"layout: {racks}, rows of {lay.row_length_racks} racks (auto: a square hall, 16-64"
        f" racks a row) {lay.rack_width_m:g} m wide,"
        f" {lay.row_pitch_m:g} m between rows, +{lay.tray_drop_m:g} m tray drop and"
        f" +{lay.slack_m:g} m slack per run, {lay.in_rack_m:g} m inside a rack; rail leaves in a"
        " network rack per scalable unit, spines in a central block (set layout: to change)"
    )
    prices: dict[str, PriceEntry] = dict(catalog.prices)
    if spec.cost.price_book:
        try:
            prices.update(load_price_book(spec.cost.price_book))
        except CatalogError as exc:
            # A book that cannot be read is the spec's FP116; one that is read keeps its own
            # code (FP204, FP207, FP208, FP211) and its file, line and item.
            code = "FP116" if exc.code == "FP209" else exc.code
            where = f"{origin}: cost.price_book: {exc.where}"
            kind = SpecError if code == "FP116" else CatalogError
            raise kind(code, where, exc.what, exc.value, exc.fix) from None
    for item, price in spec.cost.prices.items():
        prices[item] = PriceEntry(
            item=item, price_usd=price, basis="measured", note="price given in the spec"
        )
    for name, given in spec.fabric.switch.items():
        if isinstance(given, GenericSwitchSpec) and given.price_usd is not None:
            item = switches[name].id
            prices[item] = PriceEntry(
                item=item, price_usd=given.price_usd, basis="measured", note="given in the spec"
            )
    if isinstance(cluster.nic, GenericNicSpec) and cluster.nic.price_usd is not None:
        prices["generic-nic"] = PriceEntry(
            item="generic-nic",
            price_usd=cluster.nic.price_usd,
            basis="measured",
            note="given in the spec",
        )
    return ValidScenario(
        spec=spec,
        node=node,
        nics=nics,
        switches=switches,
        technologies=technologies,
        prices=prices,
        cables=tuple(catalog.of_kind(CableSpec)),
        switch_candidates=candidates,
        fabric_elements=fabric_elements,
        assumptions=tuple(assumptions),
    )


def parse_spec(data: dict[str, Any], origin: str = "spec") -> ValidScenario:
    """Validate and resolve a spec given as a mapping.

    Parameters
    ----------
    data
        The spec document.
    origin
        Where it came from, for error messages.

    Returns
    -------
    ValidScenario
        What everything after the input edge trusts.

    Examples
    --------
    >>> parse_spec({"cluster": {"gpus": 256}}).spec.fabric.technologies
    ('infiniband', 'roce_v2')
    """
    return resolve(read_spec(data, origin), origin=origin)


def spec_mapping(text: str, origin: str = "spec") -> Any:
    """The data of a spec's YAML text, unchecked (FP106 when it is not YAML).

    >>> spec_mapping("cluster: {gpus: 64}")
    {'cluster': {'gpus': 64}}
    """
    return _read_yaml(text, origin)


def parse_spec_text(text: str, origin: str = "spec") -> ValidScenario:
    """Validate and resolve a spec given as YAML text (``origin`` names it in messages).

    >>> parse_spec_text("cluster: {gpus: 64}").spec.cluster.gpus
    64
    """
    return resolve(read_spec(_read_yaml(text, origin), origin), origin=origin)


def load_spec(path: str | os.PathLike[str]) -> ValidScenario:
    """Validate and resolve a spec file.

    Parameters
    ----------
    path
        A YAML file.

    Returns
    -------
    ValidScenario
        As :func:`parse_spec` gives it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "spec.yaml"
    ...     _ = path.write_text("cluster: {gpus: 16}")
    ...     load_spec(path).spec.cluster.nodes
    2
    """
    return resolve(load_spec_file(path), origin=str(path))


def replace_spec(valid: ValidScenario, data: dict[str, Any], origin: str = "spec") -> ValidScenario:
    """``valid`` with its spec replaced by ``data``, checked again; the resolved hardware,
    prices and assumptions are kept (a what-if on size or team, not a new catalog choice).

    Parameters
    ----------
    valid
        A resolved scenario.
    data
        A whole spec document (e.g. ``valid.spec.model_dump()`` with a field changed).
    origin
        Where the data came from, for error messages.

    Returns
    -------
    ValidScenario
        The same hardware under the new spec.

    Raises
    ------
    SpecError
        FP1xx when ``data`` is not a valid spec.

    Examples
    --------
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> data = valid.spec.model_dump()
    >>> data["cluster"]["gpus"] = 2048
    >>> replace_spec(valid, data).spec.cluster.nodes
    256
    """
    return valid.model_copy(update={"spec": read_spec(data, origin)})
