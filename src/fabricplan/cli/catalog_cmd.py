"""``fabricplan catalog list|show|prices``: the hardware fabricplan knows, with sources and prices.

Every figure is shown with its basis (vendor, derived, estimate, standard, measured); every default
price is an estimate with the reason for it (see docs/catalog.md).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from fabricplan.cli.guard import guarded

if TYPE_CHECKING:  # the catalog, its models and rich are imported when a command runs
    from fabricplan.model.hardware import PriceEntry


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


def _price_text(price: PriceEntry | None) -> str:
    if price is None:
        return "-"
    return f"{price.price_usd:,.0f} ({price.basis})"


@guarded
def list_entries(kind: KindOpt = None, fmt: FormatOpt = Format.table) -> None:
    """List catalog entries with their key figures, default price and date (JSON adds sources)."""
    from rich.console import Console
    from rich.table import Table

    from fabricplan.catalog.listing import list_records
    from fabricplan.catalog.loader import load_catalog

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
    from rich.console import Console
    from rich.table import Table

    from fabricplan.catalog.listing import figure_number, figure_text, show_record
    from fabricplan.catalog.loader import load_catalog
    from fabricplan.model.hardware import Figure, SwitchSpec

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
            text = figure_text(value)
        elif isinstance(item, SwitchSpec) and field == "port_modes":
            text = ", ".join(f"{m.ports} x {figure_number(m.speed_gbps)}G" for m in item.port_modes)
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
    from rich.console import Console
    from rich.table import Table

    from fabricplan.catalog.loader import load_catalog

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
