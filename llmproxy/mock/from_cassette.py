"""A recorded cassette as an expectations file (`llmproxy cassette to-expectations`): the session turned
into conversations a person can read and edit, which `llmproxy mock` answers as the recording did.

Grouping: chat exchanges are grouped by provider, path and model (a coding agent's side requests on a
smaller model become conversations of their own), in file order. A group's run is cut into a new
conversation when its requests start over: a request with fewer completed assistant turns than the one
before it, or as many after an answered one (a retry after an error keeps the conversation going). Each
conversation's `match` names its provider, path and model.

Each recorded exchange is one turn, matched on its `turnIndex` and, where the latest message says
something, what: the tool whose result it carries (`containsToolResultFor`), or the start of the user's
text (`latestMessageContains`, at most about 60 characters, whitespace collapsed as the mock compares it).
The answer is the recorded response decoded: `respond`, or `error` for an upstream 4xx/5xx; for a Responses
background run (exchanges linked by `background`), the answer of the poll that found it done. Exchanges with
no chat codec (embeddings, token counting, non-LLM traffic), no response or bodies that do not decode are
skipped and counted. The same cassette always gives the same file.
"""

from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from llmproxy.cassette.decode import decode_exchange, decode_response, exchange_route
from llmproxy.cassette.model import Cassette, Exchange, JsonBody, Response, build, header_pairs
from llmproxy.mock.servers_from_cassette import servers
from llmproxy.mock.spec import (
    Conversation,
    ConversationSpec,
    ErrorReply,
    ExpectationsFile,
    KeptParts,
    Match,
    Respond,
    ToolCall,
    Turn,
)
from llmproxy.mock.usage import usage_spec
from llmproxy.model import Completion, Message, Provider, Role, StopReason, TextPart, ToolResultPart
from llmproxy.model import Conversation as ChatRequest
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.kept_parts import parts_format, wire_parts
from llmproxy.providers.registry import chat_codec
from llmproxy.words import plural

EXCERPT_CHARS = 60


@dataclass(slots=True)
class Conversion:
    """The expectations file, and what was left out of it, for the CLI's report."""

    expectations: ExpectationsFile
    skipped: Counter[str]  # reason → exchanges

    def report(self, destination: str) -> str:
        conversations = len(self.expectations.expectations)
        turns = sum(
            len(entry.conversation.turns) for entry in self.expectations.expectations if isinstance(entry, Conversation)
        )
        text = f"wrote {plural(conversations, 'conversation')}, {plural(turns, 'turn')}"
        document = self.expectations
        if document.mcpServers:
            text += f", {plural(len(document.mcpServers), 'MCP server')}"
        if document.a2aAgents:
            text += f", {plural(len(document.a2aAgents), 'A2A agent')}"
        text += f" to {destination}"
        if self.skipped:
            reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
            text += f"; skipped {plural(self.skipped.total(), 'exchange')}: {reasons}"
        return text


def to_expectations(cassette: Cassette) -> ExpectationsFile:
    """The cassette's chat sessions as conversations (the module's docstring has the rules). Token usage
    is the recorded one as the provider reported it (`usage.usage_spec`), so the mock sends it back alike."""
    return convert(cassette).expectations


def convert(cassette: Cassette) -> Conversion:
    """`to_expectations`, plus how many exchanges were skipped and why. The cassette must be loaded with
    `load_cassette`, so every shared history is whole."""
    skipped: Counter[str] = Counter()
    groups: list[tuple[tuple[str, str, str | None], list[_Recorded]]] = []
    open_groups: dict[tuple[str, str, str | None], list[_Recorded]] = {}
    finals = _background_finals(cassette.exchanges)
    mcp_servers, a2a_agents, theirs = servers(cassette.exchanges, skipped)
    for exchange in cassette.exchanges:
        if exchange.id in theirs:
            continue
        recorded = _read(exchange, skipped, finals.get(exchange.id))
        if recorded is None:
            continue
        group = open_groups.get(recorded.key)
        if group is None or _starts_over(group[-1], recorded):
            group = open_groups[recorded.key] = []
            groups.append((recorded.key, group))
        group.append(recorded)
    conversations = tuple(_conversation(key, group) for key, group in groups)
    document = ExpectationsFile(expectations=conversations, mcpServers=tuple(mcp_servers), a2aAgents=tuple(a2a_agents))
    return Conversion(document, skipped)


def dumps(expectations: ExpectationsFile) -> bytes:
    """The file as JSON (indent 2, fields in the models' order, a turn's `match` first), with only the
    fields that differ from their defaults, so it stays short enough to edit."""
    value = expectations.model_dump(mode="json", exclude_defaults=True)
    for entry in value.get("expectations", []):
        if "conversation" in entry:
            entry["conversation"]["turns"] = [_match_first(turn) for turn in entry["conversation"]["turns"]]
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


@dataclass(frozen=True, slots=True)
class _Recorded:
    key: tuple[str, str, str | None]  # provider, path, model
    turn_index: int
    turn: Turn


def _background_finals(exchanges: list[Exchange]) -> dict[int, Response]:
    """Each background run's final answer (the last poll that found it done), by its create's exchange id:
    the mock plays the run's lifecycle itself, so the turn answers with what the run produced."""
    finals: dict[int, Response] = {}
    for exchange in exchanges:
        link, response = exchange.background, exchange.response
        if link is None or exchange.id == link.create or exchange.streaming or response is None:
            continue
        body = response.body.json_ if isinstance(response.body, JsonBody) else None
        if response.status < 400 and isinstance(body, dict) and body.get("status") in _TERMINAL:
            finals[link.create] = response
    return finals


