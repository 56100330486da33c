"""A request as a match's predicates read it (`engine.failed_predicates`), read no further than they ask: its
API, path and model from its JSON first; when a predicate asks about the conversation, its turn count and
its latest message read alone by its API's own reader (`ChatCodec.latest_message`); the whole history only
for a tool result's name, or for an API whose messages are not one per item of a list.

The journal's verifies judge thousands of requests with these predicates, each request read once and kept:
the chain's reading of a request (`Incoming`) costs several times more, and a whole decode of its
conversation several times more again. What is kept is small — the API (shared), the model, and for a
conversation predicate the latest message and the turn count — besides the request itself, which the journal
keeps anyway. A request whose latest message reads but whose earlier history would not decode is read as the
conversation it ends with, where a whole decode would find none.
"""

from typing import Any, Final

from llmproxy.chain.incoming import Incoming, body_json, detected, spoken
from llmproxy.errors import ParseError
from llmproxy.model import Conversation, Message
from llmproxy.model.exchange import RawRequest
from llmproxy.providers.base import ChatCodec

_NOT_YET: Final = object()


class Asked:
    """`raw` as the predicates read it (`predicates.Asking`): `route`, `host`, `path` (without its query) and
    `model` read when it is made; `conversation` the first time a predicate asks, then kept."""

    __slots__ = ("_codec", "_conversation", "_raw", "host", "model", "path", "route")

    def __init__(self, raw: RawRequest, conversation: bool = False) -> None:
        """`conversation`: read the conversation's facts now too, from the same parse of the body (a predicate
        is about to ask for them)."""
        self._raw = raw
        self.host = raw.host
        self.path = raw.path.partition("?")[0]
        self._conversation: Any = _NOT_YET
        try:
            route, parsed, codec, self.model = spoken(raw, detected(raw))
        except Exception:  # as the chain reads it: a request its API cannot read is still a request
            route, parsed, codec, self.model = None, None, None, None
        self.route, self._codec = route, codec
        if conversation and codec is not None and codec.latest_message is not None:
            self._conversation = Latest.of(codec, raw, parsed)

    @property
    def conversation(self) -> "Latest | Conversation | None":
        """What the conversation predicates read (`predicates.Said`); None when it is not a chat request, or
        does not read as one."""
        if self._conversation is _NOT_YET:
            codec = self._codec
            if codec is None or codec.latest_message is None:
                self._conversation = Incoming(self._raw).conversation  # as the chain decodes it, whole
            else:
                self._conversation = Latest.of(codec, self._raw, body_json(self._raw.body))
        conversation: Latest | Conversation | None = self._conversation
        return conversation


class Latest:
    """A chat request's conversation as the predicates read it: its latest message, read without the rest; its
    completed assistant turns and its whole history (for a tool result's name, given by the call it answers)
    the first time they are read."""

    __slots__ = ("_codec", "_messages", "_raw", "_turns", "latest")

    def __init__(self, codec: ChatCodec, raw: RawRequest, latest: Message | None) -> None:
        self._codec = codec
        self._raw = raw
        self.latest = latest
        self._turns: int | None = None
        self._messages: tuple[Message, ...] | None = None

    @classmethod
    def of(cls, codec: ChatCodec, raw: RawRequest, parsed: Any) -> "Latest | None":
        """From `raw`'s body parsed (None: it is not JSON); None when its latest message is not its API's."""
        assert codec.latest_message is not None
        if parsed is None:
            return None
        try:
            return cls(codec, raw, codec.latest_message(parsed))
        except ParseError:
            return None

    @property
    def assistant_turns(self) -> int:
        if self._turns is None:
            self._turns = self._codec.assistant_turns(body_json(self._raw.body))
        return self._turns

    @property
    def messages(self) -> tuple[Message, ...]:
        """The whole history, decoded the first time it is read."""
        if self._messages is None:
            conversation = Incoming(self._raw).conversation
            self._messages = conversation.messages if conversation is not None else ()
        return self._messages
