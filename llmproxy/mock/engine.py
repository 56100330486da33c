"""Which scripted answer a request gets: expectations in priority order (then file order), each with its own
state — remaining `times`, a script's cursor, a failover's count, a conversation's turn per isolation key.

`decide` runs under one lock, so concurrent requests take turns in arrival order and none is skipped or
answered twice. A request no expectation answers gets a `MockMiss` naming the closest expectation and why it
did not match, as replay explains its misses. A request that asks for no output (Codex CLI's warm-up) gets an
empty answer without taking a turn from anything; a count-token request no expectation answers gets
llmproxy's estimate (`token_count.py`). A Responses create in background mode is answered `queued`, and the
polls, stream resumptions and cancels for its id from the same answer (`background.py`).
"""

import functools
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import unquote

from llmproxy.chain.incoming import TEST_ID_HEADER, Incoming
from llmproxy.chain.reply import Reply
from llmproxy.errors import LlmproxyError, MockError
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.mock import spec, token_count
from llmproxy.mock.a2a.http import A2aEndpoints, AgentStanding
from llmproxy.mock.adversarial import adversarial_answer
from llmproxy.mock.background import BackgroundResponses
from llmproxy.mock.failover import FailoverState
from llmproxy.mock.mcp.http import McpEndpoints, ServerStanding
from llmproxy.mock.predicates import Asking, has_conversation_predicates, mismatches
from llmproxy.mock.reply import encode_answer, unfit
from llmproxy.mock.script import ScriptCursor
from llmproxy.mock.token_count import estimated_count

logger = logging.getLogger(__name__)
_NOTHING = spec.Respond(text="", usage=spec.Usage())  # the answer to a request that asks for no output
_LIFECYCLE = spec.HttpReply()  # what the log says answered a background response's later requests
_MCP = spec.HttpReply()  # and what answered a request to a mock MCP server or A2A agent (its gist says more)


@dataclass(frozen=True, slots=True)
class Standing:
    """An entry as it stands: its number, its definition as given, how often it answered; for a conversation,
    the turn each session is at; for an expectation's script, the turns it served."""

    number: int
    definition: spec.Expectation | spec.Conversation
    served: int
    turns: dict[str, int]
    test_id: str | None  # it answers only requests that carry this test id
    script_turns: int | None = None  # an expectation's script: the turns it has served (None: it has none)


@dataclass(slots=True)
class MockDecision:
    answer: spec.Answer
    source: str  # "expectation 2", "conversation 1 (session abc) turn 3", "expectation 4 script turn 2"
    entry: int  # 1-based position in the file (0: none, for a warm-up)
    turn: int | None = None  # the conversation or script turn (1-based) served
    chaos: ChaosProfile | None = None  # the expectation's or turn's own faults
    take_back: Callable[[], None] | None = None  # un-serve it (a fault kept the answer from the client)
    gist: dict[str, Any] | None = None  # what the answer said, for the log, when it is not one of the file's answers
    missed: str | None = None  # answered, but nothing in the file was scripted for it (an MCP tool call)

    def said(self, excerpt: int) -> dict[str, Any]:
        """What the answer said, for the request log: its `gist`, else the file's answer's text (its first
        `excerpt` characters) and tool calls, or its error."""
        if self.gist is not None:
            return self.gist
        answer = self.answer
        if isinstance(answer, spec.Respond):
            gist: dict[str, Any] = {}
            if answer.text:
                gist["text"] = answer.text[:excerpt]
            if answer.toolCalls:
                gist["toolCalls"] = [{"name": call.name, "arguments": call.arguments} for call in answer.toolCalls]
            return gist
        if isinstance(answer, spec.ErrorReply):
            return {"error": answer.message or f"status {answer.status}"}
        return {"answer": type(answer).__name__.lower()}


@dataclass(frozen=True, slots=True)
class MockMiss:
    closest: str | None  # the expectation that came nearest
    reasons: tuple[str, ...]

    def explain(self) -> str:
        if self.closest is None:
            return "no expectation answers this request (none were given)"
        return f"no expectation matched; closest: {self.closest}: " + "; ".join(self.reasons)


