"""The secret corpus through real `llmproxy record` runs (docs/security.md#what-is-redacted): every kind in
tests/secret_corpus.py, planted in request headers, URLs and bodies (one gzip-encoded) by a raw client
through the proxy, and answered back by a local upstream split across the deltas of every streaming format,
in content-encoded bodies (gzip, deflate, br, zstd, ``deflate, gzip``) and in Bedrock's base64 chunks.
Nothing of it may reach the cassette (base64 decoded too), the output of `cassette to-expectations`, or
llmproxy's stderr; `cassette check` passes on both files.
"""

import base64
import binascii
import gzip
import itertools
import random
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotli  # type: ignore[import-untyped]
import orjson
import pytest
import zstandard

from llmproxy.cassette.store import load_cassette
from llmproxy.mock.from_cassette import convert, dumps
from tests.conformance.server import LoopbackServer, Received, Reply
from tests.record.world import installed
from tests.secret_corpus import all_secrets, planted_text
from tests.streams import STREAMS

CLIENT = Path(__file__).with_name("corpus_client.py")
HOSTS = (
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
    "bedrock-runtime.us-east-1.amazonaws.com",
    "ollama.com",
)
ENCODINGS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
    "deflate, gzip": lambda data: gzip.compress(zlib.compress(data)),
}


def pieces(text: str, seed: int) -> list[str]:
    """The text cut at random points, 1 to 9 characters apart: every secret in it lands in several deltas."""
    rng = random.Random(seed)
    cuts = list(itertools.accumulate(rng.randint(1, 9) for _ in range(len(text))))
    points = [0, *(cut for cut in cuts if cut < len(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(points)]


def corpus_answer(received: Received) -> Reply:
    """The shape the request's `x-corpus-answer` header names, holding the whole corpus."""
    text = planted_text()
    answer = received.headers.get("x-corpus-answer", "")
    if answer in ENCODINGS:
        body = orjson.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        headers = {"content-type": "application/json", "content-encoding": answer}
        return Reply(200, headers, ENCODINGS[answer](body))
    build, content_type, _ = STREAMS[answer]
    events = build(pieces(text, seed=len(answer)))
    return Reply(200, {"content-type": content_type}, b"".join(events))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One record run of the whole corpus (shared: it is the expensive part)."""
    tmp = tmp_path_factory.mktemp("corpus")
    upstream = LoopbackServer(answer=corpus_answer).start()
    cassette = tmp / "corpus.json"
    command = [sys.executable, "-m", "llmproxy", "record", "--cassette", str(cassette), "-v"]
    command += [f"--map={host}={upstream.url}" for host in HOSTS]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "LLMPROXY_HOME": str(tmp / "llmproxy")}
    run = subprocess.run(
        [*command, "--", sys.executable, str(CLIENT)], env=env, capture_output=True, text=True, timeout=180
    )
    upstream.close()
    return cassette, run


def everything_in(path: Path) -> str:
    """The file's text, every base64 string in it decoded (and decoded again where it holds more), and each
    recorded answer reassembled from its stream by the provider's codec: a secret split across deltas is
    whole there."""
    text = path.read_text()
    found = [text, dumps(convert(load_cassette(path)).expectations).decode()]
    for value in _strings(orjson.loads(text)):
        found += _decoded(value)
    return "\n".join(found)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _decoded(value: str, depth: int = 0) -> list[str]:
    if depth > 2 or len(value) < 16:
        return []
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return []
    text = data.decode("latin-1")
    inner = [piece.decode("latin-1") for piece in data.split(b'"bytes":"')[1:]]
    nested = [found for piece in inner for found in _decoded(piece.split('"')[0], depth + 1)]
    return [text, *nested]


@pytest.mark.skipif(not installed("httpx"), reason="the corpus client needs httpx (an SDK dependency)")
def test_no_corpus_secret_reaches_the_cassette_the_expectations_or_stderr(
    recorded: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cassette, run = recorded
    assert run.returncode == 0, run.stderr
    corpus = all_secrets()
    assert len(corpus) >= 48
    stored = everything_in(cassette)
    assert "recorded 12 exchanges" in run.stderr
    leaked = sorted(name for name, secret in corpus.items() if secret in stored)
    assert leaked == [], f"{len(leaked)} of {len(corpus)} corpus secrets reached the cassette: {leaked}"
    assert sorted(name for name, secret in corpus.items() if secret in run.stderr) == []

    check = subprocess.run(
        [sys.executable, "-m", "llmproxy", "cassette", "check", str(cassette)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout

    expectations = cassette.with_name("expectations.json")
    convert = subprocess.run(
        [sys.executable, "-m", "llmproxy", "cassette", "to-expectations", str(cassette), "-o", str(expectations)],
        capture_output=True,
        text=True,
    )
    assert convert.returncode == 0, convert.stderr
    written = expectations.read_text()
    assert sorted(name for name, secret in corpus.items() if secret in written) == []
    check = subprocess.run(
        [sys.executable, "-m", "llmproxy", "cassette", "check", str(expectations)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout
