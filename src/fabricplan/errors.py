"""The error tree. Every error a user can cause carries a code listed in docs/errors.md.

::

    FabricPlanError                 base; ``str(e)`` is one line: "where: what (value); fix"
    ├── SpecError                   the cluster spec (YAML or Python) is not valid      FP1xx
    ├── CatalogError                a catalog entry or price book is missing or invalid FP2xx
    ├── DesignError                 no fabric can be designed for a valid spec          FP3xx
    ├── InputFileError              a file given to lint / check-bench cannot be read   FP4xx
    ├── ModelError                  a model was asked something outside its domain      FP5xx
    ├── SweepError                  a sweep definition or its results file is not valid FP10xx
    └── OutputFileError             an output path cannot be written, or mismatches     FP130x

Messages follow one pattern so that a person reading a terminal knows what to change:
``where: what is wrong (value); what to do``.

>>> e = SpecError("FP101", "cluster.gpus", "must be a multiple of 8", 1020, "use 1016 or 1024")
>>> str(e)
'cluster.gpus: must be a multiple of 8 (1020); use 1016 or 1024 [FP101]'
"""

from __future__ import annotations

TYPE_CHECKING = False
"""``typing`` is not imported at run time: this module is on the path of every start-up, where
Ctrl-C must already meet fabricplan's own handling (type checkers read the block below)."""
if TYPE_CHECKING:
    from typing import Any, Self


MAX_SHOWN_VALUE_CHARS = 120
"""Longest offending value quoted whole in a message; a longer one is cut and its length said."""
MAX_PART_CHARS = 400
"""Longest place or description quoted whole (a validator may have put a 10,000-item list into
its description): the message stays one readable line."""


def _cut(text: str, limit: int) -> str:
    """``text``, or its start and its length when longer than ``limit``.

    >>> _cut("x" * 1000, 40)
    'xxxxxxxxxxxxxxxxxxxx... 1,000 characters'
    """
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... {len(text):,} characters"


class FabricPlanError(Exception):
    """Base of every fabricplan error.

    Parameters
    ----------
    code
        Stable error code (``FPnnn``) listed in docs/errors.md.
    where
        The field, file:line or key the problem is at.
    what
        What is wrong, in a few words.
    value
        The offending value (shown in parentheses); omitted when ``None``.
    fix
        What to do about it.
    """

    def __init__(self, code: str, where: str, what: str, value: Any = None, fix: str = "") -> None:
        self.code = code
        self.where = where
        self.what = what
        self.value = value
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        text = f"{_cut(self.where, MAX_PART_CHARS)}: {_cut(self.what, MAX_PART_CHARS)}"
        if self.value is not None:
            shown = repr(self.value) if isinstance(self.value, str) else str(self.value)
            text += f" ({_cut(shown, MAX_SHOWN_VALUE_CHARS)})"
        if self.fix:
            text += f"; {self.fix}"
        return f"{text} [{self.code}]"

    def __str__(self) -> str:
        return self.message

    def detached(self) -> Self:
        """A copy of this error without its traceback, cause or context, to keep.

        An error as raised holds its traceback, whose frames hold their locals: an error kept
        in a list or a cache of the frame that caught it makes a reference cycle, and
        everything those frames reached waits for the cyclic garbage collector. The copy
        has the same class, code and message; raised again it gets a traceback of its own,
        so a kept copy is raised as ``raise kept.detached()``.

        >>> try:
        ...     raise DesignError("FP301", "fabric", "cannot be built", 7, "use fewer GPUs")
        ... except DesignError as exc:
        ...     kept = exc.detached()
        >>> str(kept), kept.__traceback__ is None, type(kept).__name__
        ('fabric: cannot be built (7); use fewer GPUs [FP301]', True, 'DesignError')
        """
        copy = self.__class__.__new__(self.__class__, *self.args)
        copy.__dict__.update(self.__dict__)
        return copy


class SpecError(FabricPlanError):
    """The cluster spec is not valid (FP1xx)."""


class CatalogError(FabricPlanError):
    """A catalog entry, price or price book is missing or invalid (FP2xx)."""


class DesignError(FabricPlanError):
    """No fabric can be designed for this spec (FP3xx)."""


class InputFileError(FabricPlanError):
    """A configuration or benchmark file cannot be read (FP4xx)."""


class ModelError(FabricPlanError):
    """A model was asked for something outside its domain (FP5xx)."""


class OutputFileError(FabricPlanError):
    """An output file or folder cannot be written, or its name does not fit the format (FP130x)."""


class SweepError(FabricPlanError):
    """A sweep definition (``--vary``, a points file) or its results file is not valid (FP10xx)."""
