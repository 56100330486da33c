"""The control API's routing, pure: a request's method, target and body in, an `Answer` out, never an exception.

Each `Endpoint` declares its method, its path under the API's base (`/journal/{seq}`), whether it reads or
changes the run (`llmproxy.control.auth`), and the pydantic models of its path parameters, query, body and
answer. The router turns what does not fit into one clear line: an unknown path is a 404 listing every
endpoint, a known path with another method a 405 naming the allowed ones, a read-only caller on a mutating
endpoint a 403, and a parameter or body the models refuse a 400 naming each JSON path and what was expected.
The same models make the OpenAPI document (`openapi()`), so what the API checks and what it publishes cannot
drift apart.
"""

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

import pydantic
from pydantic.json_schema import models_json_schema

from llmproxy.control.auth import Access, allows
from llmproxy.intercept.control import Answer
from llmproxy.validation_errors import describe

logger = logging.getLogger(__name__)

MAX_BODY: Final = 8 * 1024 * 1024  # a larger body is refused (413) before it is read
OPENAPI: Final = "/openapi.json"  # under the base: the API's own description, for any token


class ApiError(Exception):
    """Raised by a handler for an answer other than its success: `status` and the one line that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Call[P: pydantic.BaseModel, Q: pydantic.BaseModel, B: pydantic.BaseModel]:
    """What a handler is given: its path parameters, query and body, each validated by its endpoint's model
    (None when the endpoint declares none); `after`: where it puts what must wait until its answer is sent."""

    params: P | None
    query: Q | None
    body: B | None
    after: list[Callable[[], None]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Rendered:
    """What a handler answers with instead of a model: a document already rendered (a report in markdown or
    CSV, a timeline), sent as it is with its media type."""

    text: str
    media_type: str


@dataclass(frozen=True, slots=True)
class Streamed:
    """What a handler answers with to send its answer as it comes (server-sent events): the chunks, ended
    when the caller goes away (the iterator is closed)."""

    chunks: Iterator[bytes]
    media_type: str


@dataclass(frozen=True, slots=True)
class Dumped:
    """What a handler answers with when it holds its answer model's JSON value already (`model_dump(mode="json",
    by_alias=True, exclude_none=True)` of it): sent as it is. The journal's rows are made once, for the event
    stream and every listing."""

    value: dict[str, Any]


type Handler = Callable[[Call[Any, Any, Any]], pydantic.BaseModel | Rendered | Streamed | Dumped]


@dataclass(frozen=True, slots=True)
class Endpoint:
    method: str
    path: str  # under the base; `{name}` segments are path parameters, fields of `params`
    summary: str
    handler: Handler
    answer: type[pydantic.BaseModel]
    access: Access = Access.MUTATE  # an endpoint that does not say it only reads is taken to change the run
    params: type[pydantic.BaseModel] | None = None
    query: type[pydantic.BaseModel] | None = None
    body: type[pydantic.BaseModel] | None = None
    media_types: tuple[str, ...] = ()  # what else it may answer with (`Rendered`) beside JSON, for the document
    streamed: bool = False  # it answers a stream (`Streamed`), as its first media type: no MCP tool can call it
    segments: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "segments", _segments(self.path))

    def captures(self, segments: tuple[str, ...]) -> dict[str, str] | None:
        """The path parameters when `segments` is this endpoint's path; None when it is not."""
        if len(segments) != len(self.segments):
            return None
        found = {}
        for mine, given in zip(self.segments, segments, strict=True):
            if mine.startswith("{") and mine.endswith("}"):
                found[mine[1:-1]] = given
            elif mine != given:
                return None
        return found

    @property
    def operation_id(self) -> str:
        return self.handler.__name__.strip("_")


class Router:
    def __init__(
        self,
        base: str,
        endpoints: Sequence[Endpoint],
        title: str,
        version: str,
        closing: Sequence[Callable[[], None]] = (),
    ) -> None:
        self.base = base.rstrip("/")
        self.endpoints = tuple(endpoints)
        self.title = title
        self.version = version
        self.closing = tuple(closing)

    def close(self) -> None:
        """What the endpoints hold open (the event stream's readers) ended, as the control port closes."""
        for close in self.closing:
            close()

    def serves(self, target: str) -> bool:
        """Whether `target` is under this API's base (an unknown path under it still gets the API's 404)."""
        path = urlsplit(target).path
        return path == self.base or path.startswith(self.base + "/")

    def handle(self, method: str, target: str, body: bytes, granted: Access) -> Answer:
        """One request from a caller already authenticated with `granted`: the answer, never an exception."""
        url = urlsplit(target)
        if url.path == self.base + OPENAPI:
            if method != "GET":
                return Answer(405, {"error": f"{method} is not supported on {url.path}: use GET"}, (("allow", "GET"),))
            return Answer(200, self.openapi())
        segments = _segments(url.path.removeprefix(self.base))
        matched = [
            (endpoint, found) for endpoint in self.endpoints if (found := endpoint.captures(segments)) is not None
        ]
        if not matched:
            return Answer(404, {"error": f"no such endpoint: {url.path}", "endpoints": self.listing()})
        chosen = next(((endpoint, found) for endpoint, found in matched if endpoint.method == method), None)
        if chosen is None:
            allowed = sorted({endpoint.method for endpoint, _ in matched})
            return Answer(
                405,
                {"error": f"{method} is not supported on {url.path}: use {' or '.join(allowed)}", "allowed": allowed},
                (("allow", ", ".join(allowed)),),
            )
        endpoint, captured = chosen
        if not allows(granted, endpoint.access):
            return Answer(403, {"error": f"{method} {url.path} changes the run: the read-only token cannot call it"})
        try:
            call = Call(
                _validated(endpoint.params, captured, "path parameter"),
                _validated(endpoint.query, dict(parse_qsl(url.query, keep_blank_values=True)), "query parameter"),
                _body(endpoint.body, body),
            )
            answer = endpoint.handler(call)
        except ApiError as error:
            return Answer(error.status, {"error": str(error)})
        except Exception as error:  # a bug of llmproxy's: logged with its traceback, one line to the client
            logger.exception("the control API failed on %s %s", method, url.path)
            return Answer(500, {"error": f"llmproxy failed to answer {method} {url.path}: {error}"})
        if isinstance(answer, Rendered):
            return Answer(200, answer.text.encode(), media_type=answer.media_type, after=tuple(call.after))
        if isinstance(answer, Streamed):
            return Answer(200, b"", media_type=answer.media_type, stream=answer.chunks)
        if isinstance(answer, Dumped):
            return Answer(200, answer.value, after=tuple(call.after))
        return Answer(200, answer.model_dump(mode="json", by_alias=True, exclude_none=True), after=tuple(call.after))

    def listing(self) -> list[str]:
        listed = [f"{endpoint.method} {self.base}{endpoint.path}" for endpoint in self.endpoints]
        return [*listed, f"GET {self.base}{OPENAPI}"]

    def openapi(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document of every endpoint, its schemas made from the models the router validates
        with."""
        models = {model for endpoint in self.endpoints for model in (endpoint.answer, endpoint.body) if model}
        ordered = sorted(models, key=lambda model: model.__name__)
        schemas, definitions = models_json_schema(
            [(model, "serialization") for model in ordered], ref_template="#/components/schemas/{model}"
        )
        paths: dict[str, dict[str, Any]] = {}
        for endpoint in self.endpoints:
            operation: dict[str, Any] = {
                "operationId": endpoint.operation_id,
                "summary": endpoint.summary,
                "x-llmproxy-access": endpoint.access.value,
                "parameters": [
                    *_parameters(endpoint.params, "path"),
                    *_parameters(endpoint.query, "query"),
                ],
                "responses": {
                    "200": {
                        "description": "done",
                        "content": {
                            **(
                                {}
                                if endpoint.streamed
                                else {"application/json": {"schema": schemas[(endpoint.answer, "serialization")]}}
                            ),
                            **{
                                media: {
                                    "schema": schemas[(endpoint.answer, "serialization")]
                                    if endpoint.streamed
                                    else {"type": "string"}
                                }
                                for media in endpoint.media_types
                            },
                        },
                    },
                    "default": {"description": "an error, said in one line", "content": {"application/json": {}}},
                },
            }
            if endpoint.body is not None:
                schema = schemas[(endpoint.body, "serialization")]
                operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
            paths.setdefault(self.base + endpoint.path, {})[endpoint.method.lower()] = operation
        return {
            "openapi": "3.1.0",
            "info": {"title": self.title, "version": self.version},
            "paths": paths,
            "components": {
                "schemas": definitions.get("$defs", {}),
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            },
            "security": [{"bearer": []}],
        }


def _segments(path: str) -> tuple[str, ...]:
    return tuple(segment for segment in path.split("/") if segment)


def _validated[M: pydantic.BaseModel](model: type[M] | None, given: Mapping[str, str], what: str) -> M | None:
    if model is None:
        if given and what == "query parameter":
            raise ApiError(400, f"unknown {what}: {', '.join(sorted(given))}")
        return None
    try:
        return model.model_validate(given)
    except pydantic.ValidationError as error:
        problems = [f"{what} {line.removeprefix('$.')}" for line in describe(error, dict(given))]
        raise ApiError(400, "; ".join(problems)) from None


def _body[M: pydantic.BaseModel](model: type[M] | None, body: bytes) -> M | None:
    if model is None:
        return None
    try:
        document = json.loads(body or b"null")
    except ValueError as error:
        raise ApiError(400, f"the body is not JSON: {error}") from None
    try:
        return model.model_validate(document)
    except pydantic.ValidationError as error:
        raise ApiError(400, "; ".join(describe(error, document))) from None


def _parameters(model: type[pydantic.BaseModel] | None, where: str) -> list[dict[str, Any]]:
    if model is None:
        return []
    schema = model.model_json_schema(by_alias=True)
    required = set(schema.get("required", ()))
    return [
        {"name": name, "in": where, "required": where == "path" or name in required, "schema": property}
        for name, property in schema.get("properties", {}).items()
    ]
