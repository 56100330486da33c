from pathlib import Path

import jsonschema
import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.model.exchange import RawEvent
from tests.cassette.factory import agent_session, eventstream_message, exchange, request, response, sse_events

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "docs" / "cassette.schema.json"


def test_written_cassettes_validate_against_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor(), keep_unanswered=True)  # a recorded outage is in the schema too
    for body in agent_session(3):
        events = (*sse_events({"type": "ping"}), RawEvent(5.0, b"data: [DONE]\n\n"))
        writer.add(exchange(request(body), response(events=events, content_type="text/event-stream")))
    bedrock = (RawEvent(1.0, eventstream_message(b"{}")),)
    writer.add(
        exchange(
            request({"messages": []}, host="bedrock-runtime.us-east-1.amazonaws.com", path="/model/m/converse-stream"),
            response(events=bedrock, content_type="application/vnd.amazon.eventstream"),
        )
    )
    writer.add(exchange(request(b"\xff\xfe", path="/upload"), response(b"plain", content_type="text/plain")))
    writer.add(exchange(request({"model": "m", "messages": []}), None, error="connection refused"))
    writer.close()
    document = orjson.loads(path.read_bytes())
    jsonschema.validate(document, orjson.loads(SCHEMA_PATH.read_bytes()))
    assert len(document["exchanges"]) == 6
    assert "extends" in document["exchanges"][1]["request"]
