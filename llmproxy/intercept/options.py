"""The chaos options — `--chaos`, `--fail`, `--fail-first`, `--retry-after`, `--rpm`, `--tpm`, `--tpd`,
`--budget-usd`, `--seed`, `--state` (docs/chaos.md) — made once, for the commands that run a proxy and for the
pytest marker's `chaos="--fail-first 2"`, which reads its string by the same options so that it means what it
means on the command line; and `intercept_plan`, what they make together."""

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from llmproxy.errors import UsageError
from llmproxy.options import Decorator, describe, option

if TYPE_CHECKING:
    from llmproxy.intercept.rules import ChaosFile
    from llmproxy.intercept.settings import InterceptPlan

CHAOS_OPTIONS: list[Decorator] = [  # chaos, quotas and the budget (docs/chaos.md); the pytest marker reads them too
    option(
        "--chaos",
        multiple=True,
        type=click.Path(dir_okay=False, path_type=Path),
        help="A chaos file (docs/chaos.md). Repeatable: their rules in order.",
    ),
    option(
        "--fail",
        multiple=True,
        metavar="STATUS[@P]",
        help="Answer LLM requests with STATUS (with probability P): 529@0.3. Repeatable: each P a share of the "
        "requests (--fail 500@0.3 --fail 429@0.05).",
    ),
    option("--fail-first", type=click.IntRange(min=1), metavar="N", help="Only the first N requests fail."),
    option("--retry-after", metavar="SECONDS|DATE", help="The retry-after sent with --fail errors."),
    option("--rpm", type=click.IntRange(min=1), metavar="N", help="A quota of N LLM requests a minute."),
    option("--tpm", type=click.IntRange(min=1), metavar="N", help="A quota of N tokens a minute."),
    option("--tpd", type=click.IntRange(min=1), metavar="N", help="A quota of N tokens a day."),
    option("--budget-usd", metavar="USD", help="Refuse LLM requests once answers cost this much: 2.00."),
    option("--seed", type=int, help="Seed every probability and jitter (default: drawn, and reported)."),
    option("--state", metavar="redis://HOST:PORT/N", help="Keep quota and budget counters in Redis, shared."),
]


CHAOS_FIELDS: Final = ("chaos", "fail", "fail_first", "retry_after", "rpm", "tpm", "tpd", "budget_usd", "seed", "state")


def intercept_plan(
    chaos: Sequence[Path] = (),
    fail: Sequence[str] = (),
    fail_first: int | None = None,
    retry_after: str | None = None,
    rpm: int | None = None,
    tpm: int | None = None,
    tpd: int | None = None,
    budget_usd: str | None = None,
    seed: int | None = None,
    state: str | None = None,
) -> "InterceptPlan":
    """The chaos files and the shorthands as one plan (the shorthands' rules first: they are the more specific
    ask; then each file's, in order); raises LlmproxyError (ChaosError, UsageError) for a value it cannot use,
    before anything starts."""
    from decimal import Decimal, InvalidOperation

    from llmproxy.intercept.rules import ChaosFile, load_chaos, shorthand_rules
    from llmproxy.intercept.settings import InterceptPlan

    files = [(path, load_chaos(path)) for path in chaos]
    rules = shorthand_rules(
        fail=fail,
        fail_first=fail_first,
        retry_after=retry_after,
        rpm=rpm,
        tpm=tpm,
        tpd=tpd,
    )
    budget = _agreed(files, "budgetUsd", "budgets", "--budget-usd")
    if budget_usd is not None:
        try:
            budget = Decimal(budget_usd.lstrip("$"))
        except InvalidOperation:
            raise UsageError(f"--budget-usd {budget_usd!r}: not an amount of dollars") from None
        if budget <= 0:
            raise UsageError("--budget-usd must be more than 0")
    seed = seed if seed is not None else _agreed(files, "seed", "seeds", "--seed")
    every_rule = (*rules, *(rule for _, loaded in files for rule in loaded.rules))
    merged = ChaosFile(rules=every_rule, budgetUsd=budget, seed=seed)
    sources = [*(f"--chaos {path}" for path, _ in files), *(rule.name or "" for rule in rules)]
    if budget_usd is not None:
        sources.append(f"--budget-usd {budget_usd}")
    return InterceptPlan(merged, state, source=", ".join(part for part in sources if part))


def _agreed(files: "list[tuple[Path, ChaosFile]]", field: str, what: str, option: str) -> Any:
    """The value the chaos files set for `field` (None: none does); raises UsageError when two set different
    ones and the command line does not settle it with `option`."""
    set_by = [(path, getattr(loaded, field)) for path, loaded in files if getattr(loaded, field) is not None]
    if not set_by:
        return None
    first, value = set_by[0]
    for path, other in set_by[1:]:
        if other != value:
            raise UsageError(f"--chaos {first} and {path} set different {what} ({value} and {other}): give {option}")
    return value


def chaos_arguments(text: str, where: str) -> dict[str, Any]:
    """`--fail 529@0.3 --seed 7` read by the command line's own chaos options (the pytest marker's
    `chaos="--fail-first 2"`): the values `intercept_plan` takes. Raises UsageError naming `where`."""
    import shlex

    def values(**given: Any) -> dict[str, Any]:
        return given

    command = click.command()(functools.reduce(lambda made, decorate: decorate(made), reversed(CHAOS_OPTIONS), values))
    try:
        return dict(command.make_context(where, shlex.split(text)).params)
    except (click.ClickException, ValueError) as error:
        message = describe(error) if isinstance(error, click.UsageError) else str(error)
        raise UsageError(f"{where}{text!r}: {message}") from None
