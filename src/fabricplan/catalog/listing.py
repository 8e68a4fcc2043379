"""The catalog as rows and records: what ``catalog list``/``show`` print and the web app serves.

>>> from fabricplan.catalog.loader import load_catalog
>>> [r["id"] for r in list_records(load_catalog(), "technology")]
['infiniband', 'roce_v2', 'roce_v1', 'spectrum_x', 'ddc', 'uec']
"""

from __future__ import annotations

from typing import Any

from fabricplan.catalog.loader import Catalog
from fabricplan.model.hardware import (
    CableSpec,
    CatalogItem,
    Figure,
    NicSpec,
    NodeSpec,
    PriceEntry,
    SwitchSpec,
)


def figure_number(value: float) -> str:
    if value >= 1e5 and value.is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


def figure_text(figure: Figure) -> str:
    text = f"{figure_number(figure.value)} ({figure.basis}"
    if figure.note:
        text += f": {figure.note}"
    if figure.source:
        text += f"; source: {figure.source}"
    return text + ")"


def summary(item: CatalogItem) -> str:
    """The few figures that tell entries of one kind apart, in one line.

    Examples
    --------
    >>> from fabricplan.catalog.loader import load_catalog
    >>> summary(load_catalog().get("qm9700"))
    '64x400G, 128x200G; 25.6 Tb/s; 130 ns; 750 W'
    >>> summary(load_catalog().get("dac-400g"))
    'dac 400G <= 3 m; 0.2 W per link'
    """
    n = figure_number
    if isinstance(item, SwitchSpec):
        modes = ", ".join(f"{m.ports}x{n(m.speed_gbps)}G" for m in item.port_modes)
        return (
            f"{modes}; {n(item.capacity_tbps.value)} Tb/s; {n(item.latency_ns.value)} ns;"
            f" {n(item.power_w.value)} W"
        )
    if isinstance(item, NicSpec):
        ports = f"{item.ports} x " if item.ports > 1 else ""
        families = "+".join("IB" if f == "infiniband" else "Eth" for f in item.families)
        return f"{ports}{n(item.speed_gbps)}G {families}; {n(item.power_w.value)} W"
    if isinstance(item, CableSpec):
        return (
            f"{item.cable_kind} {n(item.speed_gbps)}G <= {n(item.max_reach_m)} m;"
            f" {n(item.power_w.value)} W per link"
        )
    if isinstance(item, NodeSpec):
        return (
            f"{item.gpus_per_node} x {item.gpu}; {n(item.dense_bf16_tflops.value)} TFLOPS BF16;"
            f" NVLink domain {item.nvlink_domain_gpus}; NIC {item.default_nic}"
        )
    return (
        f"{item.link_flow_control} / {item.congestion_control} / {item.routing};"
        f" {figure_number(item.header_bytes.value)} B header"
    )


def list_record(item: CatalogItem, price: PriceEntry | None) -> dict[str, Any]:
    """One row of ``catalog list --format json``.

    Examples
    --------
    >>> from fabricplan.catalog.loader import load_catalog
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
    >>> from fabricplan.catalog.loader import load_catalog
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
    >>> from fabricplan.catalog.loader import load_catalog
    >>> [r["id"] for r in list_records(load_catalog(), "technology")]
    ['infiniband', 'roce_v2', 'roce_v1', 'spectrum_x', 'ddc', 'uec']
    """
    return [
        list_record(item, catalog.price(item.id))
        for item in catalog
        if kind is None or item.kind == kind
    ]


__all__ = ["figure_text", "list_record", "list_records", "show_record", "summary"]
