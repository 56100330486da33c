"""`llmproxy record` as users run it: the official SDKs as child processes, talking to the real API host
names through the proxy (TLS intercepted, trusted through the injected environment only), answered by a
local HTTPS upstream reached with `--map`."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.secrets import PLACEHOLDER
from llmproxy.cassette.store import load_cassette
from llmproxy.providers.registry import CHAT_CODECS
from tests.record.world import CLIENTS, World, installed, request_json, turns

RUN_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "json" / "run.schema.json").read_text())


def test_anthropic_sdk_session_is_recorded_redacted_with_shared_history(world: World) -> None:
    run = world.record(sys.executable, str(CLIENTS), "anthropic")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"first": turns(1)[0].text, "second": turns(2)[1].text}
    assert "llmproxy record: proxy on http://127.0.0.1:" in run.stderr
    assert "2 exchanges" in run.stderr.splitlines()[-1]

    text = world.cassette.read_text()
    assert world.secret not in text  # header, query and message alike
    assert world.secret[14:40] not in text
    assert not journal_path(world.cassette).exists()
    # the second request re-sends the first question: stored once, by reference
    assert text.count("capital of France? Answer in one word") == 1

    first, second = load_cassette(world.cassette).exchanges
    assert (first.provider, first.operation, first.streaming) == ("anthropic", "messages", False)
    assert (second.provider, second.streaming) == ("anthropic", True)
    assert first.response is not None
    assert first.response.status == 200
    # history rebuilt exactly: what the upstream received, with the secret replaced by its placeholder
    placeholders = set(PLACEHOLDER.findall(text))
    assert len([p for p in placeholders if "sk-ant" in p]) == 1
    (placeholder,) = (p for p in placeholders if "sk-ant" in p)
    received = [json.dumps(body).replace(world.secret, placeholder) for body in world.upstream.bodies]
    assert [json.dumps(request_json(e)) for e in (first, second)] == received

    expected_events = CHAT_CODECS["anthropic-messages"].encode_stream(turns(2)[1], world.upstream.bodies[1])
    assert second.response is not None
    events = second.response.events
    assert events is not None
    assert len(events) == len(expected_events)
    offsets = [event.t_ms for event in events]
    assert offsets == sorted(offsets)
    assert offsets[0] >= 0


def test_openai_sdk_streams_and_responses_are_recorded(world: World) -> None:
    run = world.record(sys.executable, str(CLIENTS), "openai")
    assert run.returncode == 0, run.stderr
    assert world.secret not in world.cassette.read_text()
    chat, responses = load_cassette(world.cassette).exchanges
    assert (chat.provider, chat.operation, chat.streaming) == ("openai", "chat_completions", True)
    assert (responses.operation, responses.streaming) == ("responses", False)
    assert "api_key=<redacted:" in chat.request.url


def test_compatible_vendors_and_declared_gateways_are_named(world: World) -> None:
    """A vendor's host is recognised without /v1 and named in the cassette; a gateway's own path is
    recognised as the API --route declares, named as the vendor it gives."""
    run = subprocess.run(
        [
            *world.record_args("--route", "llm.corp.example/llm=openai-chat@corp"),
            "--",
            sys.executable,
            str(CLIENTS),
            "compatible",
        ],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"first": turns(1)[0].text, "second": turns(1)[0].text}
    deepseek, gateway = load_cassette(world.cassette).exchanges
    assert (deepseek.provider, deepseek.operation, deepseek.vendor) == ("openai", "responses", "deepseek")
    assert deepseek.request.url == "https://api.deepseek.com/responses"
    assert (gateway.provider, gateway.operation, gateway.vendor) == ("openai", "chat_completions", "corp")
    assert gateway.model == "corp-large"
    assert "openai 2" in run.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    ("client", "provider", "operation"),
    [
        pytest.param(
            "gemini",
            "gemini",
            "generate_content",
            marks=pytest.mark.skipif(
                not installed("google.genai"),
                reason="google-genai >= 3.4 cannot install beside mitmproxy 12.2 on Python 3.12",
            ),
        ),
        ("bedrock", "bedrock", "converse"),
        ("ollama", "ollama", "chat"),
        ("azure", "azure", "chat_completions"),
    ],
)
def test_part_two_sdks_are_recorded(world: World, client: str, provider: str, operation: str) -> None:
    """Each SDK on its real host, through the proxy with nothing but the injected environment: one answer
    whole, one streamed (SSE, AWS event-stream, NDJSON), the key it sent redacted everywhere."""
    run = world.record(sys.executable, str(CLIENTS), client)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"first": turns(1)[0].text, "second": turns(2)[1].text}
    text = world.cassette.read_text()
    assert world.secret not in text
    assert world.secret[:40] not in text
    whole, streamed = load_cassette(world.cassette).exchanges
    assert [(e.provider, e.operation, e.streaming) for e in (whole, streamed)] == [
        (provider, operation, False),
        (provider, operation, True),
    ]
    assert streamed.response is not None
    assert streamed.response.events
    offsets = [event.t_ms for event in streamed.response.events]
    assert offsets == sorted(offsets)


def test_the_childs_exit_status_is_propagated_and_the_cassette_finalised(world: World) -> None:
    run = world.record(sys.executable, "-c", "import sys; sys.exit(7)")
    assert run.returncode == 7
    assert load_cassette(world.cassette).exchanges == []


def test_recording_appends_to_an_existing_cassette(world: World) -> None:
    assert world.record(sys.executable, str(CLIENTS), "anthropic").returncode == 0
    assert world.record(sys.executable, str(CLIENTS), "openai").returncode == 0
    providers = [exchange.provider for exchange in load_cassette(world.cassette).exchanges]
    assert providers == ["anthropic", "anthropic", "openai", "openai"]


def test_an_unwritable_cassette_path_fails_before_the_proxy_starts(world: World) -> None:
    blocker = world.tmp / "not-a-dir"
    blocker.write_text("")
    args = world.record_args()
    args[args.index(str(world.cassette))] = str(blocker / "c.json")
    run = subprocess.run([*args, "--", "true"], env=world.env(), capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "c.json" in run.stderr
    assert "proxy on" not in run.stderr


def start_recorder(world: World, *extra: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """`llmproxy record` with no command; returns it and the variables from its `--print-env` lines."""
    process = subprocess.Popen(
        [*world.record_args("--print-env", *extra)],
        env=world.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the writer process with it
    )
    assert process.stdout is not None
    variables: dict[str, str] = {}
    for line in process.stdout:
        name, _, value = line.removeprefix("export ").rstrip("\n").partition("=")
        variables[name] = value.strip("'")
        if name == "NODE_USE_ENV_PROXY":  # the last line
            return process, variables
    process.kill()  # it stopped before printing its environment: say why, leave no process behind
    _, stderr = process.communicate(timeout=10)
    raise AssertionError(f"llmproxy record exited {process.returncode} before printing its environment:\n{stderr}")


def run_client(world: World, variables: dict[str, str], name: str) -> None:
    run = subprocess.run(
        [sys.executable, str(CLIENTS), name], env=world.env() | variables, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, f"the {name} client exited {run.returncode}:\n{run.stderr}"


def test_without_a_command_it_prints_the_environment_and_records_until_sigterm(world: World) -> None:
    process, variables = start_recorder(world)
    assert variables["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    run_client(world, variables, "anthropic")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "2 exchanges" in stderr.splitlines()[-1]
    assert len(load_cassette(world.cassette).exchanges) == 2


RECORDED = [("anthropic", False), ("anthropic", True), ("openai", True), ("openai", False)]


def record_two_sessions(world: World) -> subprocess.Popen[str]:
    """A recorder that has journalled four exchanges."""
    process, variables = start_recorder(world)
    try:
        run_client(world, variables, "anthropic")
        run_client(world, variables, "openai")
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)  # the recorder and its writer, so no process outlives the test
        process.communicate(timeout=10)
        raise
    journal = journal_path(world.cassette)
    deadline = time.monotonic() + 20  # a header line, then one line per exchange
    while time.monotonic() < deadline and (not journal.exists() or journal.read_text().count("\n") < 5):
        time.sleep(0.05)
    return process


def children(pid: int) -> list[int]:
    """The processes `pid` started (Linux)."""
    with open(f"/proc/{pid}/task/{pid}/children") as listed:
        return [int(child) for child in listed.read().split()]


def test_kill_9_of_every_process_keeps_every_journalled_exchange(world: World) -> None:
    process = record_two_sessions(world)
    writers = children(process.pid)  # the writer process, in a process group of its own
    assert len(writers) == 1
    os.killpg(process.pid, signal.SIGKILL)
    os.kill(writers[0], signal.SIGKILL)
    process.communicate(timeout=10)
    assert journal_path(world.cassette).exists()
    assert not world.cassette.exists()
    assert [(e.provider, e.streaming) for e in load_cassette(world.cassette).exchanges] == RECORDED


def test_kill_9_of_the_proxy_lets_the_writer_finish_the_cassette(world: World) -> None:
    process = record_two_sessions(world)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and journal_path(world.cassette).exists():
        time.sleep(0.05)
    assert not journal_path(world.cassette).exists()
    assert [(e.provider, e.streaming) for e in load_cassette(world.cassette).exchanges] == RECORDED


def test_record_json_is_one_document_valid_against_its_schema(world: World) -> None:
    """`--json`: stdout holds the run's document (docs/json/run.schema.json) and nothing else, the client's own
    output moved to stderr; every call is there, answered by the upstream, and the key is not."""
    run = subprocess.run(
        [*world.record_args("--json"), "--", sys.executable, str(CLIENTS), "anthropic"],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    jsonschema.validate(document, RUN_SCHEMA)
    assert (document["command"], document["exitStatus"], document["commandExitStatus"]) == ("record", 0, 0)
    calls = document["calls"]
    assert [(call["answered"], call["provider"], call["streamed"]) for call in calls] == [
        ("upstream", "anthropic", False),
        ("upstream", "anthropic", True),
    ]
    assert [call["inputTokens"] for call in calls] == [20, 21]
    assert document["totals"]["calls"] == 2
    assert "recorded 2 exchanges" in document["summary"][0]
    assert world.secret not in run.stdout
    (printed,) = [line for line in run.stderr.splitlines() if line.startswith("{")]  # the client's own output
    assert json.loads(printed)["first"] == turns(1)[0].text
