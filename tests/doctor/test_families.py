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
    assert families.of_command(["codex", "exec"], environ).families == ("rust",)
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