_TERMINAL = frozenset({"completed", "failed", "incomplete", "cancelled"})


def _read(exchange: Exchange, skipped: Counter[str], final: Response | None = None) -> _Recorded | None:
    route = exchange_route(exchange)
    codec = chat_codec(route) if route is not None else None
    if route is None or codec is None:
        skipped["not a chat API"] += 1
        return None
    try:
        chat, completion, _ = decode_exchange(exchange)
        if final is not None:  # a background run: its create answered `queued`; a poll found the answer
            completion = decode_response(codec, final)
    except ValueError:  # ParseError, or a stored body that is not what it claims
        skipped["no response" if exchange.response is None else "undecodable"] += 1
        return None
    if completion is None or exchange.response is None:
        skipped["no response"] += 1
        return None
    key = (route.provider.value, urlsplit(exchange.request.url).path, exchange.model or chat.model)
    answer = _answer(codec, exchange.response, completion, parts_format(route))
    respond, error = (answer, None) if isinstance(answer, Respond) else (None, answer)
    return _Recorded(key, chat.assistant_turns, build(Turn, match=_match(chat), respond=respond, error=error))


def _starts_over(previous: _Recorded, current: _Recorded) -> bool:
    """Whether `current` begins a new session rather than continuing `previous`'s."""
    if current.turn_index < previous.turn_index:
        return True
    return current.turn_index == previous.turn_index and previous.turn.error is None


def _conversation(key: tuple[str, str, str | None], group: list[_Recorded]) -> Conversation:
    provider, path, model = key
    spec = ConversationSpec(
        match=build(Match, provider=provider, path=path, model=model),
        turns=tuple(recorded.turn for recorded in group),
    )
    return Conversation(conversation=spec)


def _match(chat: ChatRequest) -> Match:
    latest = chat.latest
    tool = _tool_result_name(latest) if latest is not None else None
    excerpt = _excerpt(latest) if latest is not None and tool is None else None
    return build(Match, turnIndex=chat.assistant_turns, containsToolResultFor=tool, latestMessageContains=excerpt)


def _tool_result_name(message: Message) -> str | None:
    return next((part.name for part in message.parts if isinstance(part, ToolResultPart) and part.name), None)


def _excerpt(message: Message) -> str | None:
    """The start of the user's last text, whitespace collapsed and cut at a word; None when the latest
    message is not the user's, or its text is JSON (the mock compares JSON with its keys sorted)."""
    if message.role is not Role.USER:
        return None
    texts = [" ".join(part.text.split()) for part in message.parts if isinstance(part, TextPart)]
    text = next((text for text in reversed(texts) if text), "")
    if not text or text.startswith(("{", "[")):
        return None
    if len(text) <= EXCERPT_CHARS:
        return text
    cut = text.rfind(" ", 0, EXCERPT_CHARS + 1)
    return text[: cut if cut > 0 else EXCERPT_CHARS]


def _answer(
    codec: ChatCodec, response: Response, completion: Completion, kept_format: str | None
) -> Respond | ErrorReply:
    failed = completion.error
    if response.status >= 400:
        message = failed.message if failed is not None else ""
        return build(ErrorReply, status=response.status, message=message or None, retryAfter=_retry_after(response))
    if failed is not None and not completion.text and not completion.tool_calls:  # failed in the stream at once
        status = failed.status or codec.encode_error(failed.kind, failed.message).status
        return build(ErrorReply, status=status, message=failed.message or None)
    return _respond(completion, codec.provider, kept_format)


def _retry_after(response: Response) -> float | None:
    """`retry-after-ms`, else `retry-after` in seconds (an HTTP date is not kept)."""
    headers = {name.lower(): value for name, value in header_pairs(response.headers)}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) / scale)
        except (KeyError, ValueError):
            continue
    return None


def _respond(completion: Completion, provider: Provider, kept_format: str | None) -> Respond:
    """Arguments that were not a JSON object are kept as their text; a stop reason only when it is not the
    one the mock would pick; an answer holding parts kept whole gets all its parts as its wire spells them."""
    calls = tuple(
        ToolCall(
            name=call.name,
            arguments=call.invalid_arguments if call.invalid_arguments is not None else call.arguments,
            id=call.id,
        )
        for call in completion.tool_calls
    )
    default_stop = StopReason.TOOL_USE if calls else StopReason.END_TURN
    return build(
        Respond,
        text=completion.text if completion.text or not calls else None,
        toolCalls=calls,
        stopReason=completion.stop_reason if completion.stop_reason is not default_stop else None,
        usage=usage_spec(completion.usage, provider) if completion.usage and not completion.usage.estimated else None,
        reasoningText=completion.reasoning or None,
        reasoningSignature=completion.reasoning_signature,
        parts=build(KeptParts, format=kept_format, parts=tuple(wire_parts(kept_format, completion)))
        if completion.parts and kept_format is not None
        else None,
    )


def _match_first(turn: dict[str, Any]) -> dict[str, Any]:
    return {"match": turn.pop("match"), **turn} if "match" in turn else turn
