"""perftest ``--out_json`` files.

One object per file: ``test_info`` (``test`` such as ``RDMA_Write_BW_Test``, ``Link_type``,
``Mtu``, ``Device``, ``Number_of_qps`` ...) and ``results`` (``MsgSize``, ``BW_peak``,
``BW_average``, ``MsgRate`` for bandwidth tests; ``t_min`` ... ``t_typical``, ``t_avg``,
``percentile_99`` for latency tests). perftest rewrites the file for every message size, so an
``-a`` run leaves the last size only.

Versions from 2021 to 2022 wrote it without quotes around keys and strings and with trailing commas
(perftest issue #216); :func:`relaxed_perftest_json` reads that form.

The JSON does not say its bandwidth unit (``--report_gbits`` or MiB/s). It is found from the row
itself: perftest computes both bandwidth and message rate from the same count, so
``BW = MsgSize x MsgRate`` in bytes/s, and only one unit makes that hold.

>>> doc = relaxed_perftest_json('''{
... test_info: {
... test: RDMA_Write_BW_Test,
... Link_type: Ethernet,
... },
... results: {
... MsgSize: 65536,
... BW_average: 44586.12,
... MsgRate: 0.713378,
... },
... }''')
>>> outcome = parse_perftest_json(doc, "old.json")
>>> d = outcome.drafts[0]
>>> d.test, d.technology_hint, round(d.rows[0]["bw_gbps"], 2)
('write_bw', 'roce', 374.02)
"""

from __future__ import annotations

import math
import re
from typing import Any

from fabricplan.errors import InputFileError
from fabricplan.measure.draft import ParseOutcome, RunDraft, finite, whole
from fabricplan.measure.logline import PERFTEST_VERBS, perftest_name
from fabricplan.measure.measurement import TechnologyHint
from fabricplan.units import (
    bytes_per_s_to_gbps,
    mib_per_s_to_gbps,
    mpps_to_per_s,
    ns_to_us,
    serialization_ns,
)

GBPS_PLAUSIBLE_MAX = 3_200.0
"""Largest bandwidth read as Gb/s when the unit cannot be told from the message rate: twice
1600 Gb/s (a bidirectional run on the fastest NIC port); large messages in MiB/s are above it."""

_OPEN_RE = re.compile(r'^\s*"?([^":{}]+?)"?\s*:\s*\{\s*$')
_CLOSE_RE = re.compile(r"^\s*\}\s*,?\s*$")
_PAIR_RE = re.compile(r'^\s*"?([^":{}]+?)"?\s*:(.*)$')
_LINK_HINTS: dict[str, TechnologyHint] = {"IB": "infiniband", "Ethernet": "roce"}


def is_perftest_json(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("results"), dict)
        and ("test_info" in doc or "MsgSize" in doc["results"])
    )


def _scalar(text: str) -> Any:
    text = text.strip().removesuffix(",").strip().strip('"')
    number = finite(text)
    return number if number is not None else text


def relaxed_perftest_json(text: str, origin: str = "perftest json") -> dict[str, Any]:
    """Read perftest's JSON of 2021-2022: keys and strings unquoted, trailing commas.

    Raises :class:`InputFileError` (FP453) naming the first line that is not ``key: value``.
    """
    root: dict[str, Any] = {}
    stack: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped == "{" and not stack:
            stack.append(root)
            continue
        opened = _OPEN_RE.match(line)
        if opened is not None and stack:
            child: dict[str, Any] = {}
            stack[-1][opened.group(1).strip()] = child
            stack.append(child)
            continue
        if _CLOSE_RE.match(line):
            if stack:
                stack.pop()
            continue
        pair = _PAIR_RE.match(line)
        if pair is None or not stack:
            raise InputFileError(
                "FP453",
                f"{origin}:{number}",
                "not JSON and not perftest's unquoted key: value",
                stripped[:60],
                "give the file perftest wrote, uncut",
            )
        stack[-1][pair.group(1).strip()] = _scalar(pair.group(2))
    return root


def _test(info: dict[str, Any]) -> tuple[str, bool]:
    name = str(info.get("test", "")).removesuffix("_Test")
    for verb in sorted(PERFTEST_VERBS, key=len, reverse=True):
        if name.startswith(verb + "_"):
            rest = name[len(verb) + 1 :].split("_")
            return perftest_name(verb, "BW" if "BW" in rest else "Latency"), "Bidirectional" in rest
    return "unknown", False


def _bw_gbps(
    value: float, size: int, rate_mpps: float | None, origin: str, outcome: ParseOutcome
) -> float:
    """The average bandwidth in Gb/s, its unit found from the message rate."""
    from_rate = bytes_per_s_to_gbps(size * mpps_to_per_s(rate_mpps or 0.0))
    if 0 < from_rate < math.inf and value > 0:
        as_gbps, as_mib = value, mib_per_s_to_gbps(value)
        return min((as_gbps, as_mib), key=lambda v: abs(math.log(v) - math.log(from_rate)))
    if value > GBPS_PLAUSIBLE_MAX:
        return mib_per_s_to_gbps(value)
    outcome.warn(
        origin,
        f"no MsgRate to tell the bandwidth unit; read {value:g} as Gb/s (perftest --report_gbits)",
    )
    return value


def parse_perftest_json(
    doc: dict[str, Any], origin: str, file_test: str | None = None
) -> ParseOutcome:
    """Read one perftest JSON object (see the module docstring)."""
    outcome = ParseOutcome("perftest json")
    given = doc.get("test_info")
    info: dict[str, Any] = given if isinstance(given, dict) else {}
    test, bidirectional = _test(info)
    link = str(info.get("Link_type", ""))
    draft = RunDraft(
        tool="perftest",
        flavor="perftest",
        test=test if test != "unknown" else (file_test or test),
        line=1,
        technology_hint=_LINK_HINTS.get(link),
        hint_reason=f"perftest Link_type: {link}" if link in _LINK_HINTS else "",
        mtu_bytes=whole(info.get("Mtu")),
        device=str(info["Device"]) if "Device" in info else None,
        qps=whole(info.get("Number_of_qps")),
        bidirectional=bidirectional,
    )
    outcome.tables_seen.append(1)
    results = doc.get("results")
    results = results if isinstance(results, dict) else {}
    size = whole(results.get("MsgSize"))
    if size is None or size == 0:
        outcome.warn(origin, "results have no MsgSize (perftest run with --output?); skipped")
        return outcome
    row: dict[str, Any] = {"line": 1, "size_bytes": size}
    average = finite(results.get("BW_average"))
    latency = finite(results.get("t_typical", results.get("t_avg")))
    if average is not None and average > 0:
        rate = finite(results.get("MsgRate"))
        bw = _bw_gbps(average, size, rate, origin, outcome)
        peak = finite(results.get("BW_peak"))
        row.update(
            bw_gbps=bw,
            msg_rate_mpps=rate,
            time_us=ns_to_us(serialization_ns(size, bw)),
            bw_peak_gbps=peak * bw / average if peak is not None else None,
        )
    elif latency is not None:
        row.update(
            latency_us=latency,
            time_us=latency,
            latency_min_us=finite(results.get("t_min")),
            latency_p99_us=finite(results.get("percentile_99")),
        )
    else:
        outcome.warn(origin, "results have neither BW_average nor t_typical/t_avg; skipped")
        return outcome
    draft.rows.append(row)
    outcome.drafts.append(draft)
    return outcome
