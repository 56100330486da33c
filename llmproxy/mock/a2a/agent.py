"""What a mock A2A agent answers to each JSON-RPC request, whatever dialect it speaks (`wire`): a message opens a
task (or continues one that waits for input) with the first reply whose `match` holds, which goes through its
scripted states and ends with its artifacts; a task is read, cancelled or followed again by its id.

How far a task has gone depends on how it was asked: a blocking `message/send` gets it where it rests (its
last state); one that returns at once (`returnImmediately`, or 0.3's `blocking: false`) gets it in its first
state, and each `tasks/get` after moves it one state on; a stream sends the task as submitted, then each
state and artifact as an event, `intervalMs` apart, and the task rests where the stream ends.

A message no reply answers gets a failed task whose status says which reply came nearest and why it did not
match, counted as a miss in the log, as the mock's LLM misses are. Nothing here knows HTTP.
"""

import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from llmproxy import jsonrpc
from llmproxy.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, JsonObject
from llmproxy.mock.a2a import spec, wire
from llmproxy.mock.a2a.wire import Verb
from llmproxy.mock.scripted import Script, Unmatched, cut, exhausted


@dataclass(frozen=True, slots=True)
class Answered:
    """What one request gets: a `response`, or `events` (seconds after the request, each a JSON-RPC response)
    for a stream; for the log, what was asked (`said`), which reply answered (`by`), and `missed` when no
    reply was scripted for the message."""

    response: JsonObject | None = None
    events: tuple[tuple[float, JsonObject], ...] | None = None
    said: str = ""
    by: str = ""
    missed: str | None = None


@dataclass(slots=True)
class _Task:
    """A task as it stands: the states scripted for it, how far it has gone (`at`), its artifacts (given once
    it has reached its last state) and history."""

    id: str
    context_id: str
    states: list[spec.TaskStatus]
    artifacts: list[JsonObject]
    history: list[JsonObject]
    at: int = 0
    stamps: dict[int, str] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return self.states[self.at].state

    @property
    def done(self) -> bool:
        return self.state in spec.TERMINAL

    def status(self, index: int | None = None) -> JsonObject:
        index = self.at if index is None else index
        status = self.states[index]
        made: JsonObject = {"state": status.state, "timestamp": self.stamps.setdefault(index, _now())}
        if status.all_parts:
            made["message"] = _agent_message(status.all_parts, self, f"{self.id}-status-{index + 1}")
        return made

    def snapshot(self, index: int | None = None, history: int | None = None) -> JsonObject:
        index = self.at if index is None else index
        made: JsonObject = {"kind": "task", "id": self.id, "contextId": self.context_id, "status": self.status(index)}
        if index == len(self.states) - 1 and self.artifacts:
            made["artifacts"] = list(self.artifacts)
        kept = self.history if history is None else (self.history[-history:] if history > 0 else [])
        if kept:
            made["history"] = list(kept)
        return made


@dataclass(frozen=True, slots=True)
class ReplyStanding:
    """How many messages each reply has answered, in the file's order, and the tasks opened."""

    served: tuple[int, ...]
    tasks: int


