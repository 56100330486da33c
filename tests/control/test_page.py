"""docs/control.md runs as written: its Python example in a folder holding the file the page shows, in this
process, with no proxy in the environment, printing what its comment says; and its curl example under
`llmproxy mock`, as a user would run it."""

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_session_page import BLOCK, PRINTED, said

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "control.md"
SHELL = re.compile(r"```sh\n(.*?)```", re.S)
RUN_SECTION = "\n## Load, save and stop\n"  # its example runs in test_run_page.py


def page() -> str:
    """The page up to the run's own section."""
    return PAGE.read_text().split(RUN_SECTION)[0]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLMPROXY_HOME", str(tmp_path / "home"))
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "SSL_CERT_FILE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, language, code in BLOCK.findall(PAGE.read_text()):
        if language == "json" and name:  # a file the page names; the others are request bodies
            (tmp_path / name).write_text(code)
    return tmp_path


def test_the_python_example_runs_and_prints_what_it_says(folder: Path) -> None:
    [code] = [code for _, language, code in BLOCK.findall(page()) if language == "python"]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, f"{PAGE}, the Python example", "exec"), {"__name__": "__main__"})
    for comment in PRINTED.findall(code):
        assert said(comment) in output.getvalue(), (comment, output.getvalue())


def test_the_curl_example_reads_the_journal_of_a_running_mock(folder: Path) -> None:
    section = PAGE.read_text().split("\n## With curl\n", 1)[1].split("\n## ", 1)[0]
    [command] = SHELL.findall(section)
    llmproxy = [sys.executable, "-m", "llmproxy"]
    run = [*llmproxy, "mock", "--expectations", "expectations.json", "--", "sh", "-c", command]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout[result.stdout.index("{") :])
    assert answer["entries"] == []
    assert answer["counts"]["capacity"] == 1000
