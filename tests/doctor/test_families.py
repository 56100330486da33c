"""Which client families a command uses, what NO_PROXY skips, and the CLIs' versions: plain rules."""

import os
import struct
import sys
from pathlib import Path

from llmproxy import doctor
from llmproxy.ca import ensure_ca
from llmproxy.doctor import binaries, clis, families, trust
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


def elf(path: Path, sections: list[bytes]) -> Path:
    """A 64-bit little-endian ELF file with these sections (after the null one and the names' table), as a
    linker lays them out: the names' table, then the section headers."""
    names = [b"", b".shstrtab", *sections]
    strings = b"".join(name + b"\0" for name in names)
    starts = [sum(len(name) + 1 for name in names[:index]) for index in range(len(names))]
    strings_at = 64
    headers_at = strings_at + len(strings)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, headers_at)
    struct.pack_into("<HHH", header, 0x3A, 64, len(names), 1)
    table = b""
    for index, start in enumerate(starts):
        entry = bytearray(64)
        struct.pack_into("<I", entry, 0, start)
        if index == 1:
            struct.pack_into("<QQ", entry, 0x18, strings_at, len(strings))
        table += bytes(entry)
    path.write_bytes(bytes(header) + strings + table)
    path.chmod(0o755)
    return path


def test_a_bun_compiled_binary_is_known_by_its_section_whatever_its_name(tmp_path: Path) -> None:
    """`bun build --compile` puts the program in a `.bun` section: such a CLI trusts what Bun trusts, though no
    one listed it; another binary may start any client."""
    environ = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    elf(tmp_path / "kilo", [b".text", b".bun"])
    elf(tmp_path / "tool", [b".text", b".data"])
    bun = families.of_command(["kilo", "run", "hi"], environ)
    assert (bun.families, bun.guessed) == (("bun",), frozenset())
    assert bun.why == "kilo is a Bun-compiled binary"
    other = families.of_command(["tool"], environ)
    assert other.families == (*families.PROBED, *families.READ)
    assert other.guessed == set(other.families)
    assert not binaries.bun_compiled(tmp_path / "missing")
    assert not binaries.bun_compiled(Path(sys.executable))


def test_a_family_only_guessed_warns_where_a_known_one_fails(tmp_path: Path) -> None:
    """Bun reads its CA from NODE_EXTRA_CA_CERTS, unset here: a command known to run on Bun fails; one that only
    may (a shell script, `make`, `--all`) is told the same as a warning, and the verdict holds."""
    ca = ensure_ca(tmp_path / "ca")
    use = families.Use(("bun",), sys.executable, "kilo is a Bun-compiled binary")
    (known,) = trust.checks(use, {}, "http://127.0.0.1:9", "api.anthropic.com", ca, under_llmproxy=True)
    guess = families.Use(("bun",), sys.executable, "every family: make may start any client", frozenset({"bun"}))
    (guessed,) = trust.checks(guess, {}, "http://127.0.0.1:9", "api.anthropic.com", ca, under_llmproxy=True)
    assert (known.status, guessed.status) == (Status.FAIL, Status.WARN)
    assert guessed.detail == f"{known.detail} (a guess: every family: make may start any client)"
    assert guessed.fix == known.fix
    every = families.every_family(families.of_command(["python3", "x.py"], {"PATH": os.environ["PATH"]}))
    assert every.guessed == set(every.families) - set(families.PYTHON_FAMILIES)  # --all: the rest are guesses


def test_the_host_checked_is_the_one_the_configuration_points_at() -> None:
    environ = {
        "COPILOT_PROVIDER_BASE_URL": "https://models.corp.example/v1",
        "OPENAI_BASE_URL": "https://gateway.corp.example/openai/v1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:8080",  # on this machine: reached without the proxy
        "OPENAI_API_BASE": "not a url",
    }
    assert doctor.configured_hosts(environ) == ("gateway.corp.example", "models.corp.example")
    assert doctor.configured_hosts({}) == ()
