from pathlib import Path

import orjson
import pytest

from llmproxy.cassette import history as history_module
from llmproxy.cassette.history import HistoryIndex, inflate
from llmproxy.cassette.model import Exchange, Extends, JsonBody, Request, Timings
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.errors import CassetteError
from tests.cassette.factory import STARTED, agent_session, exchange, request, response, sse_events


def record(path: Path, bodies: list[dict[str, object]]) -> None:
    writer = CassetteWriter.open(path, Redactor())
    for body in bodies:
        writer.add(
            exchange(request(body), response(events=sse_events({"type": "ping"}), content_type="text/event-stream"))
        )
    writer.close()


def test_an_agent_session_grows_linearly_and_loads_byte_equal(tmp_path: Path) -> None:
    bodies = agent_session(30)
    sizes = []
    for turns in (10, 20, 30):
        path = tmp_path / f"{turns}.json"
        record(path, bodies[:turns])
        sizes.append(path.stat().st_size)
    # each ten turns add about the same bytes (quadratic growth would double the second step)
    assert sizes[2] - sizes[1] < 1.2 * (sizes[1] - sizes[0])
    loaded = load_cassette(tmp_path / "30.json").exchanges
    assert [orjson.dumps(e.request.body.json_) for e in loaded if isinstance(e.request.body, JsonBody)] == [
        orjson.dumps(body) for body in bodies
    ]
    stored = orjson.loads((tmp_path / "30.json").read_bytes())["exchanges"]
    assert stored[29]["request"]["extends"] == {"exchange": 29, "path": "$.messages", "items": 57}
    assert len(stored[29]["request"]["body"]["json"]["messages"]) == 2  # the last answer and the new question


def test_shared_items_holding_secrets_rebuild_to_the_redacted_request(tmp_path: Path) -> None:
    """Sharing compares what was sent and redaction then covers only what is stored; redaction is item by
    item, so the rebuilt list is the redacted list."""
    key = "sk-ant-api03-" + "k" * 40
    first = {"model": "m", "messages": [{"role": "user", "content": f"my key is {key}"}]}
    second = {"model": "m", "messages": [*first["messages"], {"role": "assistant", "content": "noted"}]}
    record(tmp_path / "c.json", [first, second])
    assert key not in (tmp_path / "c.json").read_text()
    stored = orjson.loads((tmp_path / "c.json").read_bytes())["exchanges"]
    assert stored[1]["request"]["extends"] == {"exchange": 1, "path": "$.messages", "items": 1}
    assert stored[1]["request"]["body"]["json"]["messages"] == [{"role": "assistant", "content": "noted"}]
    redactor = Redactor()
    loaded = load_cassette(tmp_path / "c.json").exchanges
    assert [e.request.body.json_ for e in loaded if isinstance(e.request.body, JsonBody)] == [
        redactor.json(first),
        redactor.json(second),
    ]


def test_the_longest_earlier_prefix_wins_and_branches_share_too() -> None:
    index = HistoryIndex()
    assert index.share(1, {"messages": [1, 2, 3]}) == ({"messages": [1, 2, 3]}, None)
    assert index.share(2, {"messages": [1, 2, 9]}) == (
        {"messages": [9]},
        Extends(exchange=1, path="$.messages", items=2),
    )
    assert index.share(3, {"input": [1, 2]}) == ({"input": [1, 2]}, None)  # another path shares nothing
    assert index.share(4, {"request": {"contents": ["a"]}, "model": "m"}) == (
        {"request": {"contents": ["a"]}, "model": "m"},
        None,
    )
    shared = index.share(5, {"request": {"contents": ["a", "b"]}, "model": "m"})
    assert shared == (
        {"request": {"contents": ["b"]}, "model": "m"},
        Extends(exchange=4, path="$.request.contents", items=1),
    )


def test_true_and_one_are_different_items() -> None:
    index = HistoryIndex()
    index.share(1, {"messages": [1]})
    assert index.share(2, {"messages": [True, 2]}) == ({"messages": [True, 2]}, None)


