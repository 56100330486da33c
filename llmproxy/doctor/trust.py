"""The trust checks: for each client family a command would use, whether it trusts llmproxy's CA — probed
with a real client where one can be run, read from its CA file otherwise — and the fix when it does not."""

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from llmproxy.ca import CertificateAuthority
from llmproxy.ca_install import ENV_FILE, JAVA_STORE
from llmproxy.doctor import families, probes
from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.doctor.probes import ProbeOutcome, Result


def checks(
    use: families.Use,
    environ: Mapping[str, str],
    proxy: str,
    host: str,
    ca: CertificateAuthority,
    under_llmproxy: bool,
) -> list[Check]:
    """One check per family `use` names, probes run side by side (Java's takes seconds to start)."""
    url = f"https://{host}{probes.PATH}"
    environ = probes.without_no_proxy(environ)
    with ThreadPoolExecutor(max_workers=4) as pool:
        running = {family: pool.submit(_probe, family, use.python, proxy, url, environ) for family in use.families}
        results = {family: future.result() for family, future in running.items()}
    for family in use.families:
        if family in families.READ:
            results[family] = _read(family, environ, ca.cert_path)
    checked = [_check(family, result, ca.directory, under_llmproxy) for family, result in results.items()]
    return [_guessed(check, use.why) if check.name in use.guessed else check for check in checked]


def _guessed(check: Check, why: str) -> Check:
    """A family the command only may use: what would fail it is said, as a warning."""
    if check.status is not Status.FAIL:
        return check
    return replace(check, status=Status.WARN, detail=f"{check.detail} (a guess: {why})")


def _probe(family: str, python: str, proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    if family in families.PYTHON_FAMILIES:
        return probes.python(family, python, proxy, url, environ)
    if family == "node":
        return probes.node(proxy, url, environ)
    if family == "java":
        return probes.java(proxy, url, environ)
    if family == "curl":
        return probes.curl(proxy, url, environ)
    if family == "openssl":
        return probes.openssl(proxy, url, environ)
    return Result(ProbeOutcome.SKIPPED, "read, not probed")


def _read(family: str, environ: Mapping[str, str], certificate: Path) -> Result:
    variable, bundle = families.read_variable(family, environ)
    where = f"{variable}={bundle}" if variable.isupper() else f"{variable} ({bundle or 'none found'})"
    if probes.holds_certificate(bundle, certificate):
        return Result(ProbeOutcome.TRUSTED, f"{where} holds the CA (read from the file; the client was not run)")
    return Result(ProbeOutcome.UNTRUSTED, f"{where} does not hold the CA" if bundle else f"{variable} is not set")


def _check(family: str, result: Result, home: Path, under_llmproxy: bool) -> Check:
    if result.outcome is ProbeOutcome.SKIPPED:
        return Check(Section.TRUST, family, Status.SKIPPED, result.detail)
    trusts = f"trusts {families.TRUSTS[family]}"
    if result.outcome is ProbeOutcome.TRUSTED:
        return Check(Section.TRUST, family, Status.OK, f"trusted — {trusts}", evidence=result.detail)
    if result.outcome is ProbeOutcome.UNTRUSTED:
        fix = families.fix(family, under_llmproxy, home / JAVA_STORE, home / ENV_FILE)
        return Check(Section.TRUST, family, Status.FAIL, f"not trusted — {trusts}", fix, result.detail)
    fix = "the client failed for another reason than trust: see the detail"
    return Check(Section.TRUST, family, Status.WARN, f"could not tell: {result.detail}", fix, result.detail)
