"""Defaults and encodings of the devices that the readers and the baseline writer both rely on.

>>> EOS_DEFAULT_DSCP_TO_TC[26], 26 << DSCP_SHIFT_IN_TOS
(3, 104)
"""

from __future__ import annotations

EOS_DEFAULT_DSCP_TO_TC: dict[int, int] = {
    dscp: (1 if dscp < 8 else 0 if dscp < 16 else dscp // 8) for dscp in range(64)
}
"""EOS default DSCP -> traffic class (DSCP 0-7 to TC1, 8-15 to TC0, 16-23 to TC2, ...; CS3 -> TC3
as the Arista AI fabric guide states, docs/refs.md C.1)."""

DSCP_SHIFT_IN_TOS = 2
"""The ToS byte is DSCP (6 bits) followed by ECN (2 bits)."""
