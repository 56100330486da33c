"""The live view, rendered by rich into a captured terminal: a row per call as it ends, the running cost, the
latest calls that fit, and the summary as a panel; nothing at all when stderr is not a terminal."""

import io
import threading

from rich.console import Console

from llmproxy.cli.live import LiveView, calls_table
from llmproxy.cli.serving import ServeOptions
from llmproxy.meter import Answered, Call, Meter
from llmproxy.model import Provider, Usage


def terminal(height: int = 40) -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=140, height=height, record=True, color_system=None)


def call(answered: Answered, model: str = "claude-haiku-4-5", **timing: float) -> Call:
    usage = (
        Usage(input_tokens=1_200, output_tokens=80, cache_read_tokens=1_000) if answered is not Answered.MISS else None
    )
    status = 599 if answered is Answered.MISS else 429 if answered is Answered.INJECTED else 200
    return Call(
        "POST", "api.anthropic.com", "/v1/messages", answered, status, Provider.ANTHROPIC, model, usage, **timing
    )


def test_each_call_is_a_row_as_it_ends_then_the_summary_is_a_panel() -> None:
    console, meter = terminal(), Meter()
    with LiveView(console, "llmproxy replay") as view:
        meter.listen(view.add)
        meter.add(call(Answered.HIT, latency_ms=1_530.0, ttft_ms=210.0))
        after_one = console.export_text(clear=False)
        meter.add(call(Answered.INJECTED))
        meter.add(call(Answered.MISS))
        view.close("replayed 1 request: 1 missed, 0 unused", failed=True)
    shown = console.export_text()
    assert "1 call" in after_one
    assert "hit" in after_one
    assert "injected" not in after_one
    hit = [line for line in shown.splitlines() if " hit " in line][-1]  # each redraw is in the capture
    assert "anthropic" in hit
    assert "claude-haiku-4-5" in hit
    assert "1,200" in hit
    assert "1,000" in hit
    assert "1.5 s" in hit
    assert "210 ms" in hit
    first_cost = meter.calls[0].cost_usd
    assert first_cost is not None
    assert first_cost > 0
    assert "injected" in shown
    assert "599" in shown
    assert "miss" in shown
    assert "llmproxy replay" in shown
    assert "3 calls (1 hit, 1 injected, 1 miss)" in shown
    assert "replayed 1 request: 1 missed, 0 unused" in shown


def test_only_the_latest_calls_that_fit_are_shown() -> None:
    calls = [Call("GET", "h", "/", Answered.UPSTREAM, 200, seq=n) for n in range(1, 31)]
    console = terminal()
    console.print(calls_table(calls, room=5))
    shown = console.export_text()
    assert "26 earlier" in shown
    assert " 30 " in shown
    assert " 27 " in shown
    assert " 26 " not in shown.replace("26 earlier", "")


def test_calls_from_several_threads_all_land() -> None:
    console, meter = terminal(height=200), Meter()
    with LiveView(console, "llmproxy mock") as view:
        meter.listen(view.add)
        workers = [
            threading.Thread(target=lambda: [meter.add(call(Answered.MOCK)) for _ in range(10)]) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        view.close("mock answered 40 of 40 requests", failed=False)
    assert "40 calls (40 mock)" in console.export_text()


def wanted(live: bool | None, *, has_command: bool, console: Console) -> bool:
    command = ("claude",) if has_command else ()
    options = ServeOptions("127.0.0.1", 0, (), (), None, (), 0, False, False, False, live, False, 0, False, command)
    return options.live_view(console)


def test_shown_only_on_a_terminal_and_by_default_only_without_a_command() -> None:
    pipe = Console(file=io.StringIO(), force_terminal=False)
    assert not wanted(None, has_command=False, console=pipe)
    assert not wanted(True, has_command=False, console=pipe)  # --live on a pipe: no output change
    tty = terminal()
    assert wanted(None, has_command=False, console=tty)
    assert not wanted(None, has_command=True, console=tty)  # the command owns the terminal
    assert wanted(True, has_command=True, console=tty)
    assert not wanted(False, has_command=False, console=tty)