class MockEngine:
    def __init__(self, expectations: spec.ExpectationsFile) -> None:
        """`expectations` as `load_expectations` gives them: scripts loaded."""
        entries = [_Entry.of(number, entry) for number, entry in enumerate(expectations.expectations, 1)]
        self._entries = sorted(entries, key=lambda entry: -entry.priority)  # stable: file order within a priority
        self._numbered = len(entries)  # the number the last entry was given: an added one is numbered after it
        self._lock = threading.Lock()
        self._background = BackgroundResponses()
        self._mcp = McpEndpoints(expectations.mcpServers) if expectations.mcpServers else None
        self._a2a = A2aEndpoints(expectations.a2aAgents) if expectations.a2aAgents else None

    def mcp_standing(self) -> list[ServerStanding]:
        """The MCP servers it serves (docs/mcp.md), each with what it has served."""
        return self._mcp.standing() if self._mcp is not None else []

    def a2a_standing(self, base_url: str) -> list[AgentStanding]:
        """The A2A agents it serves (docs/a2a.md), each with its card as read on `base_url` and what it served."""
        return self._a2a.standing(base_url) if self._a2a is not None else []

    def add(self, expectations: spec.ExpectationsFile, test_id: str | None = None) -> list[int]:
        """Answer from `expectations` too, from the next request on, each numbered after every entry so far and
        placed by its priority after the entries of the same priority (as if appended to the file); their
        numbers. `test_id`: they answer only requests that carry it (`x-llmproxy-test-id`), so tests sharing one
        mock do not answer each other's requests. Their MCP servers are served too, one named as a server
        already served in its place, and so are their A2A agents; MockError when one would share a path or URL with
        another."""
        if expectations.mcpServers:
            try:
                if self._mcp is None:
                    self._mcp = McpEndpoints(expectations.mcpServers)
                else:
                    self._mcp.add(expectations.mcpServers)
            except ValueError as error:
                raise MockError(f"mcpServers: {error}") from None
        if expectations.a2aAgents:
            try:
                if self._a2a is None:
                    self._a2a = A2aEndpoints(expectations.a2aAgents)
                else:
                    self._a2a.add(expectations.a2aAgents)
            except ValueError as error:
                raise MockError(f"a2aAgents: {error}") from None
        with self._lock:
            added = [
                _Entry.of(self._numbered + offset, entry, test_id)
                for offset, entry in enumerate(expectations.expectations, 1)
            ]
            self._numbered += len(added)
            self._entries = sorted([*self._entries, *added], key=lambda entry: -entry.priority)
        return [entry.number for entry in added]

    def remove(self, number: int) -> bool:
        """Stop answering from entry `number`; whether there was one."""
        with self._lock:
            kept = [entry for entry in self._entries if entry.number != number]
            removed = len(kept) != len(self._entries)
            self._entries = kept
        return removed

    def clear(self, test_id: str | None = None) -> int:
        """Stop answering from every entry (numbering goes on) and serving every MCP server and A2A agent, or only
        from the entries of `test_id` (servers and agents are served to every test); how many entries, servers and
        agents there were."""
        with self._lock:
            kept = [entry for entry in self._entries if test_id is not None and entry.test_id != test_id]
            cleared = len(self._entries) - len(kept)
            self._entries = kept
            if test_id is None and self._mcp is not None:
                cleared += len(self._mcp.servers)
                self._mcp = None
            if test_id is None and self._a2a is not None:
                cleared += len(self._a2a.agents)
                self._a2a = None
        return cleared

    def standing(self) -> list["Standing"]:
        """Every entry in the order it is tried, with what it has served."""
        with self._lock:
            return [entry.standing() for entry in self._entries]

    def decide(self, request: Incoming) -> MockDecision | MockMiss:
        if request.codec is not None and request.codec.asks_nothing(request.json):
            return MockDecision(_NOTHING, "warm-up (asks for no output)", 0)
        with self._lock:
            near: list[Tried] = []
            for entry in self._entries:
                outcome = entry.take(request)
                if isinstance(outcome, MockDecision):
                    if outcome.take_back is not None:
                        outcome.take_back = functools.partial(self._locked, outcome.take_back)
                    return outcome
                near.append(Tried(entry.number, entry.name, entry.predicates, outcome))
        counted = estimated_count(request)
        if counted is not None:
            return MockDecision(counted, token_count.SOURCE, 0)
        if not near:
            return MockMiss(None, ())
        nearest = closest(near)[0]
        return MockMiss(nearest.name, nearest.reasons)

    def tried(self, request: Incoming) -> list["Tried"]:
        """Every entry in the order it is tried, each with why it would not answer `request` now (nothing: it
        would), its state left as it is: what a request would meet, asked without sending it."""
        with self._lock:
            return [
                Tried(entry.number, entry.name, entry.predicates, entry.refusal(request)) for entry in self._entries
            ]

    def _locked(self, change: Callable[[], None]) -> None:
        with self._lock:
            change()

    def answer(self, request: Incoming) -> tuple[MockDecision, Reply] | MockMiss:
        """The decision and its reply on the wire. An answer that cannot be encoded for this request (a body
        its codec cannot read) is a miss that names the expectation and why, never an error of the mock's own. A
        request to one of the file's MCP servers or A2A agents is answered by it first."""
        if self._mcp is not None:
            served = self._mcp.answer(request)
            if served is not None:
                return MockDecision(_MCP, served.source, 0, gist=served.gist, missed=served.missed), served.reply
        if self._a2a is not None:
            called = self._a2a.answer(request)
            if called is not None:
                return MockDecision(_MCP, called.source, 0, gist=called.gist, missed=called.missed), called.reply
        lifecycle = self._background.answer(request)
        if lifecycle is not None:
            word, reply = lifecycle
            return MockDecision(_LIFECYCLE, f"background response ({word})", 0), reply
        decision = self.decide(request)
        if isinstance(decision, MockMiss):
            return decision
        try:
            reply = encode_answer(decision.answer, request)
            return decision, self._background.start(request, reply) if BackgroundResponses.starts(request) else reply
        except Exception as exc:
            logger.debug("%s could not answer %s %s", decision.source, request.host, request.path, exc_info=True)
            why = str(exc) if isinstance(exc, LlmproxyError) else f"{type(exc).__name__}: {exc}"
            return MockMiss(decision.source, (f"its answer could not be given: {why}",))


