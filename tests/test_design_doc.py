"""docs/design.md's module lists are the modules on disk (the picture matches the house; its
layer table is checked by tests/test_layering.py, which holds the imports to it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "fabricplan"
BLOCK = re.compile(r"```modules\n(.*?)```", re.DOTALL)


def listed_modules(text: str) -> dict[str, set[str]]:
    """``package: module module ...`` lines of the document's ``modules`` block."""
    match = BLOCK.search(text)
    assert match, "docs/design.md has no ```modules block"
    listed: dict[str, set[str]] = {}
    for line in match.group(1).strip().splitlines():
        package, _, names = line.partition(":")
        listed[package.strip()] = set(names.split())
    return listed


def test_the_design_lists_every_module_of_the_floors() -> None:
    listed = listed_modules((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))
    assert {"sim", "sim/flow", "sim/packet", "lint", "lint/reading"} <= set(listed)
    for package, names in listed.items():
        on_disk = {p.stem for p in (SRC / package).glob("*.py") if p.stem != "__init__"}
        assert names == on_disk, (
            f"{package}: listed but absent {sorted(names - on_disk)},"
            f" present but not listed {sorted(on_disk - names)}"
        )


def test_the_lister_reads_the_block() -> None:
    text = "x\n```modules\nsim: a b\nlint: c\n```\n"
    assert listed_modules(text) == {"sim": {"a", "b"}, "lint": {"c"}}
