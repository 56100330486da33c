"""Matching: what a replayed request is compared on, presets, and misses that say where."""

import json
import re
from pathlib import Path

import pytest

from llmproxy.cassette import jsonpath
from llmproxy.cassette.convert import to_exchange, to_request
from llmproxy.cassette.matching import RequestView, differences
from llmproxy.cassette.model import Exchange, JsonBody, Request, TextBody
from llmproxy.cassette.presets import PRESETS, preset_for
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted, ReplayHit, ReplayIndex, ReplayMiss
from tests.cassette.factory import SDK_HEADERS, exchange, request, response

CAPTURED = Path(__file__).parents[1] / "fixtures" / "captured"


def req(body: object, url: str = "https://api.anthropic.com/v1/messages", ua: str = "test") -> Request:
    return Request(
        method="POST",
        url=url,
        http_version="HTTP/1.1",
        headers=[f"user-agent: {ua}"],
        body=JsonBody(json=body) if not isinstance(body, str) else TextBody(text=body),
    )


def view(body: object, **kwargs: object) -> RequestView:
    return RequestView.of(req(body), "anthropic", None, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "path"),
    [("$.a.b[0].c", ("a", "b", 0, "c")), ("$.messages[*].id", ("messages", "*", "id")), ('$["odd key"]', ("odd key",))],
)
def test_json_paths_parse_and_render(text: str, path: jsonpath.Path) -> None:
    assert jsonpath.parse(text) == path
    assert jsonpath.parse(jsonpath.render(path)) == path


def test_bad_json_paths_say_why() -> None:
    with pytest.raises(ValueError, match="starts with"):
        jsonpath.parse("a.b")
    with pytest.raises(ValueError, match="cannot read"):
        jsonpath.parse("$.a[x]")


def test_drop_removes_what_the_path_names_and_leaves_the_argument_alone() -> None:
    value = {"a": [{"id": 1, "x": 2}, {"id": 3}], "b": 1}
    assert jsonpath.drop(value, ("a", "*", "id")) == {"a": [{"x": 2}, {}], "b": 1}
    assert jsonpath.drop(value, ("missing", "x")) == value
    assert value == {"a": [{"id": 1, "x": 2}, {"id": 3}], "b": 1}


def test_key_order_and_volatile_fields_do_not_matter() -> None:
    a = view({"model": "m", "messages": [], "metadata": {"user_id": "session-1"}})
    b = view({"messages": [], "model": "m", "metadata": {"user_id": "session-2"}})
    assert a.key == b.key
    assert view({"model": "m"}).key != view({"model": "n"}).key


def test_ignored_paths_and_json_rpc_ids() -> None:
    ignore = (jsonpath.parse("$.temperature"),)
    assert view({"model": "m", "temperature": 0.1}, ignore=ignore).key == view({"model": "m"}, ignore=ignore).key
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "x"}}
    assert view({**call, "id": 1}).key == view({**call, "id": 7}).key
    assert view({**call, "id": 1}).key != view({**call, "id": 1, "params": {}}).key


def test_json_rpc_requests_match_whatever_the_client_puts_in_meta() -> None:
    """What a client attaches in `params._meta` differs every run (Codex CLI: its turn's start time, its
    window; the Gemini CLI: a fresh progress token per call); the call is the same."""
    codex = {"x-codex-turn-metadata": {"turn_started_at_unix_ms": 1795929907588}, "windowId": "01a2:0"}
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}
    run_1 = {**call, "id": 2, "params": {**call["params"], "_meta": {**codex, "progressToken": "27742ce7"}}}
    run_2 = json.loads(json.dumps(run_1).replace("1795929907588", "1795929919843").replace("27742ce7", "0ec24aaa"))
    assert view(run_1).key == view(run_2).key == view(call).key
    other = {**run_1, "params": {**run_1["params"], "arguments": {"message": "bye"}}}
    assert view(run_1).key != view(other).key
    assert view({"model": "m", "params": {"_meta": 1}}).key != view({"model": "m", "params": {"_meta": 2}}).key


