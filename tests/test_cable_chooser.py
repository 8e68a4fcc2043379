"""The cable chooser is made once per catalog tuple and price book, and its memo never hands
one price book's answer to another: the answers are those of a chooser made afresh."""

from __future__ import annotations

from fabricplan.model.hardware import PriceEntry
from fabricplan.spec import parse_spec
from fabricplan.topology.cable import cable_chooser, cable_for

LENGTHS = (1.0, 2.5, 3.0, 7.0, 30.0, 50.0, 100.0, 150.0, 500.0, 2000.0)


def test_the_kept_chooser_answers_as_cable_for() -> None:
    valid = parse_spec({"cluster": {"gpus": 256}})
    for host_end in (True, False):
        first = cable_chooser(valid.cables, valid.prices, 400, host_end, 2)
        assert cable_chooser(valid.cables, valid.prices, 400, host_end, 2) is first
        for length in LENGTHS * 2:  # the second pass answers from the kept lengths
            assert first(length) == cable_for(valid.cables, valid.prices, 400, length, host_end, 2)


def test_another_price_book_is_another_chooser() -> None:
    """The same catalog with the cheapest short cable made dear: the kept chooser of the first
    price book must not answer for the second."""
    valid = parse_spec({"cluster": {"gpus": 256}})
    cheap = cable_chooser(valid.cables, valid.prices, 400, True, 2)(2.0)
    assert cheap is not None
    dear = dict(valid.prices)
    dear[cheap.id] = PriceEntry(item=cheap.id, price_usd=1e9, basis="estimate")
    other = cable_chooser(valid.cables, dear, 400, True, 2)(2.0)
    assert other is not None and other.id != cheap.id
    assert other == cable_for(valid.cables, dear, 400, 2.0, True, 2)
    assert cable_chooser(valid.cables, valid.prices, 400, True, 2)(2.0) == cheap
