"""Several llmproxy proxies in one process (the pytest plugin's proxy beside a test's own session, the Python API
with two sessions): each connection is served by the proxy that accepted it — its own addons, its own chain —
whichever proxy was started or stopped last. mitmproxy hands every new connection the master in its module-wide
`ctx`, which is the one built last."""

import json
import ssl
from pathlib import Path

import anthropic

from llmproxy.session import Listening, Session, mocking


def expectations(tmp_path: Path, text: str) -> Path:
    path = tmp_path / f"{text}.json"
    path.write_text(json.dumps({"expectations": [{"respond": {"text": text}}]}))
    return path


def ask(proxy: Session) -> str:
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=trust, timeout=20)
    with anthropic.Anthropic(api_key="k", http_client=http, max_retries=0) as claude:
        answer = claude.messages.create(
            model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "who are you?"}]
        )
    return "".join(block.text for block in answer.content if block.type == "text")


def test_each_proxy_answers_its_own_connections_whichever_started_or_stopped_last(tmp_path: Path) -> None:
    listening = Listening(ca_directory=tmp_path / "ca")
    with mocking(expectations(tmp_path, "first"), listening) as first:
        with mocking(expectations(tmp_path, "second"), listening) as second:
            assert (ask(first), ask(second)) == ("first", "second")
        assert ask(first) == "first"  # the second proxy, built last, has stopped
