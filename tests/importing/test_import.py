"""`llmproxy cassette import` over recordings written by the tools themselves: what it stores is what
`llmproxy record` would have stored of the same session, redacted, decoded, streams cut into events."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.model import SseEvent
from llmproxy.cassette.store import load_cassette
from llmproxy.cli import main
from tests.importing.conftest import KEY, SESSION, Recording, answers_of


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def imported(path: Path, tmp_path: Path, *options: str) -> Path:
    output = tmp_path / f"{path.stem}.json"
    code, said = run("cassette", "import", str(path), "-o", str(output), *options)
    assert code == 0, said
    return output


def assert_recorded_as_llmproxy_would(
    cassette: Path, answers: dict[str, str], gzip: bool = True, key: str = KEY
) -> None:
    exchanges = load_cassette(cassette).exchanges
    shown = [(e.provider, e.operation, e.streaming) for e in exchanges]
    assert shown == [
        ("openai", "chat_completions", False),
        ("openai", "chat_completions", True),
        ("anthropic", "messages", False),
        ("anthropic", "messages", True),
    ]
    texts = [decode_exchange(exchange).completion for exchange in exchanges]
    assert [completion.text if completion else None for completion in texts] == list(answers.values())
    assert all(completion is not None and completion.usage is not None for completion in texts)
    for exchange in (exchanges[1], exchanges[3]):  # streams: one parsed SSE event per wire event
        assert exchange.response is not None
        assert exchange.response.events is not None
        assert len(exchange.response.events) > 3
        assert all(isinstance(event, SseEvent) for event in exchange.response.events[:-1])
    anthropic = exchanges[2].response
    assert anthropic is not None  # decoded, the encoding kept
    assert anthropic.content_encoding == ("gzip" if gzip else None)
    assert key.encode() not in cassette.read_bytes()
    assert run("cassette", "check", str(cassette))[0] == 0


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_a_vcrpy_cassette_imports_as_if_recorded(
    vcrpy_recordings: dict[str, Recording], tmp_path: Path, serializer: str
) -> None:
    recording = vcrpy_recordings[serializer]
    assert KEY.encode() in recording.path.read_bytes()  # vcrpy kept the key: the import must not
    cassette = imported(recording.path, tmp_path)
    assert_recorded_as_llmproxy_would(cassette, recording.answers, gzip=serializer == "yaml")


@pytest.mark.slow
@pytest.mark.parametrize("source", ["flows", "har"])
def test_mitmproxy_flows_and_its_har_import_as_if_recorded(
    mitmproxy_recordings: dict[str, Recording], tmp_path: Path, source: str
) -> None:
    recording = mitmproxy_recordings[source]
    cassette = imported(recording.path, tmp_path)
    assert_recorded_as_llmproxy_would(cassette, recording.answers)
    timings = [exchange.timings for exchange in load_cassette(cassette).exchanges]
    assert all(t.total_ms is not None for t in timings)
    assert all(t.ttfb_ms is not None for t in timings)


@pytest.mark.slow
def test_imported_cassettes_replay_to_the_sdk_that_recorded_them(
    vcrpy_recordings: dict[str, Recording], mitmproxy_recordings: dict[str, Recording], tmp_path: Path
) -> None:
    """Offline (the stand-in API is gone by now): strict replay answers every request, each as recorded. The four
    recordings of the same session go into one cassette (one replay run: each session gets its own answers, as
    replay serves the same request's recordings in order)."""
    recordings = [*vcrpy_recordings.values(), *mitmproxy_recordings.values()]
    cassette = tmp_path / "all.json"
    code, said = run("cassette", "import", *(str(r.path) for r in recordings), "-o", str(cassette))
    assert code == 0, said
    replayed = subprocess.run(
        [
            *(sys.executable, "-m", "llmproxy", "replay", "--cassette", str(cassette), "--"),
            *(sys.executable, str(SESSION), recordings[0].base_url, "--times", str(len(recordings))),
        ],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replayed.returncode == 0, replayed.stderr
    assert answers_of(replayed.stdout) == [recording.answers for recording in recordings]
    assert "0 missed, 0 unused" in replayed.stderr
