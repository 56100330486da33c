"""Does a client family trust llmproxy's CA? Each probe runs a real client of that family in a child process,
with the environment under test, through a proxy on 127.0.0.1 to `https://HOST/llmproxy-doctor`: the proxy
presents a certificate its CA signed, so the client verifies it (and gets `TOKEN` back), fails on the
certificate (untrusted), or fails otherwise. Nothing leaves the machine. The clients are in `clients/`.

Where no client can be run on its own (Codex, Go programs, Bun-compiled CLIs), `holds_certificate` reads
the file the family takes its CA from instead.
"""

import json
import shutil
import subprocess
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509

TOKEN = "llmproxy-doctor-ok"
PATH = "/llmproxy-doctor"
TIMEOUT = 30.0
CLIENTS = Path(__file__).resolve().parent / "clients"


class ProbeOutcome(StrEnum):
    """What a client probe found: whether the client trusts llmproxy's CA, or why it could not tell."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    FAILED = "failed"  # it could not tell: the client failed for another reason
    SKIPPED = "skipped"  # the client is not installed


@dataclass(frozen=True, slots=True)
class Result:
    outcome: ProbeOutcome
    detail: str


def python(family: str, interpreter: str, proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    """`family`: python (the ssl module, through urllib), requests, httpx, httpx2 or botocore (AWS)."""
    return _said(_run([interpreter, str(CLIENTS / "probe.py"), family, proxy, url, TOKEN], environ))


def node(proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    """Node's own TLS: its bundled roots plus NODE_EXTRA_CA_CERTS (read when node starts)."""
    return _said(_tool("node", [str(CLIENTS / "probe.js"), proxy, url, TOKEN], environ))


def java(proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    """The JVM's trust store: its cacerts, or -Djavax.net.ssl.trustStore from JAVA_TOOL_OPTIONS."""
    parts = urlsplit(proxy)
    arguments = [str(CLIENTS / "Probe.java"), parts.hostname or "", str(parts.port), url, TOKEN]
    return _said(_tool("java", arguments, environ))


def curl(proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    """curl: CURL_CA_BUNDLE, else the CA file it was built with."""
    done = _tool("curl", ["-sS", "--max-time", "30", "--noproxy", "", "--proxy", proxy, url], environ)
    if isinstance(done, Result):
        return done
    if done.returncode == 0 and TOKEN in done.stdout:
        return Result(ProbeOutcome.TRUSTED, "")
    outcome = ProbeOutcome.UNTRUSTED if done.returncode == 60 else ProbeOutcome.FAILED
    said = next((line for line in done.stderr.splitlines() if line.startswith("curl:")), "")
    return Result(outcome, said or _last_line(done.stderr) or f"exit {done.returncode}")


def openssl(proxy: str, url: str, environ: Mapping[str, str]) -> Result:
    """OpenSSL's default verify paths (SSL_CERT_FILE, SSL_CERT_DIR, else the system's), as `openssl s_client`
    and programs linked to OpenSSL verify."""
    host, via = urlsplit(url).hostname or "", urlsplit(proxy).netloc
    arguments = ["s_client", "-brief", "-verify_return_error", "-proxy", via, "-connect", f"{host}:443"]
    done = _tool("openssl", [*arguments, "-servername", host], environ, stdin="")
    if isinstance(done, Result):
        return done
    if done.returncode == 0:
        return Result(ProbeOutcome.TRUSTED, "")
    if errors := [line.strip() for line in done.stderr.splitlines() if "verify error" in line.lower()]:
        return Result(ProbeOutcome.UNTRUSTED, errors[0])
    return Result(ProbeOutcome.FAILED, _last_line(done.stderr) or f"exit {done.returncode}")


def without_no_proxy(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for a probe: a NO_PROXY entry would send it around the proxy, to the network (whether
    NO_PROXY skips a host is judged apart, `environment.bypassing_entry`)."""
    return {name: value for name, value in environ.items() if name.lower() != "no_proxy"}


def holds_certificate(bundle: str | Path | None, certificate: Path) -> bool:
    """Whether the PEM file `bundle` holds `certificate` (compared as certificates, not as text)."""
    if not bundle:
        return False
    try:
        wanted = x509.load_pem_x509_certificate(certificate.read_bytes())
        with warnings.catch_warnings():  # a system root or two break RFC 5280 (a negative serial): still roots
            warnings.simplefilter("ignore")
            return wanted in x509.load_pem_x509_certificates(Path(bundle).read_bytes())
    except (OSError, ValueError):
        return False


type Done = "subprocess.CompletedProcess[str] | Result"


def _tool(name: str, arguments: list[str], environ: Mapping[str, str], stdin: str | None = None) -> Done:
    executable = shutil.which(name, path=environ.get("PATH"))
    if executable is None:
        return Result(ProbeOutcome.SKIPPED, f"{name} is not on PATH")
    return _run([executable, *arguments], environ, stdin)


def _run(command: list[str], environ: Mapping[str, str], stdin: str | None = None) -> Done:
    try:
        return subprocess.run(
            command, env=dict(environ), input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return Result(ProbeOutcome.FAILED, f"{Path(command[0]).name} did not finish in {TIMEOUT:.0f} s")
    except OSError as error:
        return Result(ProbeOutcome.SKIPPED, f"cannot run {command[0]}: {error.strerror or error}")


def _said(done: Done) -> Result:
    """The JSON line a probe client printed."""
    if isinstance(done, Result):
        return done
    try:
        said = json.loads(done.stdout.strip().splitlines()[-1])
        return Result(ProbeOutcome(said["outcome"]), str(said["detail"]))
    except (IndexError, ValueError, KeyError, TypeError):
        return Result(ProbeOutcome.FAILED, _last_line(done.stderr or done.stdout) or f"exit {done.returncode}")


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1].strip()[:300] if lines else ""
