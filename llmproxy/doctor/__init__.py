"""`llmproxy doctor [-- CMD]`: will this command's traffic go through llmproxy and be trusted?

It checks, with the environment the command would get under llmproxy (or, with no command, this shell's):
the CA; the proxy variables; for each client family the command would use, whether it trusts the CA (by
running a real client of that family through a proxy on 127.0.0.1); that the environment sends the provider
hosts the command calls through the proxy; and the known coding CLIs installed that the command may start,
their versions, and how each is pointed at llmproxy. Each finding comes with its fix. The caller runs the
proxy (`llmproxy.cli.doctor`).
"""

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509

from llmproxy.ca import CertificateAuthority
from llmproxy.doctor import clis, families, routing, trust
from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.egress import is_loopback
from llmproxy.environment import BASE_URL_VARIABLES, child_environment, proxy_environment
from llmproxy.providers.rules import (
    ANTHROPIC_HOSTS,
    CODE_ASSIST_HOSTS,
    CODEX_HOSTS,
    COHERE_HOSTS,
    GEMINI_HOSTS,
    OPENAI_HOSTS,
    VOYAGE_HOSTS,
)

PROVIDER_HOSTS = (
    *ANTHROPIC_HOSTS,
    *OPENAI_HOSTS,
    *CODEX_HOSTS,
    GEMINI_HOSTS[0],
    *CODE_ASSIST_HOSTS,
    "bedrock-runtime.us-east-1.amazonaws.com",
    COHERE_HOSTS[0],
    VOYAGE_HOSTS[0],
)


def diagnose(
    command: Sequence[str],
    environ: Mapping[str, str],
    proxy: str,
    ca: CertificateAuthority,
    bundle: Path,
    *,
    every_family: bool = False,
    extra_paths: Sequence[Path] = (),
) -> list[Check]:
    """Every check, in the order they are shown. `proxy`: the doctor's own proxy (offline) with `ca`."""
    under_llmproxy = bool(command)
    tested = child_environment(environ, proxy_environment(proxy, ca.cert_path, bundle)) if command else environ
    use = families.of_command(command, environ)
    if every_family:
        use = families.every_family(use)
    cli = clis.named(command)
    # the hosts the command's configuration points at, else the ones its CLI calls, else every provider's
    hosts = configured_hosts(environ) or (cli.hosts if cli is not None and cli.hosts else PROVIDER_HOSTS)
    return [
        _ca_check(ca),
        *routing.proxy_checks(tested, under_llmproxy),
        *trust.checks(use, tested, proxy, hosts[0], ca, under_llmproxy),
        *routing.host_checks(hosts, tested, proxy, bundle, under_llmproxy),
        *clis.checks(tested, command, extra_paths, any_cli=use.any_client),
    ]


# the variables a command's configuration names its API's base URL in: the SDKs' and CLIs' own
# (--base-url-env sets them), the GitHub Copilot CLI's own-key mode, and litellm's older spelling
CONFIGURED_BASE_URLS = (
    *(name for name in BASE_URL_VARIABLES if name != "OLLAMA_HOST"),
    "COPILOT_PROVIDER_BASE_URL",
    "OPENAI_API_BASE",
)


def configured_hosts(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The API hosts the environment's base-URL variables point at, in `CONFIGURED_BASE_URLS` order; a base URL
    on this machine (llmproxy's own, a local model server) is reached without the proxy, and left out."""
    hosts = []
    for name in CONFIGURED_BASE_URLS:
        try:
            host = urlsplit(environ.get(name, "").strip()).hostname
        except ValueError:
            continue
        if host and not is_loopback(host) and host not in hosts:
            hosts.append(host)
    return tuple(hosts)


def _ca_check(ca: CertificateAuthority) -> Check:
    certificate = x509.load_pem_x509_certificate(ca.cert_path.read_bytes())
    expires = certificate.not_valid_after_utc
    detail = f"{ca.cert_path} (expires {expires:%Y-%m-%d})"
    if expires - datetime.datetime.now(datetime.UTC) < datetime.timedelta(days=30):
        fix = f"move {ca.directory} aside: llmproxy makes a new CA on its next run (clients must trust it again)"
        return Check(Section.CA, "certificate", Status.WARN, f"{detail}: expires within 30 days", fix)
    return Check(Section.CA, "certificate", Status.OK, detail)
