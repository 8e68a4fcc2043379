"""Every error code the code can raise is listed in docs/errors.md (and the lister works)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fabricplan"
CODE = re.compile(r"""["'](FP\d{3,5})["']|\[(FP\d{3,5})\]""")
"""A code as the code passes it to an error (a quoted string literal) or writes it at the end of
a line it builds itself (``... [FP1121]`` in an f-string)."""
LISTED = re.compile(r"^\|\s*(FP\d{3,5})\s*\|", re.MULTILINE)
"""A code as docs/errors.md lists it: the first cell of a table row."""


def raised_codes(text: str) -> set[str]:
    return {quoted or bracketed for quoted, bracketed in CODE.findall(text)}


def listed_codes(text: str) -> set[str]:
    return set(LISTED.findall(text))


def test_every_raised_code_is_listed() -> None:
    raised: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for code in raised_codes(path.read_text(encoding="utf-8")):
            raised.setdefault(code, str(path.relative_to(ROOT)))
    listed = listed_codes((ROOT / "docs" / "errors.md").read_text(encoding="utf-8"))
    missing = {code: where for code, where in raised.items() if code not in listed}
    assert len(raised) > 50
    assert not missing, f"codes raised but not in docs/errors.md: {missing}"


def test_the_listers_see_codes_and_only_codes() -> None:
    assert raised_codes('raise ModelError("FP537", "x")\n# FP999 in a comment') == {"FP537"}
    assert raised_codes('fail(f"--token: too short; use a longer one [FP1121]")') == {"FP1121"}
    assert listed_codes("| FP101 | meaning |\n| code | meaning |\nFP102 in prose") == {"FP101"}