def test_gemini_cli_tools_match_in_any_order() -> None:
    """The Gemini CLI declares its MCP servers' tools in the order the servers came up, which differs from run
    to run; the same tools in another order match, other tools do not."""
    preset = PRESETS["gemini-cli"]
    body = captured_body("gemini-0.61.0-turn1.json")
    declarations = body["request"]["tools"][0]["functionDeclarations"]  # type: ignore[index]
    url = "https://cloudcode-pa.googleapis.com/v1internal:streamGenerateContent?alt=sse"

    def key(listed: list[object]) -> bytes:
        changed = json.loads(json.dumps(body))
        changed["request"]["tools"][0]["functionDeclarations"] = listed
        return RequestView.of(req(changed, url), "gemini-code-assist", preset).key

    assert len(declarations) > 2
    assert key(declarations) == key(list(reversed(declarations)))
    assert key(declarations) != key(declarations[1:])


def test_claude_code_tool_results_match_in_whatever_order_its_tools_finished() -> None:
    """Claude Code sends the results of tools it ran at once in the order they finished, which differs from
    run to run (an MCP server over HTTP and one over stdio race); the same results in another order match,
    other results, or text beside them in another order, do not."""
    preset = PRESETS["claude-code"]
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}, {"type": "tool_use", "id": "t2"}]}
    first = {"type": "tool_result", "tool_use_id": "t1", "content": "echo: hi"}
    second = {"type": "tool_result", "tool_use_id": "t2", "content": "3"}

    def key(*content: object) -> bytes:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "go"}, call, {"role": "user", "content": list(content)}],
        }
        return RequestView.of(req(body, ua="claude-cli/2.1.332 (external, sdk-cli)"), "anthropic", preset).key

    assert key(first, second) == key(second, first)
    assert key(first, second) != key(first, {**second, "content": "4"})
    text = {"type": "text", "text": "and then"}
    assert key(first, text) != key(text, first)
    # Claude Code marks its cache breakpoint on the last block, whichever result finished last: the breakpoint
    # stays where it was, the results move
    breakpoint = {"cache_control": {"type": "ephemeral"}}
    assert key(first, {**second, **breakpoint}) == key(second, {**first, **breakpoint})
    assert key(first, {**second, **breakpoint}) != key({**first, **breakpoint}, second)


