"""Unit conversions and size parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricplan import units


def test_line_rate_in_bytes() -> None:
    # 400 Gb/s is 50 GB/s: 400e9 bits / 8 bits per byte.
    assert units.gbps_to_bytes_per_s(400) == 50e9
    assert units.gbps_to_GBps(400) == 50.0
    assert units.bytes_per_s_to_gbps(50e9) == 400.0


def test_serialization_of_one_mtu() -> None:
    # 4096 B = 32768 bits; at 400 bits/ns that is 81.92 ns.
    assert units.serialization_ns(4096, 400) == pytest.approx(81.92)


def test_picoseconds_round_trip() -> None:
    assert units.ns_to_ps(1.5) == 1500
    assert units.ps_to_ns(1500) == 1.5


def test_energy_of_one_kilowatt_for_a_year() -> None:
    assert units.energy_kwh_per_year(1000) == 8760


@pytest.mark.parametrize(
    ("text", "size"),
    [("8", 8), ("1K", 1024), ("64M", 64 * 2**20), ("8G", 8 * 2**30), ("2gb", 2 * 2**30)],
)
def test_parse_size(text: str, size: int) -> None:
    assert units.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "M", "1X", "-1", "1.2.3"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        units.parse_size(text)


@given(st.integers(min_value=0, max_value=50).flatmap(lambda k: st.just(2**k)))
def test_format_and_parse_round_trip(size: int) -> None:
    assert units.parse_size(units.format_size(size)) == size
