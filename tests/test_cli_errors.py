"""Every user mistake and environment fault ends `record`, `replay` and `mock` with one line that says what,
and a consistent status: 2 for a command line that cannot work, 1 for a run that failed, 127/126 for a command
that cannot be run; `--debug` adds the traceback. Run as users run llmproxy, on real files and disks."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.server import LoopbackServer, Reply
from tests.filesystems import read_only, small_disk

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

QUICKSTART = Path(__file__).resolve().parents[1] / "cassettes" / "quickstart.json"
ASK = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}


def client(url: str, size: int = 0) -> list[str]:
    """A command that POSTs an Anthropic request (padded by `size` bytes) through llmproxy's http_proxy."""
    code = (
        "import json, sys, urllib.request\n"
        f"body = {{**{ASK!r}, 'system': 'x' * {size}}}\n"
        f"request = urllib.request.Request({url + '/v1/messages'!r}, data=json.dumps(body).encode(),\n"
        "    headers={'content-type': 'application/json', 'anthropic-version': '2023-06-01'})\n"
        "print(urllib.request.urlopen(request, timeout=30).status)\n"
    )
    return [sys.executable, "-c", code]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")}


def llmproxy(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *args], env=env, capture_output=True, text=True, timeout=120
    )


def one_error(run: subprocess.CompletedProcess[str], command: str, *expected: str) -> str:
    """The run's single error line (asserting there is exactly one, no traceback, and what it says)."""
    assert "Traceback" not in run.stderr, run.stderr
    assert "mitmproxy" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith(f"llmproxy {command}: error: ")]
    assert len(errors) == 1, run.stderr
    for text in expected:
        assert text in errors[0], run.stderr
    return errors[0]


@pytest.fixture
def expectations(tmp_path: Path) -> Path:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
    return path


def test_mock_log_in_a_missing_folder(home: dict[str, str], tmp_path: Path, expectations: Path) -> None:
    log = tmp_path / "missing" / "log.jsonl"
    run = llmproxy(home, "mock", "--expectations", str(expectations), "--log", str(log), "--", "true")
    assert run.returncode == 1
    assert one_error(run, "mock") == (
        f"llmproxy mock: error: cannot write the request log {log}: No such file or directory"
    )


def test_a_mock_log_on_a_full_disk_keeps_the_mock_serving_and_fails_the_run(
    home: dict[str, str], expectations: Path
) -> None:
    run = llmproxy(
        home,
        "mock",
        "--expectations",
        str(expectations),
        "--log",
        "/dev/full",
        "--",
        *client("http://api.anthropic.com"),
    )
    assert run.stdout == "200\n"  # the client was answered
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "cannot write the request log /dev/full: No space left on device" in run.stderr
    assert "mock answered 1 of 1 request" in run.stderr


def test_a_cassette_on_a_full_disk(home: dict[str, str], tmp_path: Path, loopback: LoopbackServer) -> None:
    loopback.queue(Reply(200, {"content-type": "application/json"}, json.dumps({"content": []}).encode()))
    with small_disk(tmp_path / "disk", kilobytes=64) as disk:
        cassette = disk / "c.json"
        run = llmproxy(home, "record", "--cassette", str(cassette), "--", *client(loopback.url, size=200_000))
    assert run.stdout == "200\n"  # recording never breaks the traffic
    assert run.returncode == 1
    one_error(run, "record", f"cannot write {cassette}: No space left on device")
    assert run.stderr.count("could not append to the journal: No space left on device") == 1  # said as it happens


def test_a_read_only_cassette_folder(home: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    with read_only(folder):
        run = llmproxy(home, "record", "--cassette", str(folder / "c.json"), "--", "true")
    assert run.returncode == 1
    one_error(run, "record", f"cannot record to {folder / 'c.json'}: cannot create")
    assert "proxy on" not in run.stderr


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--map", "api.anthropic.com=http://127.0.0.1:99999", "has no valid port"),
        ("--map", "api.anthropic.com", "--map expects HOST=URL"),
        ("--map", "api.anthropic.com=ftp://x", "expected an http(s) URL"),
        ("--reverse", "localhost:8000", "--reverse: expected an http(s) URL"),
        ("--route", "gateway.internal", "--route expects HOST=CODEC or HOST=VENDOR"),
        ("--upstream-ca", __file__, f"--upstream-ca {__file__}: no PEM certificate in it"),
    ],
)
def test_malformed_options_are_usage_errors(
    home: dict[str, str], tmp_path: Path, option: str, value: str, says: str
) -> None:
    cassette = tmp_path / "c.json"
    run = llmproxy(home, "record", "--cassette", str(cassette), option, value, "--", "true")
    assert run.returncode == 2
    one_error(run, "record", says)
    assert not cassette.exists()
    assert list(tmp_path.glob("c.json*")) == []


