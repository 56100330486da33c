"""`llmproxy doctor [-- CMD]`: will this command's traffic go through llmproxy, and be trusted?"""

import json
import os
import tempfile
from pathlib import Path

import click

from llmproxy.cli.output import emit, json_option
from llmproxy.cli.reporting import reported
from llmproxy.doctor.findings import Check, Status
from llmproxy.options import option
from llmproxy.words import plural

_MARK = {Status.OK: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIPPED: "-"}


@click.command(context_settings={"allow_interspersed_args": False})
@option("--all", "every_family", is_flag=True, help="Check every client family, not only the command's.")
@json_option
@option("-v", "--verbose", is_flag=True, help="Also show what each client said.")
@option("--debug", is_flag=True, help="Show the traceback of an error, not only its one line.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@reported("doctor")
def doctor(every_family: bool, as_json: bool, verbose: bool, debug: bool, command: tuple[str, ...]) -> int:
    """Check that CMD's traffic would go through llmproxy and trust its CA: `llmproxy doctor -- claude`.

    With the environment CMD would get under llmproxy (without CMD: this shell's as it is), it checks the
    CA, the proxy variables, whether each client family CMD would use trusts the CA (a real client of each
    family, through a proxy on 127.0.0.1; nothing leaves the machine), whether the provider hosts go through
    the proxy, and the coding CLIs installed. Each finding comes with its fix. Exits 0 when nothing failed
    (warnings may remain), 1 when something must be fixed; 127 or 126 when CMD does not exist or cannot be
    executed.
    """
    from llmproxy.ca import ensure_ca
    from llmproxy.cli.children import check_runnable
    from llmproxy.doctor import diagnose
    from llmproxy.doctor.probes import PATH, TOKEN
    from llmproxy.environment import proxy_environment
    from llmproxy.outputs.doctor import doctor as document
    from llmproxy.session import mocking

    if command:  # as `llmproxy record -- CMD` would: a command that cannot be run is all there is to say
        check_runnable(command, os.environ)
    ca = ensure_ca()
    answer = {"match": {"path": PATH}, "http": {"status": 200, "json": {"llmproxy": TOKEN}}}
    with tempfile.TemporaryDirectory(prefix="llmproxy-doctor-") as directory:
        expectations = Path(directory) / "doctor.json"
        expectations.write_text(json.dumps({"expectations": [answer]}))
        with mocking(expectations) as proxy:
            bundle = ca.directory / "bundle.pem"
            extra = [Path.cwd() / "node_modules" / ".bin"]
            checks = diagnose(command, os.environ, proxy.url, ca, bundle, every_family=every_family, extra_paths=extra)
            environment = proxy_environment("http://127.0.0.1:PORT", ca.cert_path, bundle) if command else {}
    if as_json:
        emit(document(list(command), environment, checks))
    else:
        _print(checks, verbose)
    return 1 if any(check.status is Status.FAIL for check in checks) else 0


def _print(checks: list[Check], verbose: bool) -> None:
    """By section. Each fix is said once (with -v, under every finding it fixes): after the last finding it
    fixes in the first section that has one, naming them when there are several."""
    said: set[str] = set()
    for index, check in enumerate(checks):
        if index == 0 or check.section != checks[index - 1].section:
            click.echo(f"{check.section.value}:")
        click.echo(f"  {_MARK[check.status]} {check.name}: {check.detail}")
        if verbose and check.evidence:
            click.echo(f"      said: {check.evidence}")
        if not check.fix or check.fix in said:
            continue
        if verbose:
            click.echo(f"    fix: {check.fix}")
            continue
        sharing = [n for n, other in enumerate(checks) if other.fix == check.fix and other.section == check.section]
        if index == sharing[-1]:
            said.add(check.fix)
            names = f" ({', '.join(checks[n].name for n in sharing)})" if len(sharing) > 1 else ""
            click.echo(f"    fix{names}: {check.fix}")
    counts = {status: sum(check.status is status for check in checks) for status in Status}
    warnings = plural(counts[Status.WARN], "warning")
    click.echo(f"doctor: {counts[Status.OK]} ok, {warnings}, {counts[Status.FAIL]} to fix")
