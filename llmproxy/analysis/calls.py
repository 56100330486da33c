"""One report row per recorded chat call: what it sent, what came back, what it cost.

A call keeps only what the signals need — counts, sizes and fingerprints — never the conversation itself,
so a report's memory grows with the number of calls, not with the history each one re-sent.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import orjson

from llmproxy.analysis.decode import ChatExchange
from llmproxy.mock.usage import estimate_usage, tokens
from llmproxy.model import (
    Conversation,
    Message,
    Operation,
    Provider,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
    Usage,
)
from llmproxy.pricing import PriceBook, Priced, Unpriced
from llmproxy.providers.prompt_caching import BILLING_HEADER

if TYPE_CHECKING:  # loaded only by a cassette holding injected faults (`sources`)
    from llmproxy.intercept.faults import Injected

LARGE_BLOCK_TOKENS = 2_000  # a context block this large is worth caching or fetching on demand
_KEPT_TOOLS = 256
_KEPT_TEXTS = 256
_known_texts: dict[str, tuple[str, int]] = {}  # system prompt → (fingerprint, tokens)
_known_tools: dict[int, tuple[tuple[ToolDefinition, ...], "_Tools"]] = {}  # id(tools) → (tools, their facts)


@dataclass(frozen=True, slots=True)
class ToolUse:
    id: str
    name: str
    arguments: str  # compact JSON, as the model sent it
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Block:
    """A piece of context the request carried: a tool result, or a large text block."""

    fingerprint: str
    tokens: int
    position: int  # its index in the request's history (system blocks: -1)
    name: str | None = None  # the tool, for a tool result


@dataclass(frozen=True, slots=True)
class Lineage:
    """What a request with a shared history inherits from the earlier request it extends."""

    history_tokens: int = 0  # the estimated size of the shared history
    system: str = ""  # the system messages at the head of the shared history (OpenAI's "system" role)
    digest: str = ""  # the whole history's digest (`HistoryDigests`): equal histories, equal digests


@dataclass(slots=True)
class RecordedCall:
    """One recorded chat call, as the report's signals read it. Built once and only read after, so not frozen:
    a frozen dataclass sets each of these fields through `object.__setattr__` (~3 µs more a call)."""

    source: str  # the file it came from
    exchange_id: int
    session: str
    conversation: str  # the conversation it continues (the first exchange's id, as "file#id")
    started_at: datetime
    provider: Provider
    operation: Operation  # the API it spoke, with `provider` (what a fix's snippet must be written for)
    vendor: str | None
    host: str
    path: str
    url: str
    model: str | None
    status: int | None
    error: str | None
    usage: Usage  # zero counts when the call failed; `estimated` when llmproxy had to estimate them
    cost: Priced | Unpriced
    latency_ms: float | None
    ttfb_ms: float | None
    tool_calls: tuple[ToolUse, ...]
    finish_reason: str | None
    message_count: int  # history items in the request, shared ones included
    system_fingerprint: str | None
    system_tokens: int
    defined_tools: tuple[str, ...]
    defined_tool_tokens: int
    tool_results: tuple[Block, ...]  # the results this request brings back for the first time
    large_blocks: tuple[Block, ...]  # system or new history blocks of at least LARGE_BLOCK_TOKENS
    shape: str  # path, model, tools, system and the whole history: equal shapes ask the same thing
    output_text: str  # the answer's text (structured-output checks read it)
    history_tokens: int  # estimated tokens of the whole history the request sent
    head_system: str  # the system messages its history starts with (inherited by requests that extend it)
    scale: float  # reported input tokens / estimated prompt tokens, at most 1: sizes are estimates (bytes / 4)
    injected: "tuple[Injected, ...]" = ()  # faults llmproxy put into this call's answer on purpose (docs/chaos.md)

    def tokens(self, estimate: int) -> int:
        """An estimated size in the provider's own tokens: scaled so that no part of a prompt counts for more
        than the provider billed for the whole."""
        return int(estimate * self.scale)

    @property
    def failed(self) -> bool:
        """Whether the call got no answer: an error status, no response, or an error in place of the answer."""
        return self.error is not None or self.status is None or self.status >= 400

    @property
    def visible_output_tokens(self) -> int:
        return max(0, self.usage.output_tokens - self.usage.reasoning_tokens)


def answer_call(
    *,
    source: str,
    exchange_id: int,
    session: str,
    conversation: str,
    started_at: datetime,
    provider: Provider,
    operation: Operation,
    vendor: str | None,
    host: str,
    path: str,
    url: str,
    model: str | None,
    status: int | None,
    error: str | None,
    usage: Usage,
    cost: Priced | Unpriced,
    tool_calls: tuple[ToolUse, ...],
    finish_reason: str | None,
    output_text: str,
    message_count: int = 0,
) -> RecordedCall:
    """A call known by its answer alone (a mock log, an agent's log): the request is not kept, so nothing of
    it is known — no system prompt, tools, history or timings — and its shape is its own (`source#id`), never
    a duplicate of another's. The signals that read the request have nothing to read, and stay quiet."""
    return RecordedCall(
        source=source,
        exchange_id=exchange_id,
        session=session,
        conversation=conversation,
        started_at=started_at,
        provider=provider,
        operation=operation,
        vendor=vendor,
        host=host,
        path=path,
        url=url,
        model=model,
        status=status,
        error=error,
        usage=usage,
        cost=cost,
        latency_ms=None,
        ttfb_ms=None,
        tool_calls=tool_calls,
        finish_reason=finish_reason,
        message_count=message_count,
        system_fingerprint=None,
        system_tokens=0,
        defined_tools=(),
        defined_tool_tokens=0,
        tool_results=(),
        large_blocks=(),
        shape=fingerprint(f"{source}\n{exchange_id}"),
        output_text=output_text,
        history_tokens=0,
        head_system="",
        scale=1.0,
    )


def fingerprint(text: str) -> str:
    return _digest(text.encode())


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def build_call(
    decoded: ChatExchange,
    *,
    source: str,
    exchange_id: int,
    session: str,
    conversation: str,
    started_at: datetime,
    latency_ms: float | None,
    ttfb_ms: float | None,
    model: str | None,
    status: int | None,
    url: str,
    vendor: str | None,
    book: PriceBook,
    lineage: Lineage = Lineage(),
    injected: "tuple[Injected, ...]" = (),
) -> RecordedCall:
    request = decoded.conversation
    completion = decoded.completion
    usage = decoded.usage
    if usage is None:
        usage = Usage()  # a failed call bills nothing; an answer without usage is estimated below
        if completion is not None:
            usage = estimate_usage(request, completion)
    model = model or request.model or (completion.model if completion else None)
    cost = book.cost(usage, model, at=started_at, vendor=vendor, url=url, provider=decoded.route.provider)
    head = lineage.system if decoded.shared_items else _leading_system(request.messages)
    prompt = _system_prompt(request)
    system = f"{prompt}\n{head}" if prompt and head else prompt or head
    system_fingerprint, system_tokens = _text_facts(system)
    new_items = request.messages
    position = decoded.shared_items
    new_tokens, results, large = read_messages(new_items, position)
    large = (*_large_system(request), *large)
    tool_calls = tuple(tool_use(call) for call in completion.tool_calls) if completion is not None else ()
    count = position + len(new_items)
    tools = _tool_facts(request.tools)
    shape = fingerprint(f"{decoded.path}\n{model}\n{tools.joined}\n{system_fingerprint}\n{lineage.digest}")
    history = lineage.history_tokens + new_tokens
    estimate = _text_facts(prompt)[1] + tools.tokens + history  # leading system messages: in history
    reported = not usage.estimated and usage.input_tokens > 0
    scale = min(1.0, usage.input_tokens / estimate) if reported and estimate > 0 else 1.0
    if large:
        large = tuple(block for block in large if int(block.tokens * scale) >= LARGE_BLOCK_TOKENS)  # as billed
    return RecordedCall(
        source=source,
        exchange_id=exchange_id,
        session=session,
        conversation=conversation,
        started_at=started_at,
        provider=decoded.route.provider,
        operation=decoded.route.operation,
        vendor=book.vendor(vendor, url, decoded.route.provider),
        host=decoded.host,
        path=decoded.path,
        url=url,
        model=model,
        status=status,
        error=decoded.error,
        usage=usage,
        cost=cost,
        latency_ms=latency_ms,
        ttfb_ms=ttfb_ms,
        tool_calls=tool_calls,
        finish_reason=completion.stop_reason.value if completion and completion.stop_reason else None,
        message_count=count,
        system_fingerprint=system_fingerprint if system else None,
        system_tokens=system_tokens,
        defined_tools=tools.names,
        defined_tool_tokens=tools.tokens,
        tool_results=results,
        large_blocks=large,
        shape=shape,
        output_text=completion.text if completion is not None else "",
        history_tokens=history,
        head_system=head,
        scale=scale,
        injected=injected,
    )


def _text_facts(text: str) -> tuple[str, int]:
    """A system prompt's fingerprint and estimated tokens, worked out once per distinct prompt: an agent
    re-sends the same few kilobytes on every call."""
    facts = _known_texts.get(text)
    if facts is None:
        if len(_known_texts) >= _KEPT_TEXTS:
            _known_texts.clear()
        facts = _known_texts[text] = (fingerprint(text), tokens(text))
    return facts


def _system_prompt(request: Conversation) -> str:
    """The system prompt, without the billing header Claude Code sends as its first block (it changes on every
    request, and the API reads it as metadata, not as prompt)."""
    return "\n".join(part.text for part in request.system if not part.text.startswith(BILLING_HEADER))


def _leading_system(messages: tuple[Message, ...]) -> str:
    """The system and developer messages a history starts with (where OpenAI's APIs put instructions)."""
    texts = []
    for message in messages:
        if message.role not in (Role.SYSTEM, Role.DEVELOPER):
            break
        texts.append(message.text)
    return "\n".join(texts)


def read_messages(messages: tuple[Message, ...], start: int) -> tuple[int, tuple[Block, ...], tuple[Block, ...]]:
    """The messages' estimated tokens, the tool results they bring, and their large text blocks, in one pass
    over their parts. A message's tokens are those of its text (`Message.text`: text parts and tool results
    joined), counted from the parts' UTF-8 sizes, which add up as the joined text's would."""
    total = 0
    results: list[Block] = []
    large: list[Block] = []
    for offset, message in enumerate(messages):
        size = 0  # bytes of the message's text
        plain: list[str] = []  # its text parts: a large one is a block of its own
        for part in message.parts:
            if isinstance(part, TextPart):
                size += len(part.text.encode())
                plain.append(part.text)
            elif isinstance(part, ToolResultPart):
                data = part.text.encode()
                size += len(data)
                results.append(Block(_digest(data), _tokens_of(len(data)), start + offset, part.name))
            elif isinstance(part, ToolCall):
                total += tokens(_canonical(part))
        total += _tokens_of(size)
        if plain and (text := "".join(plain)) and (block := tokens(text)) >= LARGE_BLOCK_TOKENS:
            large.append(Block(fingerprint(text), block, start + offset))
    return total, tuple(results), tuple(large)


def _tokens_of(size: int) -> int:
    """`mock.usage.tokens` of a text of `size` UTF-8 bytes."""
    return -(-size // 4)


def _large_system(request: Conversation) -> list[Block]:
    return [
        Block(fingerprint(part.text), size, -1)
        for part in request.system
        if (size := tokens(part.text)) >= LARGE_BLOCK_TOKENS
    ]


@dataclass(frozen=True, slots=True)
class _Tools:
    names: tuple[str, ...]
    joined: str  # the names, comma-separated
    tokens: int  # the definitions' estimated size


def _tool_facts(tools: tuple[ToolDefinition, ...]) -> _Tools:
    """The tools' names and size in tokens, remembered by the tuple itself: the codecs hand out one tuple per
    distinct tools list (`decode_tools`), so an agent's tools, re-sent every turn, are read once."""
    kept = _known_tools.get(id(tools))
    if kept is not None and kept[0] is tools:  # the tuple is held, so its id cannot name another meanwhile
        return kept[1]
    names = tuple(tool.name for tool in tools)
    total = sum(tokens(tool.name + (tool.description or "") + _json(tool.parameters)) for tool in tools)
    facts = _Tools(names, ",".join(names), total)
    if len(_known_tools) >= _KEPT_TOOLS:
        _known_tools.clear()
    _known_tools[id(tools)] = (tools, facts)
    return facts


def tool_use(call: ToolCall) -> ToolUse:
    """A tool call as a report and the gates show it: its arguments as compact JSON."""
    arguments = call.invalid_arguments if call.invalid_arguments is not None else _json(call.arguments)
    return ToolUse(call.id, call.name, arguments, fingerprint(f"{call.name}\n{_canonical(call)}"))


def _canonical(call: ToolCall) -> str:
    if call.invalid_arguments is not None:
        return call.invalid_arguments
    return orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS).decode()


def _json(value: object) -> str:
    return orjson.dumps(value).decode() if value is not None else ""