@dataclass(frozen=True, slots=True)
class Tried:
    """An entry tried on a request without answering it: its number and name, how many predicates its match
    sets, and why it would not answer (empty: it would)."""

    number: int
    name: str
    predicates: int
    reasons: tuple[str, ...]


def closest(tried: list[Tried]) -> list[Tried]:
    """The entries that would not answer, nearest first: the fewest reasons, then the most predicates held (the
    most specific to the request), then the order they are tried — the mock's own choice for its miss."""
    refused = [entry for entry in tried if entry.reasons]
    return sorted(refused, key=lambda entry: (len(entry.reasons), -entry.predicates))


@dataclass(slots=True)
class _Entry:
    number: int
    priority: int
    name: str
    definition: spec.Expectation | spec.Conversation  # as given, for listing
    expectation: spec.Expectation | None = None
    conversation: spec.ConversationSpec | None = None
    served: int = 0
    turns: dict[str, int] = field(default_factory=dict)  # isolation key → turns served
    states: dict[object, ScriptCursor | FailoverState] = field(default_factory=dict)
    predicates: int = 0  # how many its match sets: ties between near misses go to the more specific
    test_id: str | None = None  # added for one test (`x-llmproxy-test-id`): it answers only that test's requests

    @classmethod
    def of(cls, number: int, entry: spec.Expectation | spec.Conversation, test_id: str | None = None) -> "_Entry":
        if isinstance(entry, spec.Conversation):
            conversation = entry.conversation
            name = f"conversation {number}"
            predicates = _predicate_count(conversation.match) + (test_id is not None)  # the scope is one
            return cls(
                number, entry.priority, name, entry, conversation=conversation, predicates=predicates, test_id=test_id
            )
        name = f"expectation {number}"
        predicates = _predicate_count(entry.match) + (test_id is not None)
        return cls(number, entry.priority, name, entry, entry, predicates=predicates, test_id=test_id)

    def standing(self) -> Standing:
        if self.expectation is not None:
            script = None
            if self.expectation.script is not None:
                cursor = self.states.get((0, ""))
                script = cursor.served if isinstance(cursor, ScriptCursor) else 0
            return Standing(self.number, self.definition, self.served, {}, self.test_id, script)
        return Standing(self.number, self.definition, sum(self.turns.values()), dict(self.turns), self.test_id)

    def _scope_mismatch(self, request: Incoming) -> list[str]:
        """Why an entry added for one test does not answer this request: it does not carry that test's id."""
        if self.test_id is None or (given := request.test_id) == self.test_id:
            return []
        return [f"{TEST_ID_HEADER}: expected {self.test_id!r}, got {given!r}"]

    def refusal(self, request: Incoming) -> tuple[str, ...]:
        """Why this entry would not answer the request now; nothing when it would. Changes nothing."""
        scope = self._scope_mismatch(request)
        if self.expectation is not None:
            reasons = [*scope, *failed_predicates(self.expectation.match, request)]
            if not reasons and self.expectation.times is not None and self.served >= self.expectation.times:
                reasons = [f"times: all {self.expectation.times} used"]
            if not reasons and (why := unfit(self.expectation, request)) is not None:
                reasons = [f"answer: {why}"]
            return tuple(reasons)
        assert self.conversation is not None
        reasons = [*scope, *(failed_predicates(self.conversation.match, request) if self.conversation.match else [])]
        if reasons:
            return tuple(reasons)
        key = _isolation_key(self.conversation.isolateBy, request)
        position = self.turns.get(key, 0)
        if position >= len(self.conversation.turns):
            return (f"all {len(self.conversation.turns)} turns served{_session(key)}",)
        turn = self.conversation.turns[position]
        reasons = failed_predicates(turn.match, request) if turn.match else []
        if not reasons and (why := unfit(turn, request)) is not None:
            reasons = [f"answer: {why}"]
        return tuple(f"turn {position + 1}{_session(key)}: {reason}" for reason in reasons)

    def take(self, request: Incoming) -> MockDecision | tuple[str, ...]:
        """The decision if this entry answers the request (its state advanced), else why it does not."""
        reasons = self.refusal(request)
        if reasons:
            return reasons
        if self.expectation is not None:
            self.served += 1
            answer, step = self._answer(0, self.expectation, "")
            source = self.name if step is None else f"{self.name} {step}"
            chaos = self.expectation.chaos
            return MockDecision(answer, source, self.number, chaos=chaos, take_back=self._unserve if chaos else None)
        assert self.conversation is not None
        key = _isolation_key(self.conversation.isolateBy, request)
        position = self.turns.get(key, 0)
        turn = self.conversation.turns[position]
        self.turns[key] = position + 1
        answer, step = self._answer(position, turn, key)
        source = f"{self.name}{_session(key)} turn {position + 1}" + (f" {step}" if step else "")
        take_back = functools.partial(self._unturn, key, position) if turn.chaos is not None else None
        return MockDecision(answer, source, self.number, position + 1, turn.chaos, take_back)

    def _unserve(self) -> None:
        self.served = max(0, self.served - 1)

    def _unturn(self, key: str, position: int) -> None:
        """The session is back at `position`, unless it has moved past the turn since."""
        if self.turns.get(key) == position + 1:
            self.turns[key] = position

    def _answer(self, index: int, answers: spec.Expectation | spec.Turn, key: str) -> tuple[spec.Answer, str | None]:
        """The answer, and for stateful kinds which step of them was served."""
        if answers.respond is not None:
            return answers.respond, None
        if answers.error is not None:
            return answers.error, None
        if answers.embedding is not None:
            return answers.embedding, None
        if answers.rerank is not None:
            return answers.rerank, None
        if answers.http is not None:
            return answers.http, None
        if answers.adversarial is not None:
            return adversarial_answer(answers.adversarial), None
        state = self.states.get((index, key))  # a failover or a script runs per conversation session
        if answers.failover is not None:
            if not isinstance(state, FailoverState):
                state = self.states[(index, key)] = FailoverState(answers.failover)
            return state.next(), None
        if not isinstance(answers.script, spec.Script):
            raise MockError(f"{self.name}: the script {answers.script!r} was not loaded (use load_expectations)")
        if not isinstance(state, ScriptCursor):
            state = self.states[(index, key)] = ScriptCursor(answers.script)
        turn, answer = state.next()
        return answer, "script exhausted" if turn is None else f"script turn {turn + 1}"


