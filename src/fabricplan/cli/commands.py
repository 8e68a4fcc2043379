"""The command table, and the group that imports a command's module only when it runs.

``fabricplan --help`` lists every command from :data:`COMMANDS` (name, module, the first
paragraph of its help) without importing any command module. A command's module is imported
when the command runs or its own ``--help`` is asked for; each module keeps a ``register(app)``
function, called on a fresh application per module, and imports the models, rich and the
simulators inside its commands' functions, so that its ``--help`` stays as fast as the root's.
Every help is click's plain layout: typer's rich layout alone imports about 0.3 s of modules.
``tests/test_cli_startup.py`` checks that the table says what the modules register.

An option or argument click refuses (an unknown option, a value of the wrong type or out of
range, a number that is not finite, an unknown choice, a missing or extra argument) ends like
every other input error: one line ``where: what; fix [FP1414]`` on stderr and exit code 2
(:func:`usage_line`), not click's usage block. A group called without a command prints its help.
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

click_exceptions: Any = importlib.import_module(typer.BadParameter.__module__)
"""The exceptions of the click that typer runs on: typer 0.29 carries its own copy
(``typer._click``), whose exceptions are not the ``click`` package's; older releases use click."""

USAGE_CODE = "FP1414"
"""Click refused an option or argument of the command line."""
LISTING = "fabricplan.listing"
"""Context flag set while the group's help lists its commands (no module is imported then)."""


class CommandEntry(NamedTuple):
    name: str
    module: str
    """Module of :mod:`fabricplan.cli` whose ``register(app)`` defines the command."""
    summary: str
    """The first paragraph of the command's help, as ``--help`` lists it."""


COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry("init", "spec_cmd", "Write a commented starter spec."),
    CommandEntry(
        "design",
        "plan_cmd",
        "Design every technology's fabric: switches per tier, links, cables, limits.",
    ),
    CommandEntry(
        "cost", "plan_cmd", "Design and price every technology's fabric: capex, power, opex, TCO."
    ),
    CommandEntry(
        "compare",
        "plan_cmd",
        "The main job: design, price, model and decide, with reasons and flip points.",
    ),
    CommandEntry(
        "perf",
        "perf_cmd",
        "Predicted nccl-tests (or perftest) tables for every technology of SPEC.",
    ),
    CommandEntry(
        "simulate", "simulate_cmd", "Simulate one traffic pattern on every technology of SPEC."
    ),
    CommandEntry(
        "lint",
        "lint_cmd",
        "Check lossless-RoCE settings of switches and NICs, each and against each other.",
    ),
    CommandEntry(
        "roce-config",
        "lint_cmd",
        "Write the baseline lossless configuration for the designed RoCE fabric.",
    ),
    CommandEntry(
        "check-bench",
        "bench_cmd",
        "Read benchmark logs; with --spec, judge them against the model and name likely causes.",
    ),
    CommandEntry(
        "calibrate",
        "bench_cmd",
        "Fit the model's free parameters to measurements and write a calibration profile.",
    ),
    CommandEntry(
        "serve",
        "serve_cmd",
        "Serve the web app: the page at http://HOST:PORT/ and the JSON API under /api/.",
    ),
    CommandEntry(
        "export",
        "export_cmd",
        "Write the files a build team loads: cut sheet, BOM, NetBox, Slurm, IB, IP plan, configs,\n"
        "Kubernetes labels, acceptance targets, a drawing. See docs/export.md.",
    ),
    CommandEntry(
        "verify-cabling",
        "export_cmd",
        "Compare the built fabric with the cut sheet: missing, extra, miswired and swapped cables.",
    ),
    CommandEntry(
        "sweep",
        "sweep_cmd",
        "Evaluate every point of a grid over spec keys; one row per point, technology and seed.",
    ),
    CommandEntry(
        "sweep-report",
        "sweep_cmd",
        "Plots and tables of a sweep: cost and step time against size with the crossovers, the\n"
        "Pareto front of TCO against step time, the recommendation map and the seed spread.",
    ),
    CommandEntry(
        "catalog",
        "catalog_cmd",
        "The hardware catalog: switches, NICs, cables, nodes, technologies, prices.",
    ),
)


def load_command(entry: CommandEntry) -> typer.main.click.Command:  # type: ignore[name-defined]
    """The command ``entry`` names, built by its module's ``register`` on a fresh application."""
    module = importlib.import_module(f"fabricplan.cli.{entry.module}")
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.callback()
    def _group() -> None:
        """The module's commands."""

    module.register(app)
    group = typer.main.get_group(app)
    command = group.commands.get(entry.name)
    if command is None:
        raise LookupError(f"fabricplan.cli.{entry.module} registers no command {entry.name!r}")
    _finite_floats(command)
    return command


