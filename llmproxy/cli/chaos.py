"""`llmproxy chaos`: check a chaos file, and change the chaos of a running llmproxy through its control API
(`LLMPROXY_CONTROL_URL` and `LLMPROXY_CONTROL_TOKEN`, which `record`, `replay` and `mock` put in the
environment of the command they run, and print when they run without one)."""

import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import click

from llmproxy.cli.output import emit, json_option
from llmproxy.environment import CONTROL_TOKEN_VARIABLE as TOKEN_VARIABLE
from llmproxy.environment import CONTROL_URL_VARIABLE as URL_VARIABLE
from llmproxy.errors import ChaosError, LlmproxyError, UsageError
from llmproxy.options import option
from llmproxy.words import plural


@click.group()
def chaos() -> None:
    """Chaos files, and the chaos of a running llmproxy (docs/chaos.md)."""


@chaos.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
def validate(file: Path, as_json: bool) -> None:
    """Check a chaos file (--chaos FILE) without starting anything."""
    from llmproxy.intercept.rules import load_chaos
    from llmproxy.outputs import chaos as output

    try:
        document = output.validation(str(file), load_chaos(file))
    except LlmproxyError as error:
        click.echo(str(error), err=True)
        document = output.invalid(str(file), str(error))
    else:
        budget = f", a ${document.budgetUsd} budget" if document.budgetUsd else ""
        click.echo(f"{file}: valid, {plural(len(document.rules), 'rule')}{budget}", err=as_json)
    if as_json:
        emit(document)
    sys.exit(0 if document.valid else 1)


_URL = option("--url", envvar=URL_VARIABLE, help=f"The control API (default: ${URL_VARIABLE}).")
_TOKEN = option("--token", envvar=TOKEN_VARIABLE, help=f"Its bearer token (default: ${TOKEN_VARIABLE}).")


@chaos.command("set")
@click.argument("host")
@option("--fail", metavar="STATUS[@P]", help="Answer STATUS (with probability P), e.g. 529@0.3.")
@option("--fail-first", type=click.IntRange(min=1), metavar="N", help="Only the next N requests fail.")
@option("--retry-after", metavar="SECONDS|DATE", help="The retry-after sent with an error.")
@option("--rpm", type=click.IntRange(min=1), help="A request quota per minute.")
@option("--tpm", type=click.IntRange(min=1), help="A token quota per minute.")
@option("--profile", "profile_json", metavar="JSON", help="A whole profile, as JSON (docs/chaos.md).")
@option("--ttl", metavar="DURATION", help="Revert after this long: 500ms, 30s, 5m (default: until cleared).")
@_URL
@_TOKEN
def set_(
    host: str,
    fail: str | None,
    fail_first: int | None,
    retry_after: str | None,
    rpm: int | None,
    tpm: int | None,
    profile_json: str | None,
    ttl: str | None,
    url: str | None,
    token: str | None,
) -> None:
    """Set the chaos for HOST (a host, or host:port) in a running llmproxy."""
    from llmproxy.intercept.rules import shorthand_rules

    def body() -> dict[str, Any]:
        if profile_json is not None:
            if any(value is not None for value in (fail, fail_first, retry_after, rpm, tpm)):
                raise UsageError("give --profile or the shorthand options, not both")
            try:
                profile = json.loads(profile_json)
            except ValueError as error:
                raise UsageError(f"--profile: not JSON: {error}") from None
        else:
            rules = shorthand_rules(fail=fail or (), fail_first=fail_first, retry_after=retry_after, rpm=rpm, tpm=tpm)
            if not rules:
                raise UsageError("say what to inject: --fail, --fail-first, --rpm, --tpm or --profile")
            profile = rules[0].chaos.model_dump(exclude_defaults=True, mode="json")
        document: dict[str, Any] = {"host": host, "chaos": profile}
        if ttl is not None:
            document["ttlMillis"] = _milliseconds(ttl)
        return document

    _run("set", lambda: _call(url, token, "PUT", body()), lambda answer: f"{host}: chaos set" + _ttl(answer))