def test_items_re_sent_are_encoded_once_not_once_a_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[object] = []
    real = orjson.dumps

    def dumps(value: object) -> bytes:
        encoded.append(value)
        return real(value)

    monkeypatch.setattr(history_module.orjson, "dumps", dumps)
    index = HistoryIndex()
    messages: list[object] = [{"role": "user", "content": f"turn {n}"} for n in range(100)]
    index.share(1, {"messages": messages})
    encoded.clear()
    turn = {"role": "assistant", "content": "one more"}
    assert index.share(2, {"messages": [*messages, turn]}) == (
        {"messages": [turn]},
        Extends(exchange=1, path="$.messages", items=100),
    )
    assert encoded == [[*messages, turn], turn]  # the list whole, then only the item it adds


def _naive_share(seen: list[tuple[int, str, list[bytes]]], exchange_id: int, path: str, items: list[object]) -> int:
    """The longest earlier prefix at `path`, by comparing every earlier list's items' bytes: what the index must
    find, the latest exchange winning a tie."""
    encoded = [orjson.dumps(item) for item in items]
    best, source = 0, 0
    for earlier_id, earlier_path, earlier in seen:
        if earlier_path != path:
            continue
        length = 0
        while length < min(len(earlier), len(encoded)) and earlier[length] == encoded[length]:
            length += 1
        if length and length >= best:
            best, source = length, earlier_id
    seen.append((exchange_id, path, encoded))
    return source * 1000 + best


def test_shared_prefixes_match_a_byte_for_byte_comparison_across_interleaved_conversations() -> None:
    index, seen = HistoryIndex(), []
    conversations: list[list[object]] = [[] for _ in range(6)]  # more than the index keeps recent
    values: list[object] = [1, 12, 1.5, True, "1", "12", {"a": 1, "b": 2}, {"b": 2, "a": 1}, [1], [1, 2], None]
    for exchange_id in range(1, 400):
        state = (exchange_id * 7919) % 97
        conversation = conversations[state % len(conversations)]
        if state % 11 == 0 and conversation:
            del conversation[state % len(conversation) :]  # an edited history: a branch
        conversation.append(values[state % len(values)])
        path = "input" if state % 13 == 0 else "messages"
        stored, extends = index.share(exchange_id, {path: list(conversation)})
        expected = _naive_share(seen, exchange_id, path, list(conversation))
        found = 0 if extends is None else extends.exchange * 1000 + extends.items
        assert found == expected, exchange_id
        assert stored[path] == conversation[extends.items if extends else 0 :]


def _exchange(exchange_id: int, body: object, extends: Extends | None = None) -> Exchange:
    fields = {"method": "POST", "url": "https://h/v1/messages", "http_version": "HTTP/1.1", "headers": []}
    req = (
        Request(**fields, body=JsonBody(json=body), extends=extends)
        if extends
        else Request(**fields, body=JsonBody(json=body))
    )
    return Exchange(id=exchange_id, request=req, timings=Timings(started_at=STARTED))


@pytest.mark.parametrize(
    ("extends", "message"),
    [
        (Extends(exchange=7, path="$.messages", items=1), "exchange 7 is not an earlier exchange"),
        (Extends(exchange=1, path="$.messages", items=5), "has no list of 5 items at $.messages"),
        (Extends(exchange=1, path="$.input", items=1), "has no list of 1 items at $.input"),
    ],
)
def test_unresolvable_references_name_the_exchange(extends: Extends, message: str) -> None:
    with pytest.raises(ValueError, match=f"exchange 2: request.extends: .*{message.replace('$', '[$]')}"):
        inflate([_exchange(1, {"messages": [1]}), _exchange(2, {"messages": []}, extends)])


def test_a_broken_reference_in_a_file_is_a_cassette_error(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, agent_session(2))
    data = orjson.loads(path.read_bytes())
    data["exchanges"][1]["request"]["extends"]["items"] = 99
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(CassetteError, match=r"exchange 2: request\.extends: exchange 1 has no list of 99 items"):
        load_cassette(path)
