"""The environment a child process needs to use the proxy and trust its CA, for the clients people run.

Proxy variables go in both cases because tools differ (curl reads only lower-case `http_proxy`, Go and
Rust read either). `NO_PROXY` is left as the user had it. CA variables that *replace* a client's roots
(`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`, `AWS_CA_BUNDLE`) point at a combined bundle, the
system roots plus llmproxy's CA; those that *add* to the roots (`NODE_EXTRA_CA_CERTS`, Codex's
`CODEX_CA_CERTIFICATE`) point at the CA alone.
"""

import os
import shlex
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from pathlib import Path

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
BUNDLE_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "AWS_CA_BUNDLE")
ADDED_CA_VARIABLES = ("NODE_EXTRA_CA_CERTS", "CODEX_CA_CERTIFICATE")
CONTROL_URL_VARIABLE = "LLMPROXY_CONTROL_URL"  # the runtime control API's chaos endpoint (llmproxy.control)
CONTROL_TOKEN_VARIABLE = "LLMPROXY_CONTROL_TOKEN"  # its bearer token, random per run
CONTROL_READ_ONLY_TOKEN_VARIABLE = "LLMPROXY_CONTROL_TOKEN_READONLY"  # a token that may only read, random per run
TEST_ID_VARIABLE = "LLMPROXY_TEST_ID"  # the running test's id (the pytest plugin's: its node id), for the API's testId


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


# The variables clients read a base URL from, and the path each expects after it (--base-url-env).
BASE_URL_VARIABLES: dict[str, str] = {
    "ANTHROPIC_BASE_URL": "",  # Anthropic SDKs, Claude Code
    "OPENAI_BASE_URL": "/v1",  # OpenAI SDKs, openai-agents, litellm
    "GOOGLE_GEMINI_BASE_URL": "",  # google-genai, the Gemini CLI with an API key
    "GOOGLE_VERTEX_BASE_URL": "",  # google-genai and the Gemini CLI on Vertex AI
    "CODE_ASSIST_ENDPOINT": "",  # the Gemini CLI logged in with Google
    "OLLAMA_HOST": "",  # the Ollama clients
}


def base_url_environment(base_url: str, reverse_urls: Sequence[str], per_provider: bool) -> dict[str, str]:
    """`LLMPROXY_BASE_URL` (the base URL that serves every provider by path), `LLMPROXY_REVERSE_URL_<n>` for
    each `--reverse` listener, and with `per_provider` each provider's own base-URL variable."""
    variables = {"LLMPROXY_BASE_URL": base_url} if base_url else {}
    variables |= {f"LLMPROXY_REVERSE_URL_{n}": url for n, url in enumerate(reverse_urls, 1)}
    if per_provider and base_url:
        variables |= {name: base_url + path for name, path in BASE_URL_VARIABLES.items()}
    return variables


def child_environment(base: Mapping[str, str], variables: Mapping[str, str]) -> dict[str, str]:
    """`base` (usually os.environ) with llmproxy's variables on top."""
    return {**base, **variables}


@contextmanager
def applied(variables: Mapping[str, str], environ: MutableMapping[str, str] = os.environ) -> Iterator[None]:
    """`variables` set in `environ` (this process's, by default) inside the block, and each put back as it was
    after: its old value, or unset. Clients created inside read them (SDKs read the proxy and CA variables when a
    client is made); subprocesses started inside inherit them."""
    saved = {name: environ.get(name) for name in variables}
    environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value


def bypassing_entry(host: str, no_proxy: str) -> str | None:
    """The NO_PROXY entry that sends `host` around the proxy (`*`, the host, or a domain it is in), or None.
    Entries are separated by commas or spaces, as curl, Go and Python read them."""
    for entry in no_proxy.replace(",", " ").split():
        name = entry.lower().lstrip("*").lstrip(".").split(":")[0]
        if entry == "*" or host == name or host.endswith("." + name):
            return entry
    return None


def export_lines(variables: Mapping[str, str]) -> str:
    """Ready-to-paste POSIX shell `export` lines."""
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in variables.items())
