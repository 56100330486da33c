"""Regenerate the committed example cassettes in cassettes/, recorded through `llmproxy record` from real
clients talking to a local stand-in for the provider (so no key and no network are needed), which reports
the usage the provider would: the prompt's size, its cache reads and writes (tests/e2e/clis.py):

    .venv/bin/python scripts/record_examples.py [quickstart] [claude-code] [codex-tool-loop] [codex-websocket]
                                                [gemini-cli] [opencode] [chaos]

* `cassettes/quickstart.json`: scripts/quickstart.py (the official Anthropic SDK, streaming) — the README's
  first command replays it;
* `cassettes/claude-code-tool-loop.json`: Claude Code (from package.json) running a Bash tool loop;
* `cassettes/codex-tool-loop.json`: the Codex CLI (from package.json) with an HTTPS provider, running a shell
  tool loop over the Responses API (api.openai.com mapped to a local stand-in);
* `cassettes/codex-websocket.json`: Codex CLI (from package.json) in its default configuration, its model
  traffic over a WebSocket to api.openai.com (a warm-up, then a tool loop on one connection), and its model
  list and plugin look-ups on chatgpt.com and api.github.com; its metrics upload turned off (`CODEX_QUIET`).
* `cassettes/gemini-cli-tool-loop.json`: the Gemini CLI, logged in with Google (Code Assist), the same loop
  with its shell tool, recorded as the end-to-end tests record it (tests/e2e/clis.py);
* `cassettes/opencode-tool-loop.json`: opencode on Anthropic, the same loop with its bash tool, likewise;
* `cassettes/chaos/recovered.json`, `cassettes/chaos/gave-up.json`: scripts/quickstart.py under injected 529s
  (`--fail 529@1 --fail-first 2`, then `--fail 529@1`): the SDK retries twice and gets its answer; or
  retries twice, is refused a third time and gives up (docs/chaos.md, `llmproxy verify resilience`).

With no name, all of them. cassettes/README.md says how to replay each.
"""

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llmproxy.model import Completion, StopReason  # noqa: E402
from tests.certs import make_test_ca  # noqa: E402
from tests.e2e.clis import CLAUDE, CODEX, GEMINI, OPENCODE, Cli, ScriptedServer, record_scripted  # noqa: E402
from tests.e2e.test_codex import codex_env  # noqa: E402
from tests.e2e.test_opencode import opencode_env  # noqa: E402
from tests.e2e.test_replay_gemini import gemini_env  # noqa: E402

CODEX_QUIET = ["-c", "analytics.enabled=false"]
ANSWER = (
    "It lets you record real LLM exchanges once, then replay them offline in CI: tests run free, fast and "
    "deterministic, and fail loudly when your code starts sending something different."
)


def record(
    cassette: Path,
    turns: list[Completion],
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    hosts: tuple[str, ...] = ("api.anthropic.com",),
    record_hosts: tuple[str, ...] = (),
    chaos: tuple[str, ...] = (),
) -> None:
    """Record `command` with each of `hosts` answered by the scripted upstream (and `record_hosts` recorded
    whatever they are), under the `chaos` options given (the command may then fail: that is the example)."""
    cassette.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        upstream_ca = make_test_ca(Path(scratch), hosts)
        upstream = ScriptedServer(turns, tls=upstream_ca.server_context)
        mapping = [arg for host in hosts for arg in ("--map", f"{host}={upstream.url}")]
        mapping += [arg for host in record_hosts for arg in ("--record-host", host)]
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "llmproxy",
                    "record",
                    "--cassette",
                    str(cassette),
                    *mapping,
                    "--upstream-ca",
                    str(upstream_ca.cert_path),
                    *chaos,
                    "--",
                    *command,
                ],
                env=env,
                cwd=cwd,
                check=not chaos,
            )
        finally:
            upstream.close()


