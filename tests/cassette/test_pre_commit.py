"""The pre-commit hook docs/security.md documents, run by pre-commit itself on a real git commit: its
`.pre-commit-config.yaml` is taken from the page as written, and installed as a git hook in a new repository.
A `repo: local`, `language: system` hook installs nothing: this runs offline."""

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson

from tests.cassette.factory import ANTHROPIC_KEY
from tests.cassette.test_check import JOURNAL_HEAD, QUICKSTART, conflicted, journal_line

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # llmproxy and pre-commit, as the virtualenv a developer commits from has them


def documented_config() -> str:
    (block,) = re.findall(r"```yaml\n(repos:\n.*?)```", (ROOT / "docs" / "security.md").read_text(), re.DOTALL)
    return block


def environment(repo: Path) -> dict[str, str]:
    """A developer's: the virtualenv on PATH, and nothing of this machine's own git or pre-commit settings."""
    return {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(repo.parent),
        "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-cache"),
        "LLMPROXY_HOME": str(repo.parent / "llmproxy-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }


def run(repo: Path, *command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=repo, env=environment(repo), capture_output=True, text=True, timeout=120, check=False
    )


def git(repo: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return run(repo, "git", *arguments)


def test_the_documented_hook_stops_a_commit_of_what_check_refuses(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    folder = repo / "tests" / "cassettes" / "test_agent"
    folder.mkdir(parents=True)
    assert git(repo, "init", "-q", "-b", "main").returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(documented_config())
    (repo / "package.json").write_text(f'{{"token": "{ANTHROPIC_KEY}"}}')  # not a cassette: not the hook's
    installed = run(repo, BIN / "pre-commit", "install")
    assert installed.returncode == 0, installed.stderr

    clean = folder / "test_asks_for_the_weather[Oslo].json"  # as the pytest plugin names a parametrized test's
    clean.write_bytes(QUICKSTART.read_bytes())
    git(repo, "add", ".")
    committed = git(repo, "commit", "-q", "-m", "a clean cassette")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert "llmproxy cassette check" in committed.stdout + committed.stderr  # the hook ran, and passed

    leaked = folder / "test_greets.json.journal"
    leaked.write_bytes(JOURNAL_HEAD + journal_line(1, f"my key is {ANTHROPIC_KEY}"))
    clean.write_bytes(conflicted(QUICKSTART.read_bytes(), 6))
    git(repo, "add", ".")
    refused = git(repo, "commit", "-q", "-m", "a key and a conflict")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"tests/cassettes/test_agent/{clean.name}: cannot check: merge conflict markers at line 6" in said
    assert f"tests/cassettes/test_agent/{leaked.name}:line 2: $.request.body.json.messages[0].content: sk-ant:" in said
    assert ANTHROPIC_KEY not in said
    assert git(repo, "log", "--format=%s").stdout.splitlines() == ["a clean cassette"]

    leaked.unlink()
    clean.write_bytes(orjson.dumps({"llmproxy_cassette": 2, "exchanges": []}))
    git(repo, "add", "-A")
    refused = git(repo, "commit", "-q", "-m", "a cassette of another version")
    assert refused.returncode != 0
    assert "cannot check: unsupported cassette version 2 (this llmproxy reads 1)" in refused.stdout + refused.stderr
