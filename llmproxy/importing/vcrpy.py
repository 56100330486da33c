"""vcrpy and pytest-recording cassettes (YAML, or JSON with vcrpy's JSON serializer), and Ruby VCR's
(``http_interactions``), read as entries.

vcrpy keeps each body as it was on the wire (gzip or br still applied, unless the cassette was recorded with
``decode_compressed_response``, which also drops the header), as a string, or as ``!!binary`` base64 when it
is not text; a streamed answer is one body holding the whole event stream. It keeps no timings. A cassette is
one test's recording, read whole (YAML has no portable streaming reader of values); its interactions are
converted one at a time, each named by its index and line.
"""

import base64
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import yaml

from llmproxy.importing import wire
from llmproxy.importing.entries import Entry, UnreadableError
from llmproxy.model.exchange import RawExchange

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Reader(_Loader):  # type: ignore[misc,valid-type]
    """YAML as vcrpy writes it, and as Python 2's vcrpy did (``!!python/unicode``, ``!!python/str``)."""


for _tag in ("tag:yaml.org,2002:python/unicode", "tag:yaml.org,2002:python/str"):
    _Reader.add_constructor(_tag, _Reader.construct_yaml_str)


def read_vcrpy(path: Path, data: bytes) -> Iterator[Entry]:
    """The interactions of a vcrpy cassette. Raises UnreadableError for a file that is not one."""
    started_at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    for where, interaction in _interactions(path, data):
        try:
            yield Entry(where, _exchange(interaction, started_at))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            yield Entry.broken(where, _problem(exc))


def is_vcrpy_document(document: object) -> bool:
    return isinstance(document, dict) and isinstance(
        document.get("interactions", document.get("http_interactions")), list
    )


def _interactions(path: Path, data: bytes) -> Iterator[tuple[str, Any]]:
    if data.lstrip()[:1] == b"{":
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise UnreadableError(f"{path}: not valid JSON ({exc})") from None
        if not is_vcrpy_document(document):
            raise UnreadableError(f"{path}: not a vcrpy cassette (no interactions list)")
        for index, interaction in enumerate(document.get("interactions", document.get("http_interactions"))):
            yield f"{path}: interaction {index}", interaction
        return
    loader = _Reader(data)
    try:
        root = loader.get_single_node()
        items = _sequence(root)
        if items is None:
            raise UnreadableError(f"{path}: not a vcrpy cassette (no interactions list)")
        for index, node in enumerate(items):
            where = f"{path}: interaction {index} (line {node.start_mark.line + 1})"
            yield where, _construct(loader, node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise UnreadableError(f"{path}: not valid YAML{at}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise UnreadableError(f"{path}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()


_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{name}" for name in ("str", "map", "seq"))


class _Unusual(Exception):
    """A node the plain construction does not build: an alias, a merge key, a key that is not a string."""


def _construct(loader: _Reader, node: yaml.Node) -> Any:
    """The value of an interaction's node, as `construct_object` builds it. Most of a vcrpy cassette is plain
    mappings, lists and strings: those are built here directly, far cheaper than by the constructor's
    generic machinery, and every other scalar (numbers, times, ``!!binary``…) by the constructor; an
    interaction holding anything unusual is built by the constructor whole."""
    try:
        return _plain(loader, node, set())
    except _Unusual:
        return loader.construct_object(node, deep=True)


def _plain(loader: _Reader, node: yaml.Node, seen: set[int]) -> Any:
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        return node.value if tag == _STR else loader.construct_object(node, deep=True)
    if id(node) in seen:  # an alias (maybe of itself): built by the constructor, who keeps it one object
        raise _Unusual
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode) and tag == _MAP:
        built = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag != _STR:
                raise _Unusual
            built[key.value] = _plain(loader, value, seen)
        return built
    if isinstance(node, yaml.SequenceNode) and tag == _SEQ:
        return [_plain(loader, item, seen) for item in node.value]
    raise _Unusual


def _sequence(root: yaml.Node | None) -> list[yaml.Node] | None:
    if not isinstance(root, yaml.MappingNode):
        return None
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value in ("interactions", "http_interactions"):
            return list(value.value) if isinstance(value, yaml.SequenceNode) else None
    return None


def _exchange(interaction: dict[str, Any], started_at: datetime) -> RawExchange:
    request, response = interaction["request"], interaction["response"]
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise ValueError("request and response must be mappings")
    recorded = interaction.get("recorded_at")
    if isinstance(recorded, datetime):
        started_at = recorded if recorded.tzinfo else recorded.replace(tzinfo=UTC)
    version = _version(response.get("http_version"))
    raw_request = wire.raw_request(
        str(request["method"]),
        str(request["uri"]),
        version,
        _headers(request.get("headers")),
        _body(request),
        encoded=True,
    )
    status = response["status"]
    code, reason = (status["code"], status.get("message")) if isinstance(status, dict) else (status, "")
    answer = wire.raw_response(
        int(code),
        str(reason or ""),
        version,
        _headers(response.get("headers")),
        _body(response),
        encoded=True,
    )
    return wire.raw_exchange(raw_request, answer, started_at)


def _version(value: Any) -> str:
    if isinstance(value, str) and value:
        return value if value.upper().startswith("HTTP/") else f"HTTP/{value}"
    return "HTTP/1.1"


def _headers(headers: Any) -> list[tuple[str, str]]:
    """vcrpy's ``{name: [values]}`` (or a single value), in order, duplicates kept."""
    if headers is None:
        return []
    if not isinstance(headers, dict):
        raise ValueError(f"headers must be a mapping, not {type(headers).__name__}")
    pairs = []
    for name, values in headers.items():
        for value in values if isinstance(values, list) else [values]:
            pairs.append((str(name), str(value)))
    return pairs


def _body(part: dict[str, Any]) -> bytes:
    """A request's or response's body as vcrpy stores it: a string, ``!!binary`` bytes, ``{string: …}``, Ruby
    VCR's ``{encoding, string}`` or ``{base64_string}``, or nothing; and as the custom serializers of some
    projects store JSON bodies parsed (pydantic-ai's ``parsed_body: …`` and ``body: {type: json, content: …}``),
    written back as compact JSON."""
    if "parsed_body" in part:
        return orjson.dumps(part["parsed_body"], default=str)
    body = part.get("body")
    if isinstance(body, dict):
        if "base64_string" in body:
            return base64.b64decode(body["base64_string"])
        if "content" in body and "string" not in body:
            content = body["content"]
            return orjson.dumps(content, default=str) if body.get("type") == "json" else _text(content)
        body = body.get("string")
    return _text(body)


def _text(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8", "surrogateescape")
    raise ValueError(f"a body must be a string, not {type(body).__name__}")


def _problem(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc)