def test_a_malformed_allow_host_is_a_usage_error(home: dict[str, str], tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    cassette.write_text('{"llmproxy_cassette": 1, "exchanges": []}')
    run = llmproxy(home, "replay", "--cassette", str(cassette), "--allow-host", "https://api.github.com", "--", "true")
    assert run.returncode == 2
    one_error(run, "replay", "--allow-host expects HOST, HOST:PORT or an address")


def test_click_usage_errors_share_status_2(home: dict[str, str]) -> None:
    assert llmproxy(home, "record", "--", "true").returncode == 2  # no --cassette


@pytest.mark.parametrize("command", ["record", "mock", "replay"])
def test_a_port_in_use_is_one_line_without_mitmproxys_own(
    home: dict[str, str], tmp_path: Path, busy_port: int, command: str
) -> None:
    """The same line whichever door the command listens with (mitmproxy's own text, and asyncio's, repeat the
    address)."""
    cassette = tmp_path / "c.json"
    if command == "replay":
        cassette.write_text('{"llmproxy_cassette": 1, "exchanges": []}')
    options = [] if command == "mock" else ["--cassette", str(cassette)]
    run = llmproxy(home, command, *options, "--port", str(busy_port), "--", "true")
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        f"llmproxy {command}: error: the proxy could not start: cannot listen on 127.0.0.1:{busy_port}: "
        "Address already in use"
    ]
    assert cassette.exists() == (command == "replay")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"llmproxy_cassette": 1, "exchanges": [{"id": 1, "request"', "invalid JSON at line 1"),
        (b"", "invalid JSON at line 1"),
        (b'{"llmproxy_cassette": 1, "exchanges": [{"id": 1}]}', "exchange 1: $.exchanges[0].request: Field required"),
    ],
    ids=["truncated", "empty", "incomplete"],
)
def test_broken_cassettes(home: dict[str, str], tmp_path: Path, content: bytes, says: str) -> None:
    cassette = tmp_path / "c.json"
    cassette.write_bytes(content)
    for command in (["replay", "--cassette", str(cassette)], ["record", "--cassette", str(cassette)]):
        run = llmproxy(home, *command, "--", "true")
        assert run.returncode == 1
        one_error(run, command[0], str(cassette), says)
        assert cassette.read_bytes() == content


def test_a_cassette_broken_part_way_fails_the_run_before_it_runs_anything(home: dict[str, str], tmp_path: Path) -> None:
    # replay reads its cassette while the proxy starts: the run still waits for all of it, with a command or not
    stored = json.loads(QUICKSTART.read_bytes())
    good = stored["exchanges"][0]
    broken = {**good, "id": 2, "request": {**good["request"], "method": 7}}
    cassette = tmp_path / "c.json"
    cassette.write_text(json.dumps({**stored, "exchanges": [good, broken]}, indent=2))
    ran = tmp_path / "ran"
    with_command = llmproxy(home, "replay", "--cassette", str(cassette), "--", "touch", str(ran))
    proxy_only = llmproxy(home, "replay", "--cassette", str(cassette), "--port", "0")
    for run in (with_command, proxy_only):
        assert run.returncode == 1
        error = one_error(run, "replay", str(cassette), "exchange 2: $.exchanges[1].request.method")
        assert run.stderr.splitlines() == [error]  # nothing announced, no summary
    assert not ran.exists()