def _predicate_count(match: spec.Match | None) -> int:
    """How many predicates a match sets."""
    return 0 if match is None else sum(value is not None for name, value in match if name != "normalization")


def failed_predicates(match: spec.Match, request: Asking) -> list[str]:
    """Why `request` does not hold to `match`, one line per predicate that fails; none when it does. The mock
    picks its answer with it, and the control API's verify counts the journal's requests with it: one predicate
    language for both."""
    reasons = []
    route = request.route
    if match.provider is not None and (route is None or route.provider.value != match.provider.lower()):
        reasons.append(f"provider: expected {match.provider}, got {route.provider.value if route else 'none'}")
    if match.host is not None and request.host.lower() != match.host.lower():
        reasons.append(f"host: expected {match.host}, got {request.host}")
    if match.path is not None and not _path_matches(match.path, request.path):
        reasons.append(f"path: expected {match.path}, got {request.path}")
    if match.model is not None and request.model != match.model:
        reasons.append(f"model: expected {match.model}, got {request.model}")
    if has_conversation_predicates(match):  # only these need the request decoded
        conversation = request.conversation
        if conversation is None:
            reasons.append("conversation predicates need a chat request, and this is not one")
        else:
            reasons += mismatches(match, conversation)
    return reasons


def _path_matches(expected: str, path: str) -> bool:
    """As sent or percent-decoded: botocore escapes the `:` of a Bedrock model id (`v1%3A0`), which a user
    writes as `v1:0`."""
    if expected.startswith("^"):
        return any(re.search(expected, form) is not None for form in (path, unquote(path)))
    return expected in (path, unquote(path))


def _isolation_key(isolation: spec.Isolation | None, request: Incoming) -> str:
    if isolation is None:
        return ""
    name = isolation.name.lower()
    if isolation.source == "header":
        return request.headers.get(name, "")
    if isolation.source == "queryParameter":
        return request.query.get(isolation.name, "")
    cookies = SimpleCookie()
    cookies.load(request.headers.get("cookie", ""))
    morsel = cookies.get(isolation.name)
    return morsel.value if morsel is not None else ""


def _session(key: str) -> str:
    return f" (session {key})" if key else ""
