"""Load the catalog and price books from YAML.

The catalog is read once per process (the files ship inside the package and are immutable; the
returned objects are frozen or read-only, so sharing them is safe). Every problem in a file is
reported with the file and the line it is at.

>>> catalog = load_catalog()
>>> catalog.get("qm9700").kind
'switch'
>>> "h100" in catalog.ids("node")
True
>>> catalog.price("qm9700").basis
'estimate'
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

from fabricplan.errors import CatalogError
from fabricplan.input_file import FileKind, load_yaml, read_text
from fabricplan.model.hardware import (
    CableSpec,
    CatalogItem,
    NicSpec,
    NodeSpec,
    OpticsSpec,
    PriceEntry,
    SwitchSpec,
    TechnologySpec,
)

PRICE_FILE = "prices.yaml"

USER_PRICE_NOTE = "user price book"
"""Note recorded on prices read from a user's ``item: price_usd`` mapping."""

T = TypeVar("T", SwitchSpec, NicSpec, CableSpec, NodeSpec, TechnologySpec)


class Catalog:
    """All catalog entries by id, with typed look-ups, and the default price book.

    Parameters
    ----------
    items
        The entries; ids must be unique.
    prices
        The default price book (estimates with their basis), by item.
    """

    def __init__(self, items: list[CatalogItem], prices: Mapping[str, PriceEntry]) -> None:
        self._items: dict[str, CatalogItem] = {}
        for item in items:
            if item.id in self._items:
                raise CatalogError(
                    "FP201",
                    f"catalog:{item.id}",
                    "id used twice",
                    None,
                    "give each entry its own id",
                )
            self._items[item.id] = item
        self.prices: Mapping[str, PriceEntry] = MappingProxyType(dict(prices))

    def __iter__(self) -> Iterator[CatalogItem]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def ids(self, kind: str | None = None) -> list[str]:
        """Ids of all entries, or of one kind (``switch``, ``nic``, ``cable``, ``node``, ...)."""
        return [i.id for i in self._items.values() if kind is None or i.kind == kind]

    def get(self, item_id: str, where: str = "catalog") -> CatalogItem:
        """The entry ``item_id``; a :class:`CatalogError` naming close matches if absent."""
        try:
            return self._items[item_id]
        except KeyError:
            close = difflib.get_close_matches(item_id, list(self._items), n=3)
            hint = f"did you mean {', '.join(close)}?" if close else "see `fabricplan catalog list`"
            raise CatalogError(
                "FP202", where, "no catalog entry with this id", item_id, hint
            ) from None

    def get_typed(self, item_id: str, kind: type[T], where: str = "catalog") -> T:
        """The entry ``item_id``, which must be of class ``kind``."""
        item = self.get(item_id, where)
        if not isinstance(item, kind):
            ids = ", ".join(self.ids(kind.model_fields["kind"].default))
            raise CatalogError(
                "FP203",
                where,
                f"{item_id!r} is a {item.kind}, not a {kind.model_fields['kind'].default}",
                None,
                f"use one of: {ids}",
            )
        return item

    def of_kind(self, kind: type[T]) -> list[T]:
        """All entries of one class, in catalog order."""
        return [item for item in self._items.values() if isinstance(item, kind)]

    def price(self, item: str) -> PriceEntry | None:
        """The default price of ``item`` (a catalog id or a price-only item), if the book has one.

        >>> load_catalog().price("no-such-item") is None
        True
        """
        return self.prices.get(item)


CATALOG_FILE = FileKind(
    "catalog file", CatalogError, "FP209", yaml_code="FP204", fix="check the path"
)
"""A catalog file or a price book: UTF-8 YAML of at most 16 MiB."""
PRICE_BOOK_FILE = FileKind(
    "price book", CatalogError, "FP209", yaml_code="FP204", fix="check the path"
)


def _read_yaml(text: str, where: str) -> Any:
    return load_yaml(text, where, CATALOG_FILE)


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (list indices and mapping keys), or of the
    deepest node on the way there that exists. A mapping key found last gives the key's line."""
    try:
        node: yaml.Node | None = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None if node is None else node.start_mark.line + 1
    for step in loc:
        if isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            if not 0 <= step < len(node.value):
                break
            node = node.value[step]
        elif isinstance(node, yaml.MappingNode):
            pairs = node.value
            if isinstance(step, int):  # a user's `item: price` mapping, read as a list
                if not 0 <= step < len(pairs):
                    break
                node = pairs[step][1]
            else:
                match = [(key, value) for key, value in pairs if key.value == step]
                if not match:
                    break
                line = match[0][0].start_mark.line + 1
                node = match[0][1]
                continue
        else:
            break
        line = node.start_mark.line + 1
    return line


def _where(file: str, line: int | None, label: str) -> str:
    return f"{file}:{line} {label}" if line is not None else f"{file} {label}"


