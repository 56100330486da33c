"""The conversation predicates of a `match` (MockServer's conversation matchers), evaluated on the request
as the provider decoders see it, so one predicate serves every provider.

* `turnIndex`: completed assistant turns in the request.
* `latestMessageContains`: subject and expected text both normalised; `latestMessageMatches`: a regular
  expression searched in the normalised subject (normalising the pattern would corrupt it).
* `latestMessageRole`: the latest message's role, where a message that carries only tool results counts as
  `tool` — as MockServer reads it, and the same for Anthropic (a user message of tool_result blocks) and
  OpenAI (a `tool` message).
* `containsToolResultFor`: a tool result for that tool anywhere in the request.

`mismatches` gives a reason per failing predicate; it is empty exactly when all of them hold.
"""

import functools
import re
from typing import Protocol

from llmproxy.mock.normalise import normalise
from llmproxy.mock.spec import Match, Normalization
from llmproxy.model import Message, Role, Route, TextPart, ToolResultPart, name_tool_results

_EXCERPT = 80


class Said(Protocol):
    """What the conversation predicates read of a request's conversation: a decoded `Conversation`, or a reading
    of no more of it than they ask (`llmproxy.mock.asked`)."""

    @property
    def assistant_turns(self) -> int: ...

    @property
    def latest(self) -> Message | None: ...

    @property
    def messages(self) -> tuple[Message, ...]: ...


class Asking(Protocol):
    """What a match's predicates read of a request (`engine.failed_predicates`): the chain's `Incoming`, or a
    verify's reading of a journal entry (`llmproxy.mock.asked`)."""

    @property
    def route(self) -> Route | None: ...

    @property
    def host(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def conversation(self) -> Said | None: ...


def mismatches(match: Match, conversation: Said) -> list[str]:
    reasons = []
    if match.turnIndex is not None and conversation.assistant_turns != match.turnIndex:
        turns = conversation.assistant_turns
        reasons.append(
            f"turnIndex: expected {match.turnIndex}, the request has {turns} completed assistant turn"
            + ("" if turns == 1 else "s")
        )
    latest = conversation.latest
    text = ""
    if latest is not None and (match.latestMessageContains is not None or match.latestMessageMatches is not None):
        text = normalise(latest.text, match.normalization)
    if match.latestMessageContains is not None:
        expected = _expected(match.latestMessageContains, match.normalization)
        if expected not in text:
            reasons.append(f"latestMessageContains: {_excerpt(expected)!r} not in {_excerpt(text)!r}")
    if match.latestMessageMatches is not None and re.search(match.latestMessageMatches, text) is None:
        reasons.append(f"latestMessageMatches: /{match.latestMessageMatches}/ not found in {_excerpt(text)!r}")
    if match.latestMessageRole is not None:
        role = latest_role(latest)
        if role is not match.latestMessageRole:
            reasons.append(
                f"latestMessageRole: expected {match.latestMessageRole.value}, got {role.value if role else 'none'}"
            )
    if match.containsToolResultFor is not None and match.containsToolResultFor not in tool_results(conversation):
        named = ", ".join(sorted(tool_results(conversation))) or "none"
        reasons.append(f"containsToolResultFor: no result for {match.containsToolResultFor} (results for: {named})")
    return reasons


@functools.lru_cache(maxsize=256)
def _expected(text: str, options: Normalization | None) -> str:
    """An expected text normalised once, not once per request it is held against."""
    return normalise(text, options)


def has_conversation_predicates(match: Match) -> bool:
    """Whether any conversation predicate is set (normalisation alone is not a predicate)."""
    return not (
        match.turnIndex is None
        and match.latestMessageContains is None
        and match.latestMessageMatches is None
        and match.latestMessageRole is None
        and match.containsToolResultFor is None
    )


def latest_role(message: Message | None) -> Role | None:
    if message is None:
        return None
    if message.tool_results and not any(isinstance(part, TextPart) and part.text.strip() for part in message.parts):
        return Role.TOOL
    return message.role


def tool_results(conversation: Said) -> set[str]:
    """The names of the tools whose results the request carries (named from their calls where the wire sends
    only the call id, as Chat Completions does)."""
    return {
        part.name
        for message in name_tool_results(conversation.messages)
        for part in message.parts
        if isinstance(part, ToolResultPart) and part.name
    }


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
