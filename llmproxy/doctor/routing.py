"""The proxy variables a command gets, and whether each provider host it calls goes through llmproxy: not
skipped by a NO_PROXY entry, and answered by the proxy for that host's name (probed through the doctor's own
proxy, offline)."""

import socket
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from llmproxy.doctor import probes
from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.doctor.probes import ProbeOutcome
from llmproxy.environment import PROXY_VARIABLES, bypassing_entry
from llmproxy.providers.compatible import LOOPBACK_HOSTS


def proxy_checks(environ: Mapping[str, str], under_llmproxy: bool) -> list[Check]:
    """Under llmproxy: what it sets. From this shell: what is set, and whether something listens there."""
    if under_llmproxy:
        url = environ["HTTPS_PROXY"]
        names = ", ".join(PROXY_VARIABLES)
        detail = f"llmproxy sets {names} to its proxy's URL (a free port each run: here {url})"
        return [Check(Section.PROXY, "proxy", Status.OK, detail)]
    status, why, fix = _routed(environ)
    if why == _NOT_SET:
        detail = f"{why}: clients started from this shell do not go through llmproxy"
        return [Check(Section.PROXY, "HTTPS_PROXY", status, detail, fix)]
    found = [Check(Section.PROXY, "HTTPS_PROXY", status, why, fix)]
    upper, lower = environ.get("HTTPS_PROXY", ""), environ.get("https_proxy", "")
    if upper and lower and upper != lower:
        detail = f"HTTPS_PROXY={upper} but https_proxy={lower}: curl reads only the second"
        found.append(Check(Section.PROXY, "https_proxy", Status.WARN, detail, "set both to the same URL"))
    return found


def host_checks(
    hosts: Sequence[str], environ: Mapping[str, str], proxy: str, bundle: Path, under_llmproxy: bool
) -> list[Check]:
    """Whether the environment sends each host through llmproxy. From this shell without a proxy to send them
    to (no HTTPS_PROXY, or nothing listening there), none goes: one finding, as the proxy variable's. Else each
    host: skipped by NO_PROXY (fail), or fetched through the doctor's proxy (trusting its bundle, so that only
    the routing is judged)."""
    if not under_llmproxy and (routed := _routed(environ))[0] is not Status.OK:
        status, why, fix = routed
        return [Check(Section.HOSTS, "provider hosts", status, f"none goes through llmproxy: {why}", fix)]
    through = "llmproxy" if under_llmproxy else f"the proxy at {_proxy_url(environ)}"
    no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    probing = {**probes.without_no_proxy(environ), "SSL_CERT_FILE": str(bundle)}
    found: dict[str, Check] = {}
    for host in hosts:
        if entry := bypassing_entry(host, no_proxy):
            detail = f"NO_PROXY has {entry!r}: requests to {host} skip llmproxy"
            where = "for the run: NO_PROXY= llmproxy record …" if under_llmproxy else "in this shell"
            found[host] = Check(Section.HOSTS, host, Status.FAIL, detail, f"remove {entry!r} from NO_PROXY {where}")
    with ThreadPoolExecutor(max_workers=4) as pool:
        url = "https://{}" + probes.PATH
        running = {
            host: pool.submit(probes.python, "python", sys.executable, proxy, url.format(host), probing)
            for host in hosts
            if host not in found
        }
        for host, future in running.items():
            result = future.result()
            if result.outcome is ProbeOutcome.TRUSTED:
                found[host] = Check(Section.HOSTS, host, Status.OK, f"goes through {through} (CONNECT and TLS for it)")
            else:
                found[host] = Check(Section.HOSTS, host, Status.FAIL, f"the proxy did not answer: {result.detail}")
    return [found[host] for host in hosts]


_NOT_SET = "HTTPS_PROXY is not set"
_START = "`llmproxy record --cassette c.json -- CMD`, or paste the `export` lines llmproxy prints without a CMD"


def _proxy_url(environ: Mapping[str, str]) -> str:
    return environ.get("HTTPS_PROXY") or environ.get("https_proxy") or ""


def _routed(environ: Mapping[str, str]) -> tuple[Status, str, str]:
    """Where this shell's environment sends HTTPS requests: to a proxy that listens (ok), to none (warn: not
    every shell is meant to use one), to one that has stopped (fail); what it is, and the fix."""
    url = _proxy_url(environ)
    if not url:
        return Status.WARN, _NOT_SET, f"run the client under llmproxy: {_START}"
    return _listening(url, _START)


def _listening(url: str, start: str) -> tuple[Status, str, str]:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host, port = parts.hostname or "", parts.port or 8080
    if host not in LOOPBACK_HOSTS:
        return Status.OK, f"{url}: a proxy on another machine (not checked: it is not llmproxy's)", ""
    try:
        with socket.create_connection((host, port), timeout=2):
            return Status.OK, f"{url}: a proxy listens there", ""
    except OSError:
        fix = f"unset the proxy variables, or start llmproxy again: {start}"
        return Status.FAIL, f"{url}: nothing listens there (an llmproxy that has stopped?)", fix
