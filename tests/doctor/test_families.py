"""Which client families a command uses, what NO_PROXY skips, and the CLIs' versions: plain rules."""

import os
import sys
from pathlib import Path

from llmproxy.doctor import clis, families
from llmproxy.doctor.findings import Status
from llmproxy.environment import bypassing_entry


def test_no_proxy_entries_skip_a_host_as_curl_go_and_python_read_them() -> None:
    assert bypassing_entry("api.openai.com", "localhost, .openai.com") == ".openai.com"
    assert bypassing_entry("api.openai.com", "openai.com") == "openai.com"
    assert bypassing_entry("api.openai.com", "*") == "*"
    assert bypassing_entry("api.openai.com", "api.openai.com:443") == "api.openai.com:443"
    assert bypassing_entry("api.openai.com", "notopenai.com,127.0.0.1") is None
    assert bypassing_entry("api.openai.com", "") is None


def test_a_command_uses_the_families_of_what_it_runs(tmp_path: Path) -> None:
    environ = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    script = tmp_path / "agent-tests"
    script.write_text(f"#!{sys.executable}\nprint('hi')\n")
    script.chmod(0o755)
    node_script = tmp_path / "tool"
    node_script.write_text("#!/usr/bin/env node\nconsole.log(1)\n")
    node_script.chmod(0o755)
    assert families.of_command(["claude", "-p", "hi"], environ).families == ("bun",)
    assert families.of_command(["codex", "exec"], environ).families == ("codex",)  # read from its CA variable
    python_use = families.of_command(["agent-tests"], environ)
    assert (python_use.families, python_use.python) == (families.PYTHON_FAMILIES, sys.executable)
    assert families.of_command(["python3", "x.py"], environ).families == families.PYTHON_FAMILIES
    assert families.of_command(["tool"], environ).families == ("node",)
    assert families.of_command(["make", "test"], environ).families == (*families.PROBED, *families.READ)


def test_installed_clis_are_found_with_their_versions(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    claude.chmod(0o755)
    ollama = tmp_path / "ollama"
    ollama.write_text("#!/bin/sh\necho 'ollama version is 0.9.2'\n")
    ollama.chmod(0o755)
    environ = {"PATH": str(tmp_path)}
    found = {check.name: check for check in clis.checks(environ, ["ollama", "serve"])}
    assert list(found) == ["Ollama 0.9.2", "Claude Code 2.1.332"]  # the command's own CLI first
    assert found["Claude Code 2.1.332"].status is Status.OK
    assert "HTTPS_PROXY" in found["Claude Code 2.1.332"].detail
    assert found["Ollama 0.9.2"].status is Status.WARN  # a local server: it needs a base URL, not a proxy
    assert "OLLAMA_HOST" in found["Ollama 0.9.2"].fix
    (missing,) = clis.checks(environ, ["gemini", "-p", "hi"])
    assert (missing.name, missing.status) == ("Gemini CLI", Status.FAIL)


def test_only_the_clis_a_command_may_start_are_checked(tmp_path: Path) -> None:
    """A command that runs one CLI is told about that one; a Python or Node program about none (it starts
    no CLI); a shell script or `make`, which may start any, about all of them."""
    for name, said in (("claude", "2.1.332 (Claude Code)"), ("ollama", "ollama version is 0.9.2")):
        (tmp_path / name).write_text(f"#!/bin/sh\necho '{said}'\n")
        (tmp_path / name).chmod(0o755)
    environ = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}

    def names(*command: str) -> list[str]:
        use = families.of_command(command, environ)
        return [check.name for check in clis.checks(environ, command, any_cli=use.any_client)]

    assert names("ollama", "serve") == ["Ollama 0.9.2"]  # not Claude Code's findings
    assert names("claude", "-p", "hi") == ["Claude Code 2.1.332"]
    assert names(sys.executable, "agent.py") == ["coding CLIs"]  # one line: not checked, and why
    (skipped,) = clis.checks(environ, [sys.executable, "agent.py"], any_cli=False)
    assert skipped.status is Status.SKIPPED
    assert names("make", "test") == ["Claude Code 2.1.332", "Ollama 0.9.2"]
