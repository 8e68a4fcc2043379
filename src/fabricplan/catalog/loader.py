"""Load the catalog and price books from YAML.

The catalog is read once per process (the files ship inside the package and are immutable; the
returned objects are frozen, so sharing them is safe).

>>> catalog = load_catalog()
>>> catalog.get("qm9700").kind
'switch'
>>> "h100" in catalog.ids("node")
True
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

from fabricplan.errors import CatalogError
from fabricplan.model.hardware import (
    CableSpec,
    CatalogItem,
    NicSpec,
    NodeSpec,
    PriceEntry,
    SwitchSpec,
    TechnologySpec,
)

_FILES = {
    "switches.yaml": SwitchSpec,
    "nics.yaml": NicSpec,
    "cables.yaml": CableSpec,
    "nodes.yaml": NodeSpec,
    "technologies.yaml": TechnologySpec,
}
PRICE_FILE = "prices.yaml"

T = TypeVar("T", SwitchSpec, NicSpec, CableSpec, NodeSpec, TechnologySpec)


class Catalog:
    """All catalog entries by id, with typed look-ups.

    Parameters
    ----------
    items
        The entries; ids must be unique.
    prices
        The default price book (estimates with their basis).
    """

    def __init__(self, items: list[CatalogItem], prices: dict[str, PriceEntry]) -> None:
        self._items: dict[str, CatalogItem] = {}
        for item in items:
            if item.id in self._items:
                raise CatalogError(
                    "FP201", f"catalog:{item.id}", "id used twice", None, "give each entry its own id"
                )
            self._items[item.id] = item
        self.prices = prices

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
            raise CatalogError("FP202", where, "no catalog entry with this id", item_id, hint) from None

    def get_typed(self, item_id: str, kind: type[T], where: str = "catalog") -> T:
        """The entry ``item_id``, which must be of class ``kind``."""
        item = self.get(item_id, where)
        if not isinstance(item, kind):
            ids = ", ".join(self.ids(kind.model_fields["kind"].default))
            raise CatalogError(
                "FP203", where, f"{item_id!r} is a {item.kind}, not a {kind.model_fields['kind'].default}",
                None, f"use one of: {ids}",
            )
        return item

    def of_kind(self, kind: type[T]) -> list[T]:
        """All entries of one class, in catalog order."""
        return [item for item in self._items.values() if isinstance(item, kind)]


def _read_yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise CatalogError(
            "FP204", f"{where}{line}", "not valid YAML", None, "fix the syntax at that line"
        ) from None


def _validation_message(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    return loc, err["msg"]


def parse_entries(text: str, model: type[T], where: str) -> list[T]:
    """Parse one catalog file's text into entries of ``model``."""
    data = _read_yaml(text, where)
    if not isinstance(data, list):
        raise CatalogError("FP205", where, "must be a list of entries", None, "start each entry with '- id:'")
    adapter = TypeAdapter(list[model])  # type: ignore[valid-type]
    try:
        return adapter.validate_python(data)  # type: ignore[no-any-return]
    except ValidationError as exc:
        loc, msg = _validation_message(exc)
        index = loc.split(".", 1)[0]
        entry_id = data[int(index)].get("id", index) if index.isdigit() else index
        raise CatalogError(
            "FP206", f"{where}:{entry_id}:{loc.split('.', 1)[-1]}", msg, None, "fix the entry"
        ) from None


def parse_price_book(text: str, where: str) -> dict[str, PriceEntry]:
    """Parse a price book: a list of ``{item, price_usd, basis, note, date}`` or a mapping
    ``item: price_usd`` (a user's own prices, basis ``user``-given, recorded as measured quotes).
    """
    data = _read_yaml(text, where)
    if isinstance(data, dict):
        data = [
            {"item": str(k), "price_usd": v, "basis": "measured", "note": "user price book"}
            for k, v in data.items()
        ]
    if not isinstance(data, list):
        raise CatalogError(
            "FP207", where, "a price book is a list of entries or a mapping item: price_usd", None,
            "write e.g. 'qm9700: 30000'",
        )
    try:
        entries = TypeAdapter(list[PriceEntry]).validate_python(data)
    except ValidationError as exc:
        loc, msg = _validation_message(exc)
        raise CatalogError("FP208", f"{where}:{loc}", msg, None, "fix the price entry") from None
    return {entry.item: entry for entry in entries}


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The catalog that ships with fabricplan."""
    root = resources.files("fabricplan.catalog") / "data"
    items: list[CatalogItem] = []
    for name, model in _FILES.items():
        items.extend(parse_entries((root / name).read_text(encoding="utf-8"), model, name))
    prices = parse_price_book((root / PRICE_FILE).read_text(encoding="utf-8"), PRICE_FILE)
    return Catalog(items, prices)


def load_price_book(path: str | Path) -> dict[str, PriceEntry]:
    """A user's price book from a YAML file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(
            "FP209", str(file), "cannot read the price book", exc.strerror, "check the path"
        ) from None
    return parse_price_book(text, str(file))
