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

from cryptography import x509

from llmproxy.ca import CertificateAuthority
from llmproxy.doctor import clis, families, routing, trust
from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.environment import child_environment, proxy_environment
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
        use = families.Use(families.of_command((), environ).families, use.python, "every family (--all)")
    cli = clis.named(command)
    hosts = cli.hosts if cli is not None and cli.hosts else PROVIDER_HOSTS
    return [
        _ca_check(ca),
        *routing.proxy_checks(tested, under_llmproxy),
        *trust.checks(use, tested, proxy, hosts[0], ca, under_llmproxy),
        *routing.host_checks(hosts, tested, proxy, bundle, under_llmproxy),
        *clis.checks(tested, command, extra_paths, any_cli=use.any_client),
    ]


def _ca_check(ca: CertificateAuthority) -> Check:
    certificate = x509.load_pem_x509_certificate(ca.cert_path.read_bytes())
    expires = certificate.not_valid_after_utc
    detail = f"{ca.cert_path} (expires {expires:%Y-%m-%d})"
    if expires - datetime.datetime.now(datetime.UTC) < datetime.timedelta(days=30):
        fix = f"move {ca.directory} aside: llmproxy makes a new CA on its next run (clients must trust it again)"
        return Check(Section.CA, "certificate", Status.WARN, f"{detail}: expires within 30 days", fix)
    return Check(Section.CA, "certificate", Status.OK, detail)
