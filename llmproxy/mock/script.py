"""llmsim's scripted mode: ordered turns served one per request, through an atomic cursor.

Script files are llmsim's own format and load unchanged. Each turn's answer is built once: text
(`assistant`), tool calls (`tool_calls`), both (`mixed`), or an error (`error`: `rate_limit` → 429,
`timeout` → 504 at once, `invalid_request` → 400, `other` → 500 or `status_code`). Tool calls without an id
get `call_llmproxy_<turn>_<call>`: stable, and unique across the script, so later requests can refer to them.
"""

import threading
from pathlib import Path

import pydantic

from llmproxy.errors import MockError
from llmproxy.json_files import read_json
from llmproxy.mock.spec import (
    AssistantTurn,
    ErrorReply,
    ErrorTurn,
    MixedTurn,
    Respond,
    Script,
    ScriptCall,
    ToolCall,
    ToolCallsTurn,
)
from llmproxy.model import StopReason
from llmproxy.validation_errors import describe

type ScriptAnswer = Respond | ErrorReply

_ERROR_STATUS = {"rate_limit": 429, "timeout": 504, "invalid_request": 400, "other": 500}
_ERROR_MESSAGE = {
    "rate_limit": "rate limit exceeded (llmproxy mock script)",
    "timeout": "upstream timed out (llmproxy mock script)",
    "invalid_request": "invalid request (llmproxy mock script)",
    "other": "server error (llmproxy mock script)",
}


def load_script(path: Path) -> Script:
    """Raises MockError naming the file and the field: ``s.json: $.turns[2].kind: Input should be …``."""
    data = read_json(path, "script", MockError)
    try:
        return Script.model_validate(data)
    except pydantic.ValidationError as error:
        raise MockError("\n".join(f"{path}: {problem}" for problem in describe(error, data))) from error


def turn_answer(turn: AssistantTurn | ToolCallsTurn | MixedTurn | ErrorTurn, index: int) -> ScriptAnswer:
    if isinstance(turn, ErrorTurn):
        status = turn.status_code if turn.kind == "other" and turn.status_code else _ERROR_STATUS[turn.kind]
        return ErrorReply(status=status, message=turn.message or _ERROR_MESSAGE[turn.kind])
    if isinstance(turn, AssistantTurn):
        return Respond(text=turn.text, stopReason=StopReason.END_TURN)
    calls = tuple(_call(call, index, position) for position, call in enumerate(turn.calls))
    text = turn.text if isinstance(turn, MixedTurn) else None
    return Respond(text=text, toolCalls=calls, stopReason=StopReason.TOOL_USE)


def _call(call: ScriptCall, turn: int, position: int) -> ToolCall:
    return ToolCall(name=call.name, arguments=call.arguments, id=call.id or f"call_llmproxy_{turn}_{position}")


class ScriptCursor:
    """Concurrent callers take turns in arrival order: none skipped, none served twice."""

    def __init__(self, script: Script) -> None:
        self._answers = [turn_answer(turn, index) for index, turn in enumerate(script.turns)]
        self._on_exhausted = script.on_exhausted
        self._next = 0
        self._lock = threading.Lock()

    @property
    def served(self) -> int:
        """The turns served so far (past the last: its requests after it ended)."""
        return self._next

    def next(self) -> tuple[int | None, ScriptAnswer]:
        """The turn served (0-based; None once an `error` script is exhausted) and its answer."""
        with self._lock:
            index = self._next
            self._next += 1
        count = len(self._answers)
        if index < count:
            return index, self._answers[index]
        if self._on_exhausted == "loop":
            return index % count, self._answers[index % count]
        if self._on_exhausted == "error":
            return None, ErrorReply(status=500, message=f"llmproxy mock: the script's {count} turns are exhausted")
        return count - 1, self._answers[-1]