def main() -> int:
    out = ROOT / "cassettes"
    names = set(sys.argv[1:]) or {
        "quickstart",
        "claude-code",
        "codex-tool-loop",
        "codex-websocket",
        "gemini-cli",
        "opencode",
        "chaos",
    }
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-example"}
        work = Path(home) / "work"
        work.mkdir()
        answer = [Completion(text=ANSWER, stop_reason=StopReason.END_TURN)]
        quickstart = [sys.executable, str(ROOT / "scripts" / "quickstart.py")]
        if "quickstart" in names:
            record(out / "quickstart.json", answer, quickstart, env, ROOT)
        if "chaos" in names:
            overloaded = ("--fail", "529@1", "--retry-after", "0.5", "--seed", "7")
            recovered = (*overloaded, "--fail-first", "2")
            record(out / "chaos" / "recovered.json", answer, quickstart, env, ROOT, chaos=recovered)
            record(out / "chaos" / "gave-up.json", answer, quickstart, env, ROOT, chaos=overloaded)
        for name, cli in (("claude-code", CLAUDE), ("codex-tool-loop", CODEX), ("codex-websocket", CODEX)):
            if name in names and cli.binary is None:
                print(f"{cli.name} is not installed (scripts/setup.sh installs it): skipped", file=sys.stderr)
                return 1
        if "claude-code" in names:
            claude_env = env | {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
            command = [str(CLAUDE.binary), *CLAUDE.argv]
            record(out / "claude-code-tool-loop.json", CLAUDE.turns, command, claude_env, work)
        if "codex-tool-loop" in names:  # its own provider, over HTTPS
            root = Path(home) / "codex-https"
            https_env = codex_env(root, "HTTPS provider")
            command = [str(CODEX.binary), *CODEX.argv]
            record(out / "codex-tool-loop.json", CODEX.turns, command, https_env, root / "work", ("api.openai.com",))
        if "codex-websocket" in names:  # no configuration file: Codex as installed, with an OpenAI key
            # a made-up key in a real key's shape: the committed cassette shows it redacted (cassette check passes)
            websocket_env = env | {"CODEX_API_KEY": "sk-proj-example-key-recorded-by-record-examples"}
            hosts = ("api.openai.com", "chatgpt.com", "api.github.com")
            # its metrics upload (~190 KB of OTLP JSON to ab.chatgpt.com, different every run) is no example
            command = [str(CODEX.binary), *CODEX_QUIET, *CODEX.argv]
            # its plugin look-up on GitHub is recorded too: the cassette then replays with nothing let out
            record(out / "codex-websocket.json", CODEX.turns, command, websocket_env, work, hosts, ("api.github.com",))
    gemini = ("cloudcode-pa.googleapis.com", gemini_env, ())
    # its plugin install from the npm registry: answered 404 by the local stand-in
    opencode = (
        "api.anthropic.com",
        lambda root: opencode_env(root, OPENCODE_DISABLE_MODELS_FETCH="1"),
        ("registry.npmjs.org",),
    )
    for cli, name, (host, environment, also) in ((GEMINI, "gemini-cli", gemini), (OPENCODE, "opencode", opencode)):
        if name in names and not record_cli(cli, out / f"{name}-tool-loop.json", host, environment, also):
            return 1
    return 0


def record_cli(
    cli: Cli, cassette: Path, host: str, environment: Callable[[Path], dict[str, str]], also: tuple[str, ...]
) -> bool:
    if cli.binary is None:
        print(f"{cli.name} is not installed (scripts/setup.sh installs it): skipped its cassette", file=sys.stderr)
        return False
    with tempfile.TemporaryDirectory() as scratch:
        run, recorded, _ = record_scripted(cli, Path(scratch), host, environment(Path(scratch) / "record"), *also)
        if run.returncode != 0:
            print(f"{cli.name} failed while recording:\n{run.stderr[-3000:]}", file=sys.stderr)
            return False
        text = recorded.read_text()
    # where the CLI is installed is this machine's business (the gemini-cli preset ignores it): the usual
    # global install stands in for it
    text = text.replace(str(ROOT / "node_modules"), "/usr/local/lib/node_modules")
    cassette.write_text(text)
    print(f"wrote {cassette}")
    return True


if __name__ == "__main__":
    sys.exit(main())
