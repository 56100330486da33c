"""llmsim's scripted mode: llmsim's own script file loads unchanged; each turn type gives its answer; the
cursor serves turns once each under concurrency; on_exhausted as llmsim defines it."""

import threading
from pathlib import Path

import pytest

from llmproxy.mock import spec
from llmproxy.mock.script import ScriptCursor, load_script
from llmproxy.model import StopReason

FIXTURES = Path(__file__).parent / "fixtures"


def test_llmsims_example_script_loads_and_answers_turn_by_turn() -> None:
    cursor = ScriptCursor(load_script(FIXTURES / "llmsim-script.json"))
    answers = [cursor.next() for _ in range(7)]
    assert [turn for turn, _ in answers] == [0, 1, 2, 3, 4, 5, 5]  # repeat_last
    hello, calls, mixed, limited, invalid, other, again = (answer for _, answer in answers)
    assert hello == spec.Respond(text="Hello", stopReason=StopReason.END_TURN)
    assert isinstance(calls, spec.Respond)
    assert calls.text is None
    assert calls.stopReason is StopReason.TOOL_USE
    assert [(c.name, c.arguments, c.id) for c in calls.toolCalls] == [("bash", {"command": "ls"}, "call_llmproxy_1_0")]
    assert isinstance(mixed, spec.Respond)
    assert (mixed.text, mixed.toolCalls[0].id) == ("Running ls", "call_42")
    assert isinstance(limited, spec.ErrorReply)
    assert limited.status == 429
    assert invalid == spec.ErrorReply(status=400, message="bad args")
    assert other == spec.ErrorReply(status=502, message="boom")
    assert again == other


@pytest.mark.parametrize(("mode", "served"), [("loop", [0, 1, 0, 1]), ("error", [0, 1, None, None])])
def test_on_exhausted(mode: str, served: list[int | None]) -> None:
    script = spec.Script.model_validate(
        {"on_exhausted": mode, "turns": [{"type": "assistant", "text": "a"}, {"type": "error", "kind": "timeout"}]}
    )
    cursor = ScriptCursor(script)
    answers = [cursor.next() for _ in range(4)]
    assert [turn for turn, _ in answers] == served
    assert answers[1][1] == spec.ErrorReply(status=504, message="upstream timed out (llmproxy mock script)")
    if mode == "error":
        assert answers[2][1] == spec.ErrorReply(status=500, message="llmproxy mock: the script's 2 turns are exhausted")


def test_fifty_threads_take_fifty_turns_each_exactly_once() -> None:
    script = spec.Script.model_validate({"turns": [{"type": "assistant", "text": str(i)} for i in range(50)]})
    cursor = ScriptCursor(script)
    served: list[int | None] = []
    lock, start = threading.Lock(), threading.Barrier(50)

    def take() -> None:
        start.wait()
        turn, _ = cursor.next()
        with lock:
            served.append(turn)

    threads = [threading.Thread(target=take) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(served) == list(range(50))  # type: ignore[type-var]