class A2aAgentMock:
    """One agent of the file: its replies with what each has served, and the tasks it has opened."""

    def __init__(self, definition: spec.A2aAgent) -> None:
        self.definition = definition
        self.name = definition.name
        self._script = Script.of(definition.replies)
        self._patterns = [
            re.compile(reply.match.textMatches) if reply.match and reply.match.textMatches else None
            for reply in definition.replies
        ]
        self._tasks: dict[str, _Task] = {}
        self._lock = threading.Lock()

    def standing(self) -> ReplyStanding:
        with self._lock:
            return ReplyStanding(self._script.served(), len(self._tasks))

    def answer(self, message: Any) -> Answered:
        """Any JSON value received as one JSON-RPC request."""
        try:
            read = jsonrpc.read(message)
        except jsonrpc.Invalid as problem:
            return Answered(problem.answer, said=f"invalid message: {problem}")
        if isinstance(read, jsonrpc.Response) or read.id is None:
            return Answered(said="a notification" if isinstance(read, jsonrpc.Request) else "a response")
        known = wire.verb(read.method)
        if known is None:
            return _error(read.id, METHOD_NOT_FOUND, f"method not found: {read.method}", read.method)
        what, is_v1 = known
        try:
            with self._lock:
                return self._answer(read, what, is_v1)
        except _Refused as refused:
            return _error(read.id, refused.code, str(refused), read.method)

    def _answer(self, request: jsonrpc.Request, what: Verb, is_v1: bool) -> Answered:
        assert request.id is not None
        params, method = request.params, request.method
        if what is Verb.PUSH:
            raise _Refused(wire.PUSH_NOT_SUPPORTED, "push notifications are not supported by this agent")
        if what is Verb.EXTENDED_CARD:
            raise _Refused(wire.EXTENDED_CARD_NOT_CONFIGURED, "this agent has no authenticated extended card")
        if what in (Verb.STREAM, Verb.SUBSCRIBE) and not self.definition.streaming:
            raise _Refused(wire.UNSUPPORTED_OPERATION, f"{method}: this agent does not stream (its card says so)")
        if what in (Verb.SEND, Verb.STREAM):
            return self._message(request, what is Verb.STREAM, is_v1)
        task = self._task(params, method)
        history = _history_length(params, method)
        if what is Verb.GET:
            if task.at < len(task.states) - 1 and task.state not in spec.INTERRUPTED:
                task.at += 1  # polled: it moves on
            return _result(request.id, task.snapshot(history=history), is_v1, False, method, f"task {task.state}")
        if what is Verb.CANCEL:
            if task.done:
                raise _Refused(wire.TASK_NOT_CANCELABLE, f"task {task.id} is {task.state}: it cannot be canceled")
            task.states = [*task.states[: task.at + 1], spec.TaskStatus(state="canceled")]
            task.at = len(task.states) - 1
            return _result(request.id, task.snapshot(history=history), is_v1, False, method, "task canceled")
        # SUBSCRIBE: the task as it stands, then what it has still to go through
        start = task.at
        task.at = len(task.states) - 1
        events = [(0.0, task.snapshot(start)), *_steps(task, start + 1, 0.0)]
        return Answered(events=_framed(request.id, events, is_v1), said=method, by=f"task {task.state}")

    def _message(self, request: jsonrpc.Request, streaming: bool, is_v1: bool) -> Answered:
        assert request.id is not None
        method = request.method
        message = request.params.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
            raise _Refused(INVALID_PARAMS, f"{method}: params.message is a message object with parts")
        task_id = message.get("taskId")
        task = self._tasks.get(task_id) if isinstance(task_id, str) and task_id else None
        if task_id and task is None:
            raise _Refused(wire.TASK_NOT_FOUND, f"task {task_id} not found")
        if task is not None and task.done:
            raise _Refused(wire.UNSUPPORTED_OPERATION, f"task {task.id} is {task.state}: it takes no more messages")
        text = wire.texts(message)
        continues = task is not None
        replies = self.definition.replies
        picked = self._script.pick(lambda index: _mismatches(replies[index], self._patterns[index], text, continues))
        missed = None
        if isinstance(picked, Unmatched):
            missed = picked.explain(f"no reply of agent {self.name} answers this message", "reply")
            answer, by = spec.AgentAnswer(states=(spec.TaskStatus(state="failed", text=missed),)), "no reply (missed)"
        elif picked.answer is None:
            failed = spec.TaskStatus(state="failed", text=exhausted((picked.step or 1) - 1))
            answer, by = spec.AgentAnswer(states=(failed,)), picked.said("reply")
        else:
            answer, by = picked.answer, picked.said("reply")
        if answer.error is not None:
            error = answer.error
            return Answered(jsonrpc.error(request.id, error.code, error.message, error.data), said=method, by=by)
        context_id = message.get("contextId") if isinstance(message.get("contextId"), str) else None
        said = answer.agent_message
        if said is not None:
            context = task.context_id if task is not None else context_id or _new_id()
            reply = _agent_message(said.all_parts, None, _new_id(), context, task.id if task else None)
            if task is not None:
                task.history += [wire.received(message), reply]
            if streaming:
                events = _framed(request.id, [(0.0, reply)], is_v1)
                return Answered(events=events, said=method, by=by, missed=missed)
            return Answered(
                jsonrpc.result(request.id, wire.result(reply, is_v1, True)), said=method, by=by, missed=missed
            )
        if task is None:
            task = _Task(_new_id(), context_id or _new_id(), [spec.TaskStatus(state="submitted")], [], [])
            self._tasks[task.id] = task
        start = task.at
        scripted = list(answer.task_states)
        first = start + 1  # the first scripted state
        if scripted[0].state == "submitted" and start == 0 and len(task.states) == 1:
            task.states[0] = scripted.pop(0)  # said with its own message: in place of the one assumed
            first = 0
        task.states += scripted
        task.history.append({**wire.received(message), "taskId": task.id, "contextId": task.context_id})
        base = len(task.artifacts)
        task.artifacts += [_artifact(each, task.id, base + number) for number, each in enumerate(answer.artifacts, 1)]
        by += f" (task {task.states[-1].state})"
        if streaming:
            snapshot = task.snapshot(start)
            task.at = len(task.states) - 1
            steps = _steps(task, start + 1, answer.intervalMs / 1000, len(answer.artifacts))
            streamed = _framed(request.id, [(0.0, snapshot), *steps], is_v1)
            return Answered(events=streamed, said=method, by=by, missed=missed)
        immediately = _returns_immediately(request.params, is_v1)
        task.at = min(first, len(task.states) - 1) if immediately else len(task.states) - 1
        history = _history_length(request.params.get("configuration") or {}, method)
        body = wire.result(task.snapshot(history=history), is_v1, True)
        return Answered(jsonrpc.result(request.id, body), said=method, by=by, missed=missed)

    def _task(self, params: JsonObject, method: str) -> _Task:
        task_id = params.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise _Refused(INVALID_PARAMS, f"{method}: params.id is the task's id, a string")
        task = self._tasks.get(task_id)
        if task is None:
            raise _Refused(wire.TASK_NOT_FOUND, f"task {task_id} not found")
        return task


