"""Whatever bytes or JSON arrive, the decoders raise `ParseError` and nothing else."""

import json
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.model import Completion, Conversation
from llmproxy.providers.openai_responses import RESPONSES
from tests.golden.cases import CASES
from tests.providers.openai_responses.strategies import json_values, texts

REQUESTS = Path(__file__).parents[2] / "fixtures" / "requests" / "openai_responses"

DECODERS: dict[str, Callable[[bytes], Conversation | Completion]] = {
    "request": RESPONSES.decode_request,
    "response": RESPONSES.decode_response,
    "stream": lambda body: RESPONSES.decode_stream([body]),
}
DOCUMENTS = {
    "request": [json.loads(path.read_bytes()) for path in sorted(REQUESTS.glob("*.json"))],
    "response": [json.loads(RESPONSES.encode_response(case)) for case in CASES.values()],
}
EVENT_TYPES = sorted(
    {
        json.loads(line[6:])["type"]
        for case in CASES.values()
        for frame in RESPONSES.encode_stream(case)
        for line in frame.decode().splitlines()
        if line.startswith("data: ")
    }
    | {"error", "response.failed", "response.incomplete", "response.reasoning_text.delta"}
)


def only_parse_errors(decode: Callable[[bytes], object], body: bytes) -> None:
    with suppress(ParseError):
        decode(body)


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths(inner, (*prefix, index))


def replaced(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[head] = replaced(document[head], tuple(rest), value)  # type: ignore[index]
    return copy


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> bytes:
    document = draw(st.sampled_from(DOCUMENTS[kind]))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(paths(document))))
        document = replaced(document, path, draw(json_values))
    return json.dumps(document).encode()


events = st.fixed_dictionaries(
    {"type": st.sampled_from(EVENT_TYPES)},
    optional={
        key: json_values | st.integers(-3, 3)
        for key in ("output_index", "content_index", "summary_index", "item", "response", "delta", "text", "error")
    },
)


@given(st.sampled_from(sorted(DECODERS)), st.binary(max_size=300))
def test_arbitrary_bytes(decoder: str, body: bytes) -> None:
    only_parse_errors(DECODERS[decoder], body)


@given(st.sampled_from(sorted(DECODERS)), json_values)
def test_arbitrary_json(decoder: str, value: Any) -> None:
    only_parse_errors(DECODERS[decoder], json.dumps(value).encode())


@given(mutated("request"))
def test_mutated_requests(body: bytes) -> None:
    only_parse_errors(RESPONSES.decode_request, body)


@given(mutated("response"))
def test_mutated_responses(body: bytes) -> None:
    only_parse_errors(RESPONSES.decode_response, body)


@given(st.lists(events | json_values.map(lambda v: {"type": "response.created", "response": v}), max_size=8), texts)
def test_arbitrary_event_sequences(sequence: list[dict[str, Any]], trailer: str) -> None:
    frames = [f"data: {json.dumps(event)}\n\n".encode() for event in sequence]
    only_parse_errors(DECODERS["stream"], b"".join(frames) + trailer.encode())