def test_a_broken_journal_line(home: dict[str, str], tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    journal = tmp_path / "c.json.journal"
    journal.write_bytes(b'{"llmproxy_journal": 1}\n{"id": 1, "req\n')
    run = llmproxy(home, "replay", "--cassette", str(cassette), "--", "true")
    assert run.returncode == 1
    one_error(run, "replay", f"{journal}: line 2: invalid JSON")


def test_commands_that_cannot_be_run(home: dict[str, str], tmp_path: Path) -> None:
    cassette = str(tmp_path / "c.json")
    missing = llmproxy(home, "record", "--cassette", cassette, "--", str(tmp_path / "nope"))
    assert missing.returncode == 127
    one_error(missing, "record", "nope", "no such command")
    (tmp_path / "plain").write_text("not a program")
    not_executable = llmproxy(home, "record", "--cassette", cassette, "--", str(tmp_path / "plain"))
    assert not_executable.returncode == 126
    one_error(not_executable, "record", "Permission denied")


@pytest.mark.parametrize("command", ["record", "replay", "mock"])
def test_a_command_that_cannot_be_run_is_said_before_anything_starts(
    home: dict[str, str], tmp_path: Path, command: str
) -> None:
    """No proxy, no summary, no cassette: the one line a shell would say, with its status."""
    cassette = tmp_path / "c.json"
    source = {"record": ["--cassette", str(cassette)], "replay": ["--cassette", str(QUICKSTART)], "mock": []}[command]
    (tmp_path / "plain").write_text("not a program")
    for program, status, says in (
        ("./nope.sh", 127, "no such command"),
        ("no-such-llmproxy-test-command", 127, "no such command"),
        (str(tmp_path / "plain"), 126, "Permission denied"),
        (str(tmp_path), 126, "it is a folder"),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "llmproxy", command, *source, "--", program, "--flag"],
            env=home,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == status, run.stderr
        assert run.stderr.splitlines() == [f"llmproxy {command}: error: cannot run {program!r}: {says}"]
    assert not cassette.exists()


def test_log_lines_name_the_command_and_the_logger_only_under_debug(home: dict[str, str]) -> None:
    """A miss refused while the run goes on: `llmproxy replay: refused: …`, not a logger's name."""
    asking = client("http://api.anthropic.com")
    plain = llmproxy(home, "replay", "--cassette", str(QUICKSTART), "--", *asking)
    ours = [line for line in plain.stderr.splitlines() if line.startswith("llmproxy")]
    refused = [line for line in ours if "refused" in line]
    assert refused[0].startswith(
        "llmproxy replay: refused: POST http://api.anthropic.com/v1/messages: no recorded exchange matches"
    ), plain.stderr
    assert not [line for line in ours if "llmproxy." in line or "ERROR" in line], ours
    debug = llmproxy(home, "replay", "--debug", "--cassette", str(QUICKSTART), "--", *asking)
    assert "llmproxy replay: ERROR llmproxy.chain.chain: refused: POST http://api.anthropic.com" in debug.stderr


def test_a_warning_is_a_line_of_the_command(home: dict[str, str], expectations: Path) -> None:
    once = " ".join(shlex.quote(word) for word in client("http://api.anthropic.com"))
    twice = ["sh", "-c", f"{once}; {once}"]
    run = llmproxy(home, "mock", "--expectations", str(expectations), "--budget-usd", "0.0000001", "--", *twice)
    warned = [line for line in run.stderr.splitlines() if "budget spent" in line]
    assert warned, run.stderr
    assert warned[0].startswith("llmproxy mock: budget spent: $"), run.stderr
    assert "llmproxy.intercept" not in run.stderr
    assert "WARNING" not in run.stderr


def test_doctor_says_a_command_that_cannot_be_run_as_record_would(home: dict[str, str], tmp_path: Path) -> None:
    run = llmproxy(home, "doctor", "--", str(tmp_path / "nope.sh"))
    assert run.returncode == 127
    assert run.stderr.splitlines() == [
        f"llmproxy doctor: error: cannot run {str(tmp_path / 'nope.sh')!r}: no such command"
    ]
    assert run.stdout == ""


def test_debug_shows_the_traceback(home: dict[str, str], tmp_path: Path) -> None:
    run = llmproxy(home, "record", "--cassette", str(tmp_path / "c.json"), "--map", "x", "--debug", "--", "true")
    assert run.returncode == 2
    assert "Traceback (most recent call last)" in run.stderr
    assert run.stderr.rstrip().endswith("llmproxy record: error: --map expects HOST=URL, got 'x'")
