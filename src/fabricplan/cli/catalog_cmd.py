"""``fabricplan catalog list|show|prices``: the hardware fabricplan knows, with sources and prices.

Every figure is shown with its basis (vendor, derived, estimate, standard, measured); every default
price is an estimate with the reason for it (see docs/catalog.md).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from fabricplan.catalog.loader import Catalog, load_catalog
from fabricplan.cli.guard import guarded
from fabricplan.model.hardware import (
    CableSpec,
    CatalogItem,
    Figure,
    NicSpec,
    NodeSpec,
    PriceEntry,
    SwitchSpec,
)


class Kind(StrEnum):
    switch = "switch"
    nic = "nic"
    cable = "cable"
    node = "node"
    technology = "technology"


class Format(StrEnum):
    table = "table"
    json = "json"


KindOpt = Annotated[Kind | None, typer.Option("--kind", "-k", help="Only entries of this kind.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="catalog",
        help="The hardware catalog: switches, NICs, cables, nodes, technologies, prices.",
        no_args_is_help=True,
    )
    group.command("list")(list_entries)
    group.command("show")(show_entry)
    group.command("prices")(list_prices)
    app.add_typer(group, name="catalog")


def _g(value: float) -> str:
    if value >= 1e5 and value.is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def _figure_text(figure: Figure) -> str:
    text = f"{_g(figure.value)} ({figure.basis}"
    if figure.note:
        text += f": {figure.note}"
    if figure.source:
        text += f"; source: {figure.source}"
    return text + ")"


def summary(item: CatalogItem) -> str:
    """The few figures that tell entries of one kind apart, in one line.

    Examples
    --------
    >>> summary(load_catalog().get("qm9700"))
    '64x400G, 128x200G; 25.6 Tb/s; 130 ns; 750 W'
    >>> summary(load_catalog().get("dac-400g"))
    'dac 400G <= 3 m; 0.2 W per link'
    """
    if isinstance(item, SwitchSpec):
        modes = ", ".join(f"{m.ports}x{_g(m.speed_gbps)}G" for m in item.port_modes)
        return (
            f"{modes}; {_g(item.capacity_tbps.value)} Tb/s; {_g(item.latency_ns.value)} ns;"
            f" {_g(item.power_w.value)} W"
        )
    if isinstance(item, NicSpec):
        ports = f"{item.ports} x " if item.ports > 1 else ""
        families = "+".join("IB" if f == "infiniband" else "Eth" for f in item.families)
        return f"{ports}{_g(item.speed_gbps)}G {families}; {_g(item.power_w.value)} W"
    if isinstance(item, CableSpec):
        return (
            f"{item.cable_kind} {_g(item.speed_gbps)}G <= {_g(item.max_reach_m)} m;"
            f" {_g(item.power_w.value)} W per link"
        )
    if isinstance(item, NodeSpec):
        return (
            f"{item.gpus_per_node} x {item.gpu}; {_g(item.dense_bf16_tflops.value)} TFLOPS BF16;"
            f" NVLink domain {item.nvlink_domain_gpus}; NIC {item.default_nic}"
        )
    return (
        f"{item.link_flow_control} / {item.congestion_control} / {item.routing};"
        f" {_g(item.header_bytes.value)} B header"
    )


def list_record(item: CatalogItem, price: PriceEntry | None) -> dict[str, Any]:
    """One row of ``catalog list --format json``.

    Examples
    --------
    >>> catalog = load_catalog()
    >>> row = list_record(catalog.get("cx7"), catalog.price("cx7"))
    >>> row["id"], row["kind"], row["price_basis"]
    ('cx7', 'nic', 'estimate')
    """
    return {
        "id": item.id,
        "kind": item.kind,
        "name": item.name,
        "source": item.source,
        "date": item.date,
        "summary": summary(item),
        "price_usd": price.price_usd if price else None,
        "price_basis": price.basis if price else None,
    }


def show_record(item: CatalogItem, price: PriceEntry | None) -> dict[str, Any]:
    """The whole entry (every figure with its value and basis) plus its default price.

    Examples
    --------
    >>> catalog = load_catalog()
    >>> record = show_record(catalog.get("qm9700"), catalog.price("qm9700"))
    >>> record["capacity_tbps"]["basis"], record["price"]["basis"]
    ('derived', 'estimate')
    """
    record = item.model_dump(mode="json")
    record["price"] = price.model_dump(mode="json") if price else None
    return record


def list_records(catalog: Catalog, kind: str | None = None) -> list[dict[str, Any]]:
    """:func:`list_record` for every entry, or every entry of one kind, in catalog order.

    Examples
    --------
    >>> [r["id"] for r in list_records(load_catalog(), "technology")]
    ['infiniband', 'roce_v2', 'roce_v1']
    """
    return [
        list_record(item, catalog.price(item.id))
        for item in catalog
        if kind is None or item.kind == kind
    ]


def _price_text(price: PriceEntry | None) -> str:
    if price is None:
        return "-"
    return f"{price.price_usd:,.0f} ({price.basis})"


@guarded
def list_entries(kind: KindOpt = None, fmt: FormatOpt = Format.table) -> None:
    """List catalog entries with their key figures, default price and date (JSON adds sources)."""
    rows = list_records(load_catalog(), kind.value if kind else None)
    if fmt is Format.json:
        typer.echo(json.dumps({"items": rows}, indent=2))
        return
    table = Table(
        title="fabricplan catalog",
        caption="sources and every figure's basis: fabricplan catalog show ID",
    )
    columns = ["id", "name", "figures", "price USD", "date"]
    if kind is None:
        columns.insert(1, "kind")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        price = "-" if row["price_usd"] is None else f"{row['price_usd']:,.0f}"
        cells = [row["id"], row["name"], row["summary"], price, row["date"]]
        if kind is None:
            cells.insert(1, row["kind"])
        table.add_row(*cells)
    Console().print(table)


@guarded
def show_entry(
    item_id: Annotated[str, typer.Argument(metavar="ID", help="A catalog id, e.g. qm9700.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Show one entry: every figure with its basis, its source, date and default price."""
    catalog = load_catalog()
    item = catalog.get(item_id, "catalog show")
    price = catalog.price(item.id)
    if fmt is Format.json:
        typer.echo(json.dumps(show_record(item, price), indent=2))
        return
    table = Table(title=f"{item.id}: {item.name}", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for field in type(item).model_fields:
        value = getattr(item, field)
        if value is None or value == "" or value == ():
            continue
        if isinstance(value, Figure):
            text = _figure_text(value)
        elif isinstance(item, SwitchSpec) and field == "port_modes":
            text = ", ".join(f"{m.ports} x {_g(m.speed_gbps)}G" for m in item.port_modes)
        elif isinstance(value, tuple):
            text = ", ".join(str(v) for v in value)
        else:
            text = str(value)
        table.add_row(field, text)
    price_text = _price_text(price)
    if price is not None and price.note:
        price_text += f": {price.note}"
    table.add_row("default price USD", price_text)
    Console().print(table)


@guarded
def list_prices(fmt: FormatOpt = Format.table) -> None:
    """List the default price book: every price is an estimate with its basis."""
    catalog = load_catalog()
    entries = [entry.model_dump(mode="json") for entry in catalog.prices.values()]
    if fmt is Format.json:
        typer.echo(json.dumps({"prices": entries}, indent=2))
        return
    table = Table(title="default price book (override with cost.price_book or cost.prices)")
    for column in ("item", "price USD", "basis", "note"):
        table.add_column(column, overflow="fold")
    for entry in catalog.prices.values():
        amount = (
            f"{entry.price_usd:.0%}/year"
            if entry.item.startswith("support-")
            else f"{entry.price_usd:,.0f}"
        )
        table.add_row(entry.item, amount, entry.basis, entry.note)
    Console().print(table)
