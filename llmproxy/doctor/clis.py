"""The coding CLIs people run through llmproxy: how each reaches its API, which variables it reads, and
which version is installed. docs/clis.md describes each, from each CLI's own documentation.

A CLI that reads the proxy variables is recorded as it runs (`llmproxy record -- claude …`); one that does
not needs its base URL pointed at llmproxy (`--reverse URL`, or `llmproxy mock`'s base URL).
"""

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from llmproxy.doctor.findings import Check, Section, Status
from llmproxy.providers.rules import ANTHROPIC_HOSTS, CODE_ASSIST_HOSTS, CODEX_HOSTS, GEMINI_HOSTS, OPENAI_HOSTS

_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")


@dataclass(frozen=True, slots=True)
class KnownCli:
    name: str
    executables: tuple[str, ...]
    runtime: str  # the client family whose trust it uses (families.py): node, bun, codex, go, python
    proxy: str  # how it reaches the API through llmproxy
    ca_variables: tuple[str, ...]  # the variables it reads a CA from, first wins
    base_url: str  # the variable or setting for its base URL, "" when it has none
    hosts: tuple[str, ...]

    @property
    def reads_proxy_variables(self) -> bool:
        return self.proxy.startswith("HTTPS_PROXY")


KNOWN_CLIS: tuple[KnownCli, ...] = (
    KnownCli(
        "Claude Code",
        ("claude",),
        "bun",
        "HTTPS_PROXY (its own proxy agent)",
        ("NODE_EXTRA_CA_CERTS",),
        "ANTHROPIC_BASE_URL",
        ANTHROPIC_HOSTS,
    ),
    KnownCli(
        "Codex CLI",
        ("codex",),
        "codex",
        "HTTPS_PROXY (then ALL_PROXY)",
        ("CODEX_CA_CERTIFICATE", "SSL_CERT_FILE"),
        "OPENAI_BASE_URL, or model_providers.<id>.base_url in ~/.codex/config.toml",
        OPENAI_HOSTS + CODEX_HOSTS,
    ),
    KnownCli(
        "Gemini CLI",
        ("gemini",),
        "node",
        "HTTPS_PROXY (an undici proxy dispatcher)",
        ("NODE_EXTRA_CA_CERTS",),
        "GOOGLE_GEMINI_BASE_URL, CODE_ASSIST_ENDPOINT",
        GEMINI_HOSTS[:1] + CODE_ASSIST_HOSTS,
    ),
    KnownCli(
        "opencode",
        ("opencode",),
        "bun",
        "HTTPS_PROXY, with NO_PROXY=localhost,127.0.0.1 (its interface talks to a local server)",
        ("NODE_EXTRA_CA_CERTS",),
        "the provider's baseURL in opencode.json",
        ANTHROPIC_HOSTS + OPENAI_HOSTS,
    ),
    KnownCli(
        "GitHub Copilot CLI",
        ("copilot",),
        "node",
        "HTTPS_PROXY",
        ("NODE_EXTRA_CA_CERTS",),
        "",
        ("api.githubcopilot.com",),
    ),
    KnownCli(
        "aider",
        ("aider",),
        "python",
        "HTTPS_PROXY (httpx)",
        ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"),
        "OPENAI_API_BASE, ANTHROPIC_BASE_URL",
        ANTHROPIC_HOSTS + OPENAI_HOSTS,
    ),
    KnownCli(
        "Ollama",
        ("ollama",),
        "go",
        "none: a local server; point clients at llmproxy's base URL instead",
        (),
        "OLLAMA_HOST",
        (),
    ),
)


@dataclass(frozen=True, slots=True)
class Installed:
    cli: KnownCli
    path: Path
    version: str | None  # None: `--version` did not say