def test_differences_name_the_json_path_with_excerpts() -> None:
    recorded = view({"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]})
    received = view({"model": "m", "messages": [{"role": "user", "content": "What is the capital of Italy?"}]})
    (difference,) = differences(recorded, received)
    assert difference.path == "$.messages[0].content"
    assert "France" in difference.recorded
    assert "Italy" in difference.received
    longer = view({"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "x"}]})
    assert differences(view({"model": "m", "messages": [{"role": "user", "content": "hi"}]}), longer)[0].path == (
        "$.messages[1]"
    )


def captured_body(name: str) -> dict[str, object]:
    return json.loads((CAPTURED / name).read_text())["body"]


def elsewhere(text: str) -> str:
    """The same request as another run would send it: another machine, folder (named differently), home and
    install path, session ids and date."""
    for slug in set(re.findall(r"\.gemini/(?:tmp|history)/([a-z0-9-]+)", text)):  # its project folders
        text = re.sub(rf"(\.gemini/(?:tmp|history)/){slug}\b", r"\1another-project", text)
    for old in sorted(set(re.findall(r"/tmp/tmp[a-z0-9_]+", text)), key=len, reverse=True):
        new = old.replace("/tmp/tmp", "/home/someone/other")
        text = text.replace(old, new).replace(old.replace("/", "-"), new.replace("/", "-"))
    text = text.replace("/tmp/gcli/node_modules/", "/usr/local/lib/node_modules/")
    for uuid in set(re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text)):
        text = text.replace(uuid, "00000000-1111-2222-3333-444444444444")
    text = re.sub(r"\b2026-11-2\d\b", "2027-01-05", text)
    text = re.sub(r"\bWed Nov 25 2026\b", "Tue Jan 05 2027", text)
    return text.replace("Platform: linux", "Platform: darwin").replace("git repo: no", "git repo: yes")


@pytest.mark.parametrize(
    ("fixture", "preset", "url"),
    [
        ("claude-2.1.197-turn1.json", "claude-code", "https://api.anthropic.com/v1/messages"),
        ("claude-2.1.332-turn2.json", "claude-code", "https://api.anthropic.com/v1/messages"),
        ("codex-0.169.0-turn1.json", "codex", "https://chatgpt.com/backend-api/codex/responses"),
        (
            "gemini-0.61.0-turn1.json",
            "gemini-cli",
            "https://cloudcode-pa.googleapis.com/v1internal:streamGenerateContent",
        ),
        (
            "gemini-0.61.0-turn2.json",
            "gemini-cli",
            "https://cloudcode-pa.googleapis.com/v1internal:streamGenerateContent",
        ),
        ("opencode-1.18.33-turn1.json", "opencode", "https://api.anthropic.com/v1/messages"),
        ("opencode-1.18.33-turn2.json", "opencode", "https://api.anthropic.com/v1/messages"),
    ],
)
def test_presets_match_the_same_session_run_elsewhere_another_day(fixture: str, preset: str, url: str) -> None:
    """The captured request, and the same request as another run elsewhere would send it. Equal under the
    preset (both sides normalised: the recorded one and the received one); different without it."""
    body = captured_body(fixture)
    variant = json.loads(elsewhere(json.dumps(body)))
    assert variant != body
    provider = {"claude-code": "anthropic", "codex": "openai", "gemini-cli": "gemini_code_assist"}.get(
        preset, "anthropic"
    )
    ours = RequestView.of(req(body, url), provider, PRESETS[preset])
    theirs = RequestView.of(req(variant, url), provider, PRESETS[preset])
    assert ours.key == theirs.key, differences(ours, theirs)
    assert RequestView.of(req(body, url), provider, None).key != RequestView.of(req(variant, url), provider, None).key


def test_codex_preset_matches_its_websocket_request_from_another_machine() -> None:
    """Codex CLI talking to OpenAI itself (over WebSocket) stamps every input item with when it was made, and
    says which shell and time zone it runs in: none of that may keep a cassette from matching elsewhere."""
    body = captured_body("codex-websocket-0.169.0-message2.json")
    text = json.dumps(body)
    cwd = re.findall(r"<cwd>([^<]+)</cwd>", text)[0]
    moved = text.replace(cwd, "/home/someone/project").replace("Etc/UTC", "Europe/Paris")
    variant = json.loads(moved.replace("<shell>bash</shell>", "<shell>zsh</shell>"))
    stamped = [item["internal_chat_message_metadata_passthrough"] for item in variant["input"][1:]]
    for metadata in stamped:
        metadata["create_time"] += 3600.25
    url, codex = "wss://api.openai.com/v1/responses", PRESETS["codex"]
    ours, theirs = RequestView.of(req(body, url), "openai", codex), RequestView.of(req(variant, url), "openai", codex)
    assert ours.key == theirs.key, differences(ours, theirs)
    unnormalised = RequestView.of(req(variant, url), "openai", None)
    found = {d.path for d in differences(RequestView.of(req(body, url), "openai", None), unnormalised, limit=50)}
    assert "$.input[1].internal_chat_message_metadata_passthrough.create_time" in found


@pytest.mark.parametrize(
    ("user_agent", "preset"),
    [
        ("claude-cli/2.1.197 (external, sdk-cli)", "claude-code"),
        ("codex_exec/0.169.0 (Ubuntu 24.4.0; x86_64) xterm", "codex"),
        ("GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64)", "gemini-cli"),
        # what the real Gemini CLI 0.61.0 sent through the proxy with `-p` (tests/e2e/test_replay_gemini.py)
        ("GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal) google-api-nodejs-client/10.9.0", "gemini-cli"),
        ("claude-cli/2.1.332 (external, sdk-cli)", "claude-code"),
        ("opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14", "opencode"),
        ("Anthropic/Python 2.12.0", None),
    ],
)
def test_presets_are_chosen_from_the_user_agent(user_agent: str, preset: str | None) -> None:
    chosen = preset_for({"user-agent": user_agent})
    assert (chosen.name if chosen else None) == preset


@pytest.mark.parametrize(
    ("headers", "preset"),
    [
        ({"user-agent": "my-gateway/1.0", "x-app": "cli"}, "claude-code"),
        ({"originator": "codex_exec"}, "codex"),
        ({"user-agent": "opencode/1.18.33", "originator": "codex_exec"}, "opencode"),  # the User-Agent first
        ({"x-app": "web"}, None),
    ],
)
def test_presets_are_chosen_from_other_headers_without_a_known_user_agent(
    headers: dict[str, str], preset: str | None
) -> None:
    chosen = preset_for(headers)
    assert (chosen.name if chosen else None) == preset


def recorded(*bodies: object) -> list[Exchange]:
    return [
        to_exchange(exchange(request(body), response(json.dumps({"n": i}).encode())), i + 1, Redactor())
        for i, body in enumerate(bodies)
    ]


def live(body: object) -> Request:
    return to_request(request(body), Redactor())[0]


def test_identical_requests_are_served_in_recorded_order_then_miss_or_repeat() -> None:
    exchanges = recorded({"q": 1}, {"q": 1}, {"q": 2})
    index = ReplayIndex(exchanges)
    served = [index.take(live({"q": 1}), "anthropic") for _ in range(2)]
    assert [s.exchange.id for s in served if isinstance(s, ReplayHit)] == [1, 2]
    exhausted = index.take(live({"q": 1}), "anthropic")
    assert isinstance(exhausted, ReplayMiss)
    assert exhausted.exhausted
    assert [e.id for e in index.unused()] == [3]
    again = ReplayIndex(exchanges, MatchOptions(on_exhausted=OnExhausted.REPEAT_LAST))
    for _ in range(2):
        again.take(live({"q": 1}), "anthropic")
    last = again.take(live({"q": 1}), "anthropic")
    assert isinstance(last, ReplayHit)
    assert (last.exchange.id, last.repeated) == (2, True)


def test_a_miss_names_the_closest_recording() -> None:
    index = ReplayIndex(recorded({"model": "m", "q": "France"}, {"model": "other", "q": "x", "z": 1}))
    miss = index.take(live({"model": "m", "q": "Italy"}), "anthropic")
    assert isinstance(miss, ReplayMiss)
    assert miss.closest is not None
    assert miss.closest.id == 1
    assert "closest is exchange 1" in miss.explain()
    assert "$.q: recorded 'France', received 'Italy'" in miss.explain()


def test_a_turn_that_differs_in_its_tool_result_is_closest_to_its_own_turn() -> None:
    """A conversation's second turn whose tool result changed is nearer its recorded second turn (one field
    differs) than its first (two whole messages missing): the miss names the field that changed."""
    system, user = {"role": "system", "content": "s"}, {"role": "user", "content": "run it"}
    call = {"role": "assistant", "content": "Running it.", "tool_calls": [{"id": "c1", "name": "sh"}]}
    first = {"model": "m", "messages": [system, user]}
    second = {"model": "m", "messages": [system, user, call, {"role": "tool", "content": "Output: ok"}]}
    index = ReplayIndex(recorded(first, second))
    assert isinstance(index.take(live(first), "anthropic"), ReplayHit)
    changed = {"model": "m", "messages": [system, user, call, {"role": "tool", "content": "Output: (empty)"}]}
    miss = index.take(live(changed), "anthropic")
    assert isinstance(miss, ReplayMiss)
    assert miss.closest is not None
    assert miss.closest.id == 2
    assert "$.messages[3].content: recorded 'Output: ok', received 'Output: (empty)'" in miss.explain()


def test_requests_in_any_order_get_what_an_index_built_whole_would_give() -> None:
    """The index reads the cassette only as far as a request needs (a later key indexes the ones before it):
    whatever order requests come in, each gets the earliest unserved recording of its key."""
    bodies = [{"q": 1}, {"q": 2}, {"q": 1}, {"q": 3}, {"q": 2}, {"q": 1}]
    for order in ([3, 1, 2, 1, 2, 1], [1, 1, 1, 2, 2, 3], [2, 3, 2, 1, 4, 1, 1]):
        index = ReplayIndex(recorded(*bodies))
        taken = [index.take(live({"q": q}), "anthropic") for q in order]
        served = [t.exchange.id if isinstance(t, ReplayHit) else None for t in taken]
        expected, seen = [], {1: [1, 3, 6], 2: [2, 5], 3: [4]}
        for q in order:
            expected.append(seen[q].pop(0) if seen.get(q) else None)
        assert served == expected
        misses = [t for t in taken if isinstance(t, ReplayMiss) and not t.exhausted]
        assert all(miss.closest is not None for miss in misses)


def test_a_live_request_keeps_only_the_header_replay_reads_redacted() -> None:
    """Replay matches on the URL, the body and the User-Agent (its preset): the other headers are neither
    redacted nor kept, and a key in the User-Agent is redacted as the cassette would have it."""
    agent = "claude-cli/2.0 (key sk-ant-api03-" + "a" * 80 + ")"
    sent = (*SDK_HEADERS, ("User-Agent", agent), ("authorization", "Bearer secret-token"))
    live_request = request({"q": 1}, headers=sent)
    matched, _ = to_request(live_request, Redactor())
    ((name, value),) = [line.split(": ", 1) for line in matched.headers]
    assert name == "User-Agent"
    assert value == Redactor().header("User-Agent", agent)
    assert "sk-ant-api03" not in value
