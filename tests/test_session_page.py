"""docs/session.md runs as written: each Python example in order, in one folder holding the files the page shows
(the later examples replay what the record example wrote), in this process, with no API key and no proxy in the
environment; what a `print(...)` line's comment says it prints is printed."""

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "session.md"
BLOCK = re.compile(r"(?:`([^`\n]+)`:\n\n)?```(python|json)\n(.*?)```", re.S)
PRINTED = re.compile(r"^\s*print\(.*\)  # (.+)$", re.M)


def said(comment: str) -> str:
    """What a comment says is printed: up to an ellipsis or a dash that starts a remark."""
    return comment.split("…")[0].split(" — ")[0].strip()


def test_every_example_runs_and_prints_what_it_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cassettes").mkdir()
    shutil.copy(ROOT / "cassettes" / "quickstart.json", tmp_path / "cassettes")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLMPROXY_HOME", str(tmp_path / "home"))
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "SSL_CERT_FILE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    blocks = BLOCK.findall(PAGE.read_text())
    for name, language, code in blocks:  # the files the page shows, written before any example runs
        if language == "json":
            (tmp_path / name).write_text(code)
    examples = 0
    for _, language, code in blocks:
        if language != "python":
            continue
        examples += 1
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(code, f"{PAGE}, example {examples}", "exec"), {"__name__": "__main__"})
        for comment in PRINTED.findall(code):
            assert said(comment) in output.getvalue(), (examples, comment, output.getvalue())
    assert examples == 5
