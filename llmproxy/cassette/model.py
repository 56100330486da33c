"""The cassette file format, version 1 (docs/cassette-format.md; docs/cassette.schema.json is generated
from these models by scripts/gen_schemas.py).

Fields that have nothing to say are left out of the file rather than written as null: models are built
with only the fields that are set and dumped with `dump`, which keeps exactly those.
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

VERSION: Final = 1


class _Model(BaseModel):
    """Numbers and flags are strict (`StrictInt`…): a string "200" where the format has a number is not read as
    one, so `cassette check` refuses what the published schema refuses."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class JsonBody(_Model):
    """A JSON body, parsed; keys in the order they were sent."""

    json_: Any = Field(alias="json")


class TextBody(_Model):
    """A body that is UTF-8 text (or that claimed to be JSON and was not: see the exchange's notes)."""

    text: str


class Base64Body(_Model):
    """A body that is not UTF-8 text."""

    base64: str
    not_decodable: str | None = Field(
        default=None,
        description="why its content-encoding could not be undone: stored as on the wire, so its content was "
        "never scanned for secrets (`cassette check` fails on it)",
    )


type Body = JsonBody | TextBody | Base64Body


class SseEvent(_Model):
    """A server-sent event shown parsed: exactly ``event: E\\n`` (when set), ``data: <compact JSON>\\n\\n``."""

    t_ms: StrictFloat
    event: str | None = None
    data: Any


class JsonLineEvent(_Model):
    """An NDJSON line shown parsed: exactly ``<compact JSON>\\n``."""

    t_ms: StrictFloat
    json_: Any = Field(alias="json")


class TextEvent(_Model):
    """Any other UTF-8 event, verbatim (an SSE event in a shape the parsed forms cannot reproduce exactly)."""

    t_ms: StrictFloat
    text: str


class Base64Event(_Model):
    """A binary event (an AWS event-stream message), verbatim."""

    t_ms: StrictFloat
    base64: str
    not_decodable: str | None = Field(
        default=None, description="why the stream's content-encoding could not be undone: a raw chunk, never scanned"
    )


class MessageEvent(_Model):
    """A WebSocket text message shown parsed: exactly the compact JSON of `message`."""

    t_ms: StrictFloat
    message: Any


type Event = SseEvent | JsonLineEvent | TextEvent | Base64Event | MessageEvent


class Extends(_Model):
    """History sharing: the list at `path` in this request's body starts with the first `items` items of the
    same list in exchange `exchange`'s request body; only the items after them are stored here."""

    exchange: StrictInt
    path: str = Field(description='a JSON path of object keys, e.g. "$.messages" or "$.request.contents"')
    items: StrictInt = Field(ge=1)


class Request(_Model):
    method: str
    url: str = Field(description="scheme://host[:port]/path?query, redacted")
    http_version: str
    headers: list[str] = Field(description='"name: value" lines in wire order, duplicates kept, redacted')
    body: Body | None = None
    content_encoding: str | None = Field(None, description="the body's encoding on the wire; stored decoded")
    extends: Extends | None = None


class Stream(_Model):
    """A streamed response's events as the file stores them
    (docs/cassette-format.md#how-the-file-stores-a-stream): readers give them back as `Response.events` before
    anything else sees the exchange."""

    t_ms: list[StrictFloat] = Field(description="each event's arrival offset from the request start, in order")
    events: list[dict[str, Any] | list[Any]] = Field(
        description="each event as `events` holds it without its t_ms; one with `vary` (paths) starts a run, and a "
        "list after it is an event of the run: its first event with the values at those paths replaced, in order"
    )


class Response(_Model):
    status: StrictInt
    reason: str
    http_version: str
    headers: list[str]
    body: Body | None = None
    events: list[Event] | None = Field(None, description="a streamed response, one item per wire event")
    stream: Stream | None = Field(None, description="the events in the file's compact form; read as `events`")
    content_encoding: str | None = None


