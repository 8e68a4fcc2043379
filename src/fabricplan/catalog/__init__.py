"""The hardware catalog (data/*.yaml, every figure with its source and date) and the
resolver that turns a :class:`~fabricplan.model.scenario.ScenarioSpec` into a
:class:`~fabricplan.model.scenario.ValidScenario`."""

from fabricplan.catalog.loader import Catalog, load_catalog, load_price_book

__all__ = ["Catalog", "load_catalog", "load_price_book"]
