"""How quantities read in tables and documents.

>>> money(41_234_567.0)
'$41.2M'
>>> money(950.0)
'$950'
>>> power_kw(123_456.0)
'123.5 kW'
>>> size_label(64 * 2**20)
'64M'
>>> banded(62.0, 48.2, 80.4, ".0f", " us")
'62 us (48-80)'
"""

from __future__ import annotations

from fabricplan.units import format_size, w_to_kw


def money(usd: float) -> str:
    """US dollars with a magnitude suffix."""
    for factor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(usd) >= factor:
            return f"${usd / factor:.1f}{suffix}"
    return f"${usd:.0f}"


def power_kw(power_w: float) -> str:
    """Watts shown as kilowatts."""
    return f"{w_to_kw(power_w):.1f} kW"


def size_label(size_bytes: int) -> str:
    """A message size as nccl-tests flags name it."""
    return format_size(size_bytes)


def percent(fraction: float) -> str:
    """A fraction as a percentage."""
    return f"{fraction * 100:.1f} %"


def banded(value: float, low: float | None, high: float | None, spec: str, unit: str = "") -> str:
    """A predicted value with its uncertainty band in brackets (the value alone without one)."""
    text = f"{value:{spec}}{unit}"
    if low is None or high is None:
        return text
    return f"{text} ({low:{spec}}-{high:{spec}})"
