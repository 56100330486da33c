"""A recording world for tests: a local HTTPS upstream answering under the real provider host names (each
reached with `--map`, trusted with `--upstream-ca`), a planted secret, and `llmproxy` run as users run it."""

import importlib.util
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from llmproxy.cassette.model import Exchange, JsonBody
from llmproxy.model import Completion, StopReason, Usage
from llmproxy.providers.registry import CHAT_CODECS
from tests.certs import make_test_ca
from tests.e2e.clis import ScriptedServer

CLIENTS = Path(__file__).with_name("clients.py")


@dataclass
class World:
    tmp: Path
    upstream: ScriptedServer
    upstream_ca: Path
    secret: str

    @property
    def cassette(self) -> Path:
        return self.tmp / "cassettes" / "session.json"

    def env(self) -> dict[str, str]:
        """A bare environment: nothing tells a client about the proxy but what llmproxy injects."""
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp),
            "LLMPROXY_HOME": str(self.tmp / "llmproxy"),
            "PLANTED_SECRET": self.secret,
        }

    def upstream_args(self) -> list[str]:
        """`--map` every provider host to the local upstream, and trust its CA."""
        return [*(f"--map={host}={self.upstream.url}" for host in HOSTS), "--upstream-ca", str(self.upstream_ca)]

    def record_args(self, *extra: str) -> list[str]:
        return [
            *(sys.executable, "-m", "llmproxy", "record", "--cassette", str(self.cassette)),
            *self.upstream_args(),
            *extra,
        ]

    def record(self, *command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.record_args(), "--", *command], env=self.env(), capture_output=True, text=True, timeout=120
        )


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # not even its parent package
        return False


def request_json(exchange: Exchange) -> object:
    body = exchange.request.body
    assert isinstance(body, JsonBody)
    return body.json_


def turns(count: int) -> list[Completion]:
    return [
        Completion(
            text=f"Answer number {i}: Paris is the capital of France, and this sentence streams in pieces.",
            stop_reason=StopReason.END_TURN,
            usage=Usage(input_tokens=20 + i, output_tokens=15),
        )
        for i in range(count)
    ]


HOSTS = (
    "api.anthropic.com",
    "api.openai.com",
    "generativelanguage.googleapis.com",
    "bedrock-runtime.us-east-1.amazonaws.com",
    "ollama.com",
    "llmproxy-test.openai.azure.com",
    "api.deepseek.com",
    "api.cohere.com",
    "llm.corp.example",  # a private gateway (`--route`)
)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    upstream_ca = make_test_ca(tmp_path, HOSTS)
    # paths only the declared or compatible host makes an LLM API (the upstream sees its own Host): canned
    canned = {
        "/llm/generate": CHAT_CODECS["openai-chat"].encode_response(turns(1)[0]),
        "/responses": CHAT_CODECS["openai-responses"].encode_response(turns(1)[0]),
    }
    upstream = ScriptedServer(turns(8), canned, tls=upstream_ca.server_context)
    # shaped like a real Anthropic key, and never a real one
    yield World(tmp_path, upstream, upstream_ca.cert_path, "sk-ant-api03-" + secrets.token_urlsafe(60))
    upstream.close()
