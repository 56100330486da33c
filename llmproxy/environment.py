"""The environment a child process needs to use the proxy and trust its CA, for the clients people run.

Proxy variables go in both cases because tools differ (curl reads only lower-case `http_proxy`, Go and
Rust read either). `NO_PROXY` is left as the user had it. CA variables that *replace* a client's roots
(`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`, `AWS_CA_BUNDLE`) point at a combined bundle, the
system roots plus llmproxy's CA; those that *add* to the roots (`NODE_EXTRA_CA_CERTS`, Codex's
`CODEX_CA_CERTIFICATE`) point at the CA alone.
"""

import shlex
from collections.abc import Mapping
from pathlib import Path

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
BUNDLE_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "AWS_CA_BUNDLE")
ADDED_CA_VARIABLES = ("NODE_EXTRA_CA_CERTS", "CODEX_CA_CERTIFICATE")
CONTROL_URL_VARIABLE = "LLMPROXY_CONTROL_URL"  # the runtime control API (llmproxy.intercept.control)
CONTROL_TOKEN_VARIABLE = "LLMPROXY_CONTROL_TOKEN"  # its bearer token, random per run


def proxy_environment(proxy_url: str, ca_cert: Path, bundle: Path) -> dict[str, str]:
    """The variables llmproxy sets (and only those)."""
    variables = dict.fromkeys(PROXY_VARIABLES, proxy_url)
    variables.update(ca_environment(ca_cert, bundle))
    # Node >= 24's built-in fetch honours the proxy variables only when asked to; older Node ignores it.
    variables["NODE_USE_ENV_PROXY"] = "1"
    return variables


def ca_environment(ca_cert: Path, bundle: Path) -> dict[str, str]:
    """The variables that make each client family trust the CA (what `llmproxy ca --install` exports)."""
    return dict.fromkeys(BUNDLE_VARIABLES, str(bundle)) | dict.fromkeys(ADDED_CA_VARIABLES, str(ca_cert))


def child_environment(base: Mapping[str, str], variables: Mapping[str, str]) -> dict[str, str]:
    """`base` (usually os.environ) with llmproxy's variables on top."""
    return {**base, **variables}


def export_lines(variables: Mapping[str, str]) -> str:
    """Ready-to-paste POSIX shell `export` lines."""
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in variables.items())
