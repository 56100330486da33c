"""Regenerate tests/fixtures/captured/: the request bodies real coding CLIs send in a tool loop.

    .venv/bin/python scripts/capture_cli_requests.py claude codex codex-websocket gemini

Each CLI (installed from package.json by scripts/setup.sh) runs a scripted session against llmproxy's
encodings on a loopback server (tests/e2e/clis.py). Only bodies are kept — headers carry keys. Codex CLI in
its default configuration (`codex-websocket`) sends WebSocket messages: each is kept as sent, the warm-up
(`generate: false`) first, as `codex-websocket-VERSION-messageN.json`.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clis import CLIS, FINAL_TEXT, run_session  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("clis", nargs="+", choices=sorted(CLIS))
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "captured")
    args = parser.parse_args()
    for name in args.clis:
        cli = CLIS[name]
        if cli.binary is None:
            print(f"{name}: not installed (run scripts/setup.sh, which installs package.json)", file=sys.stderr)
            return 1
        session = run_session(cli, cli.binary)
        if session.process.returncode != 0 or FINAL_TEXT not in session.process.stdout:
            print(f"{name} did not finish the scripted session:\n{session.process.stderr[-3000:]}", file=sys.stderr)
            return 1
        args.out.mkdir(parents=True, exist_ok=True)
        kept, kind = (session.messages, "message") if cli.websocket else (session.bodies, "turn")
        for number, body in enumerate(kept, 1):
            target = args.out / f"{name}-{session.version}-{kind}{number}.json"
            record = {"cli": cli.name, "version": session.version, "body": body}
            target.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