class _Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _mismatches(reply: spec.AgentReply, pattern: re.Pattern[str] | None, text: str, continues: bool) -> tuple[str, ...]:
    match = reply.match
    reasons = []
    if match is not None:
        if match.textContains is not None and match.textContains.casefold() not in text.casefold():
            reasons.append(f"textContains: {match.textContains!r} not in {cut(repr(text))}")
        if pattern is not None and not pattern.search(text):
            reasons.append(f"textMatches: /{pattern.pattern}/ not found in {cut(repr(text))}")
        if match.continues is not None and match.continues != continues:
            reasons.append("continues: the message " + ("opens a new task" if match.continues else "continues a task"))
    return tuple(reasons)


def _steps(task: _Task, start: int, interval: float, artifacts: int | None = None) -> list[tuple[float, JsonObject]]:
    """The events that take `task` from state `start` to its last: a status update each, the artifacts (the last
    `artifacts` of them; all when None) just before the last state."""
    events: list[tuple[float, JsonObject]] = []
    at = 0.0
    last = len(task.states) - 1
    given = task.artifacts if artifacts is None else task.artifacts[len(task.artifacts) - artifacts :]
    for index in range(start, last + 1):
        if index == last:
            for artifact in given:
                at += interval
                events.append(
                    (
                        at,
                        {
                            "kind": "artifact-update",
                            "taskId": task.id,
                            "contextId": task.context_id,
                            "artifact": artifact,
                            "append": False,
                            "lastChunk": True,
                        },
                    )
                )
        at += interval
        final = index == last and (task.states[index].state in spec.TERMINAL | spec.INTERRUPTED)
        events.append(
            (
                at,
                {
                    "kind": "status-update",
                    "taskId": task.id,
                    "contextId": task.context_id,
                    "status": task.status(index),
                    "final": final,
                },
            )
        )
    return events


def _framed(
    request_id: jsonrpc.Id, events: list[tuple[float, JsonObject]], is_v1: bool
) -> tuple[tuple[float, JsonObject], ...]:
    return tuple((at, jsonrpc.result(request_id, wire.result(event, is_v1, True))) for at, event in events)


def _result(request_id: jsonrpc.Id, value: JsonObject, is_v1: bool, wrapped: bool, said: str, by: str) -> Answered:
    return Answered(jsonrpc.result(request_id, wire.result(value, is_v1, wrapped)), said=said, by=by)


def _error(request_id: jsonrpc.Id, code: int, message: str, said: str) -> Answered:
    return Answered(jsonrpc.error(request_id, code, message), said=f"{said} (error {code})")


def _returns_immediately(params: JsonObject, is_v1: bool) -> bool:
    configuration = params.get("configuration")
    if not isinstance(configuration, dict):
        return False
    if is_v1:
        return configuration.get("returnImmediately") is True
    return configuration.get("blocking") is False


def _history_length(params: JsonObject, method: str) -> int | None:
    length = params.get("historyLength")
    if length is None:
        return None
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise _Refused(INVALID_PARAMS, f"{method}: historyLength is a whole number, not {length!r}")
    return length


def _artifact(artifact: spec.Artifact, task_id: str, number: int) -> JsonObject:
    made: JsonObject = {"artifactId": artifact.artifactId or f"{task_id}-{number}"}
    for name in ("name", "description"):
        value = getattr(artifact, name)
        if value is not None:
            made[name] = value
    made["parts"] = [wire.part(each) for each in artifact.all_parts]
    if artifact.metadata is not None:
        made["metadata"] = artifact.metadata
    return made


def _agent_message(
    parts: tuple[spec.Part, ...],
    task: _Task | None,
    message_id: str,
    context: str | None = None,
    task_id: str | None = None,
) -> JsonObject:
    made: JsonObject = {
        "kind": "message",
        "messageId": message_id,
        "role": "agent",
        "parts": [wire.part(each) for each in parts],
    }
    if task is not None:
        made.update(taskId=task.id, contextId=task.context_id)
    else:
        if task_id is not None:
            made["taskId"] = task_id
        if context is not None:
            made["contextId"] = context
    return made


def _new_id() -> str:
    return str(uuid.uuid4())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