def _finite_floats(command: Any) -> None:
    """Refuse an infinite or NaN value for every number option of ``command`` and of its
    subcommands: ``inf``, ``nan`` and ``1e400`` parse as floats and pass a ``min=`` bound."""
    for param in command.params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and descriptor.annotation is float:
            param.callback = _finite(param.callback)
    for sub in getattr(command, "commands", {}).values():
        _finite_floats(sub)


def _finite(callback: Any) -> Any:
    def check(ctx: Any, param: Any, value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise click_exceptions.BadParameter(f"not a finite number ({value})", ctx, param)
        return value if callback is None else callback(ctx, param, value)

    return check


def _help_flag_false_when_absent(command: Any, ctx: Any) -> None:
    """Give the ``--help`` flag of ``command`` and of its subcommands the default ``False``.

    typer coerces a parameter whose value is not a ``bool`` through a pydantic adapter, and an
    absent ``--help`` is ``None``: the group above a command's own ``--help`` built one and so
    imported pydantic (about 0.1 s) before the help appeared.
    """
    option = command.get_help_option(ctx)
    if option is not None:
        option.default = False
    for sub in getattr(command, "commands", {}).values():
        _help_flag_false_when_absent(sub, ctx)


_INVALID_VALUE_PREFIX = re.compile(r"^Invalid value for .*?: (?:Value error, )?")
"""Click's lead-in to a refused value (the line's place names the option already)."""


def _command_words(ctx: Any) -> str:
    """The command's words after the program's name (``catalog show``); empty at the root."""
    words: list[str] = []
    while ctx is not None and ctx.parent is not None:
        words.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(words))


def usage_line(exc: Any) -> str:
    """The one line for an option or argument click refused (``exc``, a ``UsageError``).

    Examples
    --------
    >>> from fabricplan.cli.app import create_app
    >>> group = typer.main.get_command(create_app())
    >>> ctx = group.make_context("fabricplan", ["design"])
    >>> usage_line(click_exceptions.UsageError("No such option: --nope", ctx))
    "fabricplan: No such option: --nope; see 'fabricplan --help' [FP1414]"
    """
    from fabricplan.errors import FabricPlanError

    command = f"fabricplan {_command_words(exc.ctx)}".strip()
    where = command
    param = getattr(exc, "param", None)
    kind = getattr(param, "param_type_name", None)
    if kind == "option":
        where += f" {param.opts[0]}"  # type: ignore[union-attr]
    elif kind == "argument":
        where += f" {(param.name or '').upper()}"  # type: ignore[union-attr]
    what = _INVALID_VALUE_PREFIX.sub("", " ".join(exc.format_message().split()))
    fix = f"see '{command} --help'"
    return str(FabricPlanError(USAGE_CODE, where, what.rstrip("."), None, fix))


def _refused(exc: Any) -> typer.Exit:
    """Print :func:`usage_line` and return the exit (2) to raise."""
    print(f"error: {usage_line(exc)}", file=sys.stderr)
    return typer.Exit(exc.exit_code)


def _help(exc: Any) -> typer.Exit:
    """Print the help of a group called without a command (``fabricplan``, ``fabricplan
    catalog``) and return the exit (0) to raise: typer's error printer prints nothing for it."""
    print(exc.ctx.get_help())
    return typer.Exit(0)


class LazyCommands(TyperGroup):
    """The ``fabricplan`` group: every command of :data:`COMMANDS`, each imported on first use."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._entries = {entry.name: entry for entry in COMMANDS}
        for entry in COMMANDS:
            self.commands[entry.name] = TyperCommand(
                name=entry.name,
                help=entry.summary,
                short_help=" ".join(entry.summary.split()),
                rich_markup_mode=self.rich_markup_mode,
            )

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click_exceptions.NoArgsIsHelpError as exc:
            raise _help(exc) from None
        except click_exceptions.UsageError as exc:
            raise _refused(exc) from None

    def invoke(self, ctx: Any) -> Any:
        words = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except click_exceptions.NoArgsIsHelpError as exc:
            raise _help(exc) from None
        except click_exceptions.UsageError as exc:
            if exc.ctx in (None, ctx) and words and words[0] in self.commands:
                # the parser refuses an option's missing value without naming the command
                command = self.commands[words[0]]
                exc.ctx = command.make_context(words[0], [], ctx, resilient_parsing=True)
            raise _refused(exc) from None

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        entry = self._entries.get(cmd_name)
        if entry is None or ctx.meta.get(LISTING):
            return self.commands.get(cmd_name)
        command = load_command(entry)
        _help_flag_false_when_absent(command, ctx)
        self.commands[cmd_name] = command
        del self._entries[cmd_name]
        return command

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False  # see _help_flag_false_when_absent
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The command list in plain text (a command's own help keeps the rich layout): the rich
        layout imports about 0.3 s of modules, more than the rest of ``fabricplan --help``."""
        ctx.meta[LISTING] = True
        try:
            super(TyperGroup, self).format_help(ctx, formatter)
        finally:
            ctx.meta[LISTING] = False