@chaos.command()
@click.argument("host")
@click.argument("patch")
@_URL
@_TOKEN
def patch(host: str, patch: str, url: str | None, token: str | None) -> None:
    """Merge PATCH (a JSON object; null removes a field) into HOST's profile, keeping its TTL."""

    def body() -> dict[str, Any]:
        try:
            return {"host": host, "chaos": json.loads(patch)}
        except ValueError as error:
            raise UsageError(f"PATCH: not JSON: {error}") from None

    _run("patch", lambda: _call(url, token, "PATCH", body()), lambda answer: f"{host}: {json.dumps(answer['chaos'])}")


@chaos.command()
@_URL
@_TOKEN
@json_option
def show(url: str | None, token: str | None, as_json: bool) -> None:
    """What a running llmproxy injects: per-host profiles, rules, faults so far, the budget."""
    from llmproxy.outputs.chaos import ChaosState

    def report(state: dict[str, Any]) -> str:
        if as_json:
            emit(ChaosState.model_validate(state))
            return ""
        lines = [f"seed {state['seed']}"]
        ttl = state.get("ttlRemainingMillis", {})
        for host, profile in state["services"].items():
            left = f" ({ttl[host] / 1000:g} s left)" if host in ttl else ""
            lines.append(f"host {host}{left}: {json.dumps(profile)}")
        for number, rule in enumerate(state["rules"], 1):
            lines.append(f"{rule.get('name', f'rule {number}')}: {json.dumps(rule.get('chaos', {}))}")
        injected = ", ".join(f"{kind} {count}" for kind, count in state["injected"].items()) or "none"
        lines.append(f"injected so far: {injected}")
        if budget := state.get("budget"):
            from llmproxy.intercept.budget import Spend  # with pricing: only when there is a budget

            spend = Spend(Decimal(budget["spentUsd"]), Decimal(budget["limitUsd"]), budget["unpricedCalls"])
            lines.append(f"budget: {spend.describe()}")
        return "\n".join(lines)

    _run("show", lambda: _call(url, token, "GET"), report)


@chaos.command()
@click.argument("host", required=False)
@_URL
@_TOKEN
def clear(host: str | None, url: str | None, token: str | None) -> None:
    """Remove HOST's chaos (every host's, without one) from a running llmproxy."""
    query = f"?host={urllib.parse.quote(host)}" if host else ""
    _run("clear", lambda: _call(url, token, "DELETE", query=query), lambda _: f"{host or 'every host'}: chaos cleared")


def _run(name: str, call: Callable[[], dict[str, Any]], describe: Callable[[dict[str, Any]], str]) -> None:
    try:
        answer = call()
    except LlmproxyError as error:
        click.echo(f"llmproxy chaos {name}: {error}", err=True)
        sys.exit(error.exit_status)
    text = describe(answer)
    if text:
        click.echo(text, err=name != "show")


# The control API is on loopback, and the command that calls it usually runs under `llmproxy record|replay|mock
# -- …`, whose HTTP(S)_PROXY points at the proxy: through it, the mock or the cassette would answer instead.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _call(url: str | None, token: str | None, method: str, body: Any = None, query: str = "") -> dict[str, Any]:
    if not url or not token:
        raise UsageError(
            f"no control API: run inside `llmproxy record|replay|mock -- …`, or set {URL_VARIABLE} and {TOKEN_VARIABLE}"
        )
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + query, data=data, method=method)
    request.add_header("authorization", f"Bearer {token}")
    request.add_header("content-type", "application/json")
    try:
        with _DIRECT.open(request, timeout=10) as response:
            answer: dict[str, Any] = json.load(response)
            return answer
    except urllib.error.HTTPError as error:
        try:
            message = json.load(error).get("error", error.reason)
        except ValueError:
            message = error.reason
        raise ChaosError(f"{error.code}: {message}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ChaosError(f"cannot reach the control API at {url}: {reason}") from None


def _milliseconds(text: str) -> int:
    """`500ms`, `30s`, `5m`, `1h`, or a bare number of milliseconds."""
    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
    number, unit = text.strip(), "ms"
    for suffix in ("ms", "s", "m", "h"):
        if number.endswith(suffix):
            number, unit = number[: -len(suffix)], suffix
            break
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise UsageError(f"--ttl {text!r}: expected a duration such as 500ms, 30s or 5m") from None
    if value < 1:
        raise UsageError(f"--ttl {text!r}: at least 1 ms")
    return round(value)


def _ttl(answer: dict[str, Any]) -> str:
    ttl = answer.get("ttlMillis")
    return f" for {ttl / 1000:g} s" if ttl else " until cleared"