def _shown(value: Any) -> Any:
    """The offending input if it is short enough to print, else ``None``."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 60):
        return value
    return None


def _first_error(exc: ValidationError) -> Any:
    """The error to report: an unknown key first (a typo also makes its intended key missing)."""
    errors = exc.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def parse_entries(text: str, model: type[T], where: str) -> list[T]:
    """Parse one catalog file's text into entries of ``model``.

    Parameters
    ----------
    text
        The YAML text: a list of entries.
    model
        The entry class (:class:`SwitchSpec`, :class:`NicSpec`, ...).
    where
        The file name, used in error messages.

    Raises
    ------
    CatalogError
        FP204 (not YAML), FP205 (not a list) or FP206 (an entry is invalid), naming the file,
        the line, the entry id and the field.

    Examples
    --------
    >>> text = "- {id: x, name: X, source: here, date: '2024', cable_kind: dac, speed_gbps: 400,"
    >>> text += " max_reach_m: 2, power_w: {value: 0.2, basis: vendor},"
    >>> text += " ns_per_m: {value: 4.5, basis: vendor}}"
    >>> parse_entries(text, CableSpec, "cables.yaml")[0].max_reach_m
    2.0
    """
    data = _read_yaml(text, where)
    if not isinstance(data, list):
        raise CatalogError(
            "FP205", where, "must be a list of entries", None, "start each entry with '- id:'"
        )
    adapter = TypeAdapter(list[model])  # type: ignore[valid-type]
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        err = _first_error(exc)
        loc = tuple(err["loc"])
        index = loc[0] if loc and isinstance(loc[0], int) else None
        entry = data[index] if index is not None else None
        entry_id = entry.get("id", f"entry {index}") if isinstance(entry, dict) else f"{index}"
        field = ".".join(str(p) for p in loc[1:]) or "entry"
        raise CatalogError(
            "FP206",
            _where(where, _line_of(text, loc), f"{entry_id}.{field}"),
            err["msg"],
            _shown(err.get("input")),
            "fix the entry",
        ) from None


def parse_price_book(text: str, where: str) -> dict[str, PriceEntry]:
    """Parse a price book.

    Two forms are accepted: the default book's list of ``{item, price_usd, basis, note, date}``,
    or a user's mapping ``item: price_usd`` (recorded with basis ``measured``: the user's quote).

    Raises
    ------
    CatalogError
        FP204 (not YAML), FP207 (neither a list nor a mapping), FP208 (an entry is invalid,
        with file and line) or FP211 (an item priced twice in the list form).

    Examples
    --------
    >>> book = parse_price_book("qm9700: 28000\\nsn5600: 41000", "my-prices.yaml")
    >>> book["qm9700"].price_usd, book["qm9700"].basis
    (28000.0, 'measured')
    """
    data = _read_yaml(text, where)
    if isinstance(data, dict):
        data = [
            {"item": str(k), "price_usd": v, "basis": "measured", "note": USER_PRICE_NOTE}
            for k, v in data.items()
        ]
        user_mapping = True
    else:
        user_mapping = False
    if not isinstance(data, list):
        raise CatalogError(
            "FP207",
            where,
            "a price book is a list of entries or a mapping item: price_usd",
            None,
            "write e.g. 'qm9700: 30000'",
        )
    try:
        entries = TypeAdapter(list[PriceEntry]).validate_python(data)
    except ValidationError as exc:
        err = _first_error(exc)
        loc = tuple(err["loc"])
        index = loc[0] if loc and isinstance(loc[0], int) else None
        entry = data[index] if index is not None else None
        item = entry.get("item", f"entry {index}") if isinstance(entry, dict) else f"{index}"
        field = "price_usd" if user_mapping else ".".join(str(p) for p in loc[1:]) or "entry"
        line_loc = loc[:1] if user_mapping else loc
        raise CatalogError(
            "FP208",
            _where(where, _line_of(text, line_loc), f"{item}.{field}"),
            err["msg"],
            _shown(err.get("input")),
            "fix the price entry",
        ) from None
    book: dict[str, PriceEntry] = {}
    for index, entry in enumerate(entries):
        if entry.item in book:
            raise CatalogError(
                "FP211",
                _where(where, _line_of(text, (index,)), entry.item),
                "item priced twice",
                None,
                "keep one price per item",
            )
        book[entry.item] = entry
    return book


def _check_references(catalog: Catalog) -> None:
    """Ids an entry names must exist and be of the right kind (a node's default NIC)."""
    for node in catalog.of_kind(NodeSpec):
        if node.default_nic not in catalog.ids("nic"):
            raise CatalogError(
                "FP210",
                f"nodes.yaml {node.id}.default_nic",
                "names no NIC in the catalog",
                node.default_nic,
                f"use one of: {', '.join(catalog.ids('nic'))}",
            )


def check_lanes(catalog: Catalog) -> None:
    """Every NIC's SerDes lane rate is served by some class of its speed, and a gearbox module
    converts: its lanes differ from the plain NIC-side module's.

    Raises
    ------
    CatalogError
        FP1235 (a NIC no class's NIC end matches) or FP1236 (a gearbox module that converts
        nothing, or one without a plain module), one line naming the file, entry and field.

    Examples
    --------
    >>> check_lanes(load_catalog()) is None
    True
    """
    cables = catalog.of_kind(CableSpec)
    for cable in cables:
        gear, plain = cable.host_gearbox_module, cable.host_module
        if gear is None:
            continue
        if plain is None or gear.lane_gbps == plain.lane_gbps:
            shown = None if plain is None else plain.lane_gbps
            raise CatalogError(
                "FP1236",
                f"cables.yaml {cable.id}.host_gearbox_module",
                "a gearbox module needs a host_module of other electrical lanes",
                shown,
                "give host_module and a gearbox of another lane_gbps, or drop the gearbox",
            )
    for nic in catalog.of_kind(NicSpec):
        if nic.lane_gbps is None:
            continue
        lanes = {min(nic.lane_gbps.value, nic.speed_gbps), *nic.slower_lanes_gbps}
        serving = [c for c in cables if c.speed_gbps == nic.speed_gbps and c.host_links]
        if not serving:
            continue  # no class of the speed at all: the designer says so (FP316)
        ends = {m.lane_gbps for c in serving for m in c.host_modules}
        ends |= {rate for c in serving if not c.composed for rate in (c.lane_gbps or lanes)}
        if not lanes & ends and None not in ends:
            rates = ", ".join(f"{r:g}G" for r in sorted(r for r in ends if r is not None))
            raise CatalogError(
                "FP1235",
                f"nics.yaml {nic.id}.lane_gbps",
                f"no {nic.speed_gbps:g}G cable class has a NIC end of this lane rate (they have"
                f" {rates})",
                nic.lane_gbps.value,
                "add a host_module or host_gearbox_module of these lanes to cables.yaml, or fix"
                " lane_gbps",
            )


def check_optics(catalog: Catalog) -> None:
    """Every module of a composed optic class states its optical side, and any two of a class
    link over the fibre (one class, one optical interface per link: a switch module is never
    paired with a NIC module of other optical lanes, e.g. an 800G DR8 of 8 x 100G with an 800G
    DR4 of 4 x 200G).

    Raises
    ------
    CatalogError
        FP1238 (a module without ``optics``) or FP1237 (two modules of a class whose optical
        sides differ), one line naming the file, class and module.

    Examples
    --------
    >>> check_optics(load_catalog()) is None
    True
    """
    slots = ("twin_module", "single_module", "quad_module", "host_module", "host_gearbox_module")
    for cable in catalog.of_kind(CableSpec):
        if not cable.composed:
            continue
        first: tuple[str, OpticsSpec] | None = None
        for slot in slots:
            module = getattr(cable, slot)
            if module is None:
                continue
            if module.optics is None:
                raise CatalogError(
                    "FP1238",
                    f"cables.yaml {cable.id}.{slot}",
                    "a module of a composed optic states no optical side",
                    module.item,
                    "add optics: {pmd, lanes, lane_gbps, fibre, connector} (per link)",
                )
            if first is None:
                first = (slot, module.optics)
            elif not module.optics.links_with(first[1]):
                raise CatalogError(
                    "FP1237",
                    f"cables.yaml {cable.id}.{slot}",
                    f"its optics cannot link with {first[0]}'s ({first[1].label()})",
                    module.optics.label(),
                    "give every module of a class the same optical side per link, or move the"
                    " module to a class of its own optics",
                )


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The catalog that ships with fabricplan (read once, then shared: it is read-only)."""
    root = resources.files("fabricplan.catalog") / "data"

    def text(name: str) -> str:
        return (root / name).read_text(encoding="utf-8")

    items: list[CatalogItem] = [
        *parse_entries(text("switches.yaml"), SwitchSpec, "switches.yaml"),
        *parse_entries(text("nics.yaml"), NicSpec, "nics.yaml"),
        *parse_entries(text("cables.yaml"), CableSpec, "cables.yaml"),
        *parse_entries(text("nodes.yaml"), NodeSpec, "nodes.yaml"),
        *parse_entries(text("technologies.yaml"), TechnologySpec, "technologies.yaml"),
    ]
    prices = parse_price_book(text(PRICE_FILE), PRICE_FILE)
    catalog = Catalog(items, prices)
    _check_references(catalog)
    check_lanes(catalog)
    check_optics(catalog)
    return catalog


def load_price_book(path: str | Path) -> dict[str, PriceEntry]:
    """A user's price book from a YAML file (see :func:`parse_price_book` for its forms)."""
    file = os.fspath(path)
    text = read_text(file, PRICE_BOOK_FILE)
    return parse_price_book(text, file)
