"""Regenerate the committed example cassettes in cassettes/, recorded through `llmproxy record` from real
clients talking to a local stand-in for api.anthropic.com (so no key and no network are needed):

    .venv/bin/python scripts/record_examples.py

* `cassettes/quickstart.json`: scripts/quickstart.py (the official Anthropic SDK, streaming) — the README's
  first command replays it;
* `cassettes/claude-code-tool-loop.json`: Claude Code (from package.json) running a Bash tool loop;
* `cassettes/codex-tool-loop.json`: the Codex CLI (from package.json) running a shell tool loop over the
  Responses API (api.openai.com mapped to a local stand-in).
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llmproxy.model import Completion, StopReason, Usage  # noqa: E402
from tests.certs import make_test_ca  # noqa: E402
from tests.e2e.clis import CLAUDE, CODEX, ScriptedServer, record_scripted  # noqa: E402
from tests.e2e.test_replay_codex import codex_env  # noqa: E402

ANSWER = (
    "It lets you record real LLM exchanges once, then replay them offline in CI: tests run free, fast and "
    "deterministic, and fail loudly when your code starts sending something different."
)


def record(cassette: Path, turns: list[Completion], command: list[str], env: dict[str, str], cwd: Path) -> None:
    cassette.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        upstream_ca = make_test_ca(Path(scratch), ("api.anthropic.com",))
        upstream = ScriptedServer(turns, tls=upstream_ca.server_context)
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "llmproxy",
                    "record",
                    "--cassette",
                    str(cassette),
                    "--map",
                    f"api.anthropic.com={upstream.url}",
                    "--upstream-ca",
                    str(upstream_ca.cert_path),
                    "--",
                    *command,
                ],
                env=env,
                cwd=cwd,
                check=True,
            )
        finally:
            upstream.close()


def main() -> int:
    out = ROOT / "cassettes"
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-example"}
        answer = [Completion(text=ANSWER, stop_reason=StopReason.END_TURN, usage=Usage(24, 38))]
        record(out / "quickstart.json", answer, [sys.executable, str(ROOT / "scripts" / "quickstart.py")], env, ROOT)
        if CLAUDE.binary is None:
            print("claude is not installed (scripts/setup.sh installs it): skipped its cassette", file=sys.stderr)
            return 1
        work = Path(home) / "work"
        work.mkdir()
        claude_env = env | {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        record(out / "claude-code-tool-loop.json", CLAUDE.turns, [CLAUDE.binary, *CLAUDE.argv], claude_env, work)
    if CODEX.binary is None:
        print("codex is not installed (scripts/setup.sh installs it): skipped its cassette", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        recorded, cassette, _ = record_scripted(CODEX, root, "api.openai.com", codex_env(root / "record"))
        if recorded.returncode != 0:
            print(recorded.stderr[-3000:], file=sys.stderr)
            return 1
        (out / "codex-tool-loop.json").write_bytes(cassette.read_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