class WebSocket(_Model):
    """An exchange of WebSocket messages: its request is the connection's upgrade request with the message that
    asked as its body; its response, the upgrade's answer with the messages that answered as events."""

    connection: StrictInt = Field(ge=1, description="the id of the first exchange on the same connection")


class Background(_Model):
    """An exchange of one Responses background run (`background: true`): the create that made the response,
    and each request after it that names the response (polls, a resumed stream, cancel, delete)."""

    response_id: str = Field(description="the id of the response the run made")
    create: StrictInt = Field(ge=1, description="the id of the exchange that created it (its own id on the create)")


class Timings(_Model):
    started_at: datetime
    ttfb_ms: StrictFloat | None = None
    total_ms: StrictFloat | None = None


class Injection(_Model):
    """A fault llmproxy put into this exchange on purpose (`--fail`, a quota, the budget, a stream cut…): what
    is recorded is what the client received."""

    kind: str = Field(
        description="error, quota, token_quota, budget, drop, truncate, malformed, latency, slow_body,"
        " empty, refusal, content_filter, invalid_tool_arguments, unknown_tool or max_tokens"
    )
    rule: str = Field(description="the profile that did it: a rule's name, a host, x-llmproxy-chaos, a mock turn")
    detail: str
    status: StrictInt | None = None
    retry_after_s: StrictFloat | None = Field(None, description="the retry-after the client was sent, in seconds")


class Places(_Model):
    """Where the client ran while this exchange was recorded, so a replay from another folder or with another
    HOME can neutralise them in the requests it compares (docs/replay.md)."""

    cwd: str = Field(description="the working directory of llmproxy and the command it ran")
    home: str | None = Field(None, description="its HOME")


class Exchange(_Model):
    id: StrictInt = Field(ge=1, description="unique in the cassette, increasing in file order")
    provider: str | None = Field(None, description="the API spoken: anthropic, openai, gemini, bedrock, …")
    operation: str | None = None
    vendor: str | None = Field(
        None, description="who served it when that is not the API's owner (deepseek on OpenAI's API); prices follow it"
    )
    model: str | None = None
    streaming: StrictBool = False
    websocket: WebSocket | None = None
    background: Background | None = None
    parts: dict[str, Any] | None = Field(
        None,
        description="shared parts this exchange introduces, by id (the first 12 hex digits of the SHA-256 of the "
        'part\'s compact JSON); in it and every later exchange, a {"$part": ID} object in a request body or a '
        'response stands for the part. A part written as {"$answer": N, "path": …} is a value exchange N\'s '
        "answer gives (its text, a tool call's input), not written again. Present (if empty) on every exchange "
        "that refers to one; readers put the parts back (docs/cassette-format.md)",
    )
    request: Request
    response: Response | None = None
    error: str | None = Field(None, description="the upstream or connection failure, when there is no response")
    timings: Timings
    notes: list[str] = Field(default_factory=list, description="what the recorder noticed: invalid JSON, …")
    injected: list[Injection] = Field(default_factory=list, description="faults llmproxy put in on purpose")
    places: Places | None = Field(None, description="where the client ran: replay neutralises these in requests")


class Cassette(_Model):
    llmproxy_cassette: Literal[1]
    exchanges: list[Exchange]


def header_lines(headers: Iterable[tuple[str, str]]) -> list[str]:
    return [f"{name}: {value}" for name, value in headers]


def header_pairs(lines: Iterable[str]) -> list[tuple[str, str]]:
    """The (name, value) pairs back: names cannot hold a colon, so the first ": " separates them."""
    return [(name, value) for name, _, value in (line.partition(": ") for line in lines)]


def dump(model: BaseModel) -> dict[str, Any]:
    """A model as the file stores it: JSON names, only the fields that were set."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def build[M: BaseModel](cls: type[M], **fields: Any) -> M:
    """A model with only the fields that have a value (None means "not set", so the file leaves it out)."""
    return cls(**{name: value for name, value in fields.items() if value is not None})
