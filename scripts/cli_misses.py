"""How long a deliberate replay miss takes to end each real coding CLI (the figures in docs/replay.md):

    .venv/bin/python scripts/cli_misses.py                 # llmproxy's default miss answer
    .venv/bin/python scripts/cli_misses.py --with-599      # also MockServer's 599, which clients retry

Each CLI (installed from package.json by scripts/setup.sh) is recorded against a local scripted upstream, as
the end-to-end tests do, then replayed with another prompt: the time is from starting `llmproxy replay` to the
CLI's exit, so it includes the CLI's own start — the first column, a replay that hits, is that baseline. The
machine's load shows in every column alike. Offline throughout.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clis import (  # noqa: E402
    CLIS,
    MISS_DIAGNOSTIC,
    REFUSED,
    around,
    cli_output_lines,
    record_scripted,
    replay_changed_prompt,
)
from tests.e2e.test_codex import codex_env  # noqa: E402
from tests.e2e.test_opencode import opencode_env  # noqa: E402
from tests.e2e.test_replay_claude import claude_env  # noqa: E402
from tests.e2e.test_replay_gemini import gemini_env  # noqa: E402

Environment = Callable[[Path], dict[str, str]]
SETUPS: dict[str, tuple[str, Environment, tuple[str, ...]]] = {
    "claude": ("api.anthropic.com", lambda root: claude_env(root, "sk-ant-api03-" + "m" * 86), ()),
    "codex": ("api.openai.com", lambda root: codex_env(root, "HTTPS provider"), ()),
    # as installed: its model traffic over a WebSocket; its plugin look-ups and metrics mapped to the stand-in
    "codex-websocket": (
        "api.openai.com",
        lambda root: codex_env(root, "default (WebSocket)"),
        ("chatgpt.com", "ab.chatgpt.com", "api.github.com"),
    ),
    "gemini": ("cloudcode-pa.googleapis.com", gemini_env, ()),
    "opencode": ("api.anthropic.com", opencode_env, ("registry.npmjs.org",)),
}


def measure(name: str, scratch: Path, statuses: list[str | None]) -> list[str]:
    cli = CLIS[name]
    host, environment, also = SETUPS[name]
    recorded, cassette, _ = record_scripted(cli, scratch, host, environment(scratch / "record"), *also)
    if recorded.returncode != 0:
        return [f"recording failed: {recorded.stderr[-300:]!r}"]
    root = scratch / "hit"
    started = time.monotonic()
    hit = around(cli, root, environment(root), "replay", "--cassette", str(cassette))
    cells = [f"{time.monotonic() - started:.1f} s" + ("" if hit.returncode == 0 else ", failed")]
    for number, status in enumerate(statuses):
        root = scratch / f"miss-{number}"
        options = ("--miss-status", status) if status else ()
        started = time.monotonic()
        try:
            miss = replay_changed_prompt(cli, root, environment(root), cassette, *options, timeout=900)
        except subprocess.TimeoutExpired:
            cells.append("over 15 min")
            continue
        seconds, run, after_miss = time.monotonic() - started, miss.run, miss.after_refusal
        shown = any(MISS_DIAGNOSTIC in line for line in cli_output_lines(run))
        requests = run.stderr.count(REFUSED)
        cells.append(
            f"{seconds:.1f} s ({'no miss' if after_miss is None else f'{after_miss:.1f} s after it'}), "
            f"{requests} request{'s' * (requests != 1)}"
            + ("" if shown else ", diagnostic not shown")
            + ("" if run.returncode else ", exit 0")
        )
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clis", nargs="*", metavar="CLI", help=f"of {', '.join(SETUPS)} (default: all)")
    parser.add_argument("--with-599", action="store_true", help="also time --miss-status 599 (minutes per CLI)")
    args = parser.parse_args()
    if unknown := [name for name in args.clis if name not in SETUPS]:
        parser.error(f"unknown CLI: {', '.join(unknown)}")
    statuses: list[str | None] = [None, "599"] if args.with_599 else [None]
    print(
        "| CLI | a replay that hits | a miss (default) |" + (" a miss, `--miss-status 599` |" if args.with_599 else "")
    )
    print("|---|---|---|" + ("---|" if args.with_599 else ""))
    for name in args.clis or SETUPS:
        binary = CLIS[name].binary
        if binary is None:
            print(f"{name}: not installed (scripts/setup.sh installs package.json)", file=sys.stderr)
            return 1
        version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()
        with tempfile.TemporaryDirectory() as scratch:
            cells = measure(name, Path(scratch), statuses)
        print(f"| {name} {next((w for w in version if w[:1].isdigit()), '')} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
