"""The client families whose trust `llmproxy doctor` checks, which a command would use, and the fix for each.

A probed family runs a real client (`probes`); a read family (`READ`) is judged from the file its CA
variable names, because its client cannot be run on its own (Codex, Go programs, Bun-compiled CLIs — known
by name, or by the section Bun puts in the binary: `binaries`).
"""

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from llmproxy.doctor import clis
from llmproxy.doctor.binaries import bun_compiled

PYTHON_FAMILIES = ("python", "requests", "httpx", "httpx2", "botocore")
PROBED = (*PYTHON_FAMILIES, "node", "curl", "openssl", "java")
READ = ("codex", "go", "bun")

# Where each family takes its trusted roots from, first match wins.
TRUSTS = {
    "python": "SSL_CERT_FILE, else OpenSSL's default file (Python's ssl module, urllib)",
    "requests": "REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, else certifi",
    "httpx": "SSL_CERT_FILE, else certifi (the OpenAI SDK, and most Python SDKs)",
    "httpx2": "SSL_CERT_FILE, else certifi (the Anthropic SDK 2.x)",
    "botocore": "AWS_CA_BUNDLE, else ca_bundle in ~/.aws/config, else certifi (boto3, Bedrock)",
    "node": "its bundled roots plus NODE_EXTRA_CA_CERTS (read at start)",
    "curl": "CURL_CA_BUNDLE, else the CA file it was built with",
    "openssl": "SSL_CERT_FILE or SSL_CERT_DIR, else the system's store (openssl, and programs linked to it)",
    "java": "its cacerts, or -Djavax.net.ssl.trustStore (it reads no CA variable)",
    "codex": "CODEX_CA_CERTIFICATE, else SSL_CERT_FILE, added to the system's roots",
    "go": "SSL_CERT_FILE or SSL_CERT_DIR, else the system's store (on macOS: the keychain only)",
    "bun": "its bundled roots plus NODE_EXTRA_CA_CERTS (Claude Code, opencode)",
}

# The files Go and Rust's native-certs read when no variable says otherwise (Linux distributions).
SYSTEM_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
)


@dataclass(frozen=True, slots=True)
class Use:
    """The families a command would use, and the Python that would run its Python clients. `guessed`: those it
    only may use (a shell script, `make`, `--all`): one of them that does not trust the CA is a warning, not a
    failure of the verdict — nothing says the command uses it."""

    families: tuple[str, ...]
    python: str
    why: str
    guessed: frozenset[str] = frozenset()

    @property
    def any_client(self) -> bool:
        """Every family: the command may start any client (a shell script, `make`), or none was given."""
        return set(self.families) >= {*PROBED, *READ}


def of_command(command: Sequence[str], environ: Mapping[str, str]) -> Use:
    """What `command` would use, judged from its executable: a known CLI's runtime, a Python or Node
    interpreter (or a script run by one), curl, openssl, java; anything else may start any client."""
    everything = Use((*PROBED, *READ), sys.executable, "every family: no command given")
    if not command:
        return everything
    name = Path(command[0]).name
    if (cli := clis.named(command)) is not None and cli.runtime != "python":
        return Use((cli.runtime,), sys.executable, f"{cli.name} runs on {cli.runtime}")
    executable = shutil.which(command[0], path=environ.get("PATH")) or command[0]
    if bun_compiled(Path(executable)):
        return Use(("bun",), sys.executable, f"{name} is a Bun-compiled binary")
    interpreter = _interpreter(Path(executable), environ) or ""
    if _is_python(name):
        return Use(PYTHON_FAMILIES, executable, f"{name} is Python")
    if interpreter and _is_python(Path(interpreter).name):
        return Use(PYTHON_FAMILIES, interpreter, f"{name} is a Python script ({interpreter})")
    if name in ("node", "npx", "npm") or Path(interpreter).name == "node":
        return Use(("node",), sys.executable, f"{name} runs on Node")
    if name in ("curl", "openssl"):
        return Use((name,), sys.executable, f"{name} itself")
    if name in ("java", "mvn", "gradle", "jshell"):
        return Use(("java",), sys.executable, f"{name} runs on the JVM")
    families = everything.families
    return Use(families, sys.executable, f"every family: {name} may start any client", frozenset(families))


def every_family(use: Use) -> Use:
    """`--all`: every family, those the command is not known to use guessed."""
    families = of_command((), {}).families
    known = set(use.families) - use.guessed
    return Use(families, use.python, "every family (--all)", frozenset(families) - known)


def fix(family: str, under_llmproxy: bool, java_store: Path, env_file: Path) -> str:
    """What to do when `family` does not trust the CA. `under_llmproxy`: the command runs with llmproxy's
    variables (`llmproxy record -- CMD`); otherwise the client runs from this shell."""
    if family == "java":
        return (
            "Java reads no CA or proxy variable: `llmproxy ca --install` writes a trust store with the CA; run Java"
            f" with JAVA_TOOL_OPTIONS='-Djavax.net.ssl.trustStore={java_store}"
            " -Djavax.net.ssl.trustStorePassword=changeit -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=PORT'"
            " (or `sudo llmproxy ca --install --system` adds the CA to the JDK's cacerts)"
        )
    if under_llmproxy:
        if family == "curl":
            return "a ~/.curlrc `cacert` or `capath` line overrides CURL_CA_BUNDLE: remove it for the run"
        return "`sudo llmproxy ca --install --system` adds the CA to the system's store"
    return (
        "run the client under llmproxy (`llmproxy record -- CMD` sets the CA variables); or, for this shell,"
        f" `llmproxy ca --install` then `. {env_file}`; or `sudo llmproxy ca --install --system`"
    )


def read_variable(family: str, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """For a read family: the variable that names its CA file, and the file (None: the system's store)."""
    if family == "codex" and environ.get("CODEX_CA_CERTIFICATE"):
        return "CODEX_CA_CERTIFICATE", environ["CODEX_CA_CERTIFICATE"]
    if family == "bun":
        return "NODE_EXTRA_CA_CERTS", environ.get("NODE_EXTRA_CA_CERTS") or None
    if environ.get("SSL_CERT_FILE"):
        return "SSL_CERT_FILE", environ["SSL_CERT_FILE"]
    return "the system's store", next((path for path in SYSTEM_BUNDLES if os.path.exists(path)), None)


def _is_python(name: str) -> bool:
    return name == "python" or (name.startswith("python") and name[6:].replace(".", "").isdigit())


def _interpreter(executable: Path, environ: Mapping[str, str]) -> str | None:
    """The interpreter a script's `#!` line names (through `env`), or None."""
    try:
        with executable.open("rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
        return shutil.which(words[0], path=environ.get("PATH")) if words else None
    return words[0] if words else None