def find(cli: KnownCli, environ: Mapping[str, str], extra_paths: Sequence[Path] = ()) -> Path | None:
    """Where `cli` would be run from: the command's PATH, then `extra_paths` (a project's node_modules/.bin)."""
    search = os.pathsep.join([environ.get("PATH", ""), *map(str, extra_paths)])
    for executable in cli.executables:
        if found := shutil.which(executable, path=search):
            return Path(found)
    return None


def version_of(path: Path, environ: Mapping[str, str], timeout: float = 15.0) -> str | None:
    """The first version number `PATH --version` prints, or None (it failed, or printed none in time)."""
    try:
        done = subprocess.run(
            [str(path), "--version"], env=dict(environ), capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(done.stdout or done.stderr)
    return found.group(0) if found else None


def installed(
    environ: Mapping[str, str], extra_paths: Sequence[Path] = (), command: Sequence[str] = ()
) -> list[Installed]:
    """The known CLIs found, with their versions; the command's own first, where the command names it (by a
    path, or on PATH)."""
    wanted = named(command)
    paths = {}
    for cli in KNOWN_CLIS:
        path = Path(command[0]) if cli == wanted and "/" in command[0] else find(cli, environ, extra_paths)
        if path is not None and path.exists():
            paths[cli] = path
    with ThreadPoolExecutor(max_workers=4) as pool:  # a Node CLI takes a second or two to say its version
        versions = dict(zip(paths, pool.map(lambda path: version_of(path, environ), paths.values()), strict=True))
    found = [Installed(cli, path, versions[cli]) for cli, path in paths.items()]
    return sorted(found, key=lambda item: item.cli != wanted)


def named(command: Sequence[str]) -> KnownCli | None:
    """The known CLI a command runs, by its executable's name."""
    if not command:
        return None
    name = Path(command[0]).name
    return next((cli for cli in KNOWN_CLIS if name in cli.executables), None)


def checks(
    environ: Mapping[str, str], command: Sequence[str], extra_paths: Sequence[Path] = (), *, any_cli: bool = True
) -> list[Check]:
    """The known CLIs installed that the command may start, each with its version, how it reaches its API
    through llmproxy and where it takes its CA from: with `any_cli` (no command, one that may start any
    client, or `--all`) every one, the command's own first; else only the CLI the command is, if any."""
    wanted = named(command)
    if wanted is None and not any_cli:
        detail = f"not checked: {Path(command[0]).name} runs none of them (--all checks them all)"
        return [Check(Section.CLIS, "coding CLIs", Status.SKIPPED, detail)]
    found = [item for item in installed(environ, extra_paths, command) if any_cli or item.cli == wanted]
    if wanted is not None and all(item.cli != wanted for item in found):
        return [Check(Section.CLIS, wanted.name, Status.FAIL, f"{command[0]} is not found", "install it")]
    if not found:
        return [Check(Section.CLIS, "coding CLIs", Status.SKIPPED, "none of the known coding CLIs is on PATH")]
    return [_check(item, environ) for item in found]


def _check(item: Installed, environ: Mapping[str, str]) -> Check:
    cli = item.cli
    name = f"{cli.name} {item.version or '(version unknown)'}"
    trusts = f"; CA from {' or '.join(cli.ca_variables)}" if cli.ca_variables else ""
    base = f"; base URL: {cli.base_url}" if cli.base_url else ""
    detail = f"{item.path}: {cli.proxy}{trusts}{base}"
    if not cli.reads_proxy_variables:
        fix = f"point {cli.base_url} at llmproxy: `llmproxy mock` prints its base URL; `llmproxy record --reverse URL`"
        return Check(Section.CLIS, name, Status.WARN, detail, fix)
    no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    if "NO_PROXY=localhost" in cli.proxy and not {"localhost", "127.0.0.1"} <= set(no_proxy.replace(",", " ").split()):
        return Check(Section.CLIS, name, Status.WARN, detail, "run it with NO_PROXY=localhost,127.0.0.1")
    return Check(Section.CLIS, name, Status.OK, detail)
