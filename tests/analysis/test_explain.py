"""`llmproxy explain` over the real Claude Code and Codex tool loops."""

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cli import main
from tests.analysis.reports import ROOT, at_root


def explain(*args: str) -> tuple[int, str]:
    with at_root():
        result = CliRunner().invoke(main, ["explain", *args])
    return result.exit_code, result.stdout


def test_explain_says_what_max_calls_left_out() -> None:
    said = "Covers the newest 2 of 4 calls: --max-calls 2 left out the 2 oldest."
    code, text = explain("cassettes/report/output-token-bloat.json", "--max-calls", "2")
    assert (code, text.splitlines()[1]) == (0, said)
    with at_root():
        result = CliRunner().invoke(
            main, ["explain", "cassettes/report/output-token-bloat.json", "--max-calls", "2", "--format", "json"]
        )
    document = orjson.loads(result.stdout)
    assert (document["calls"], document["gaps"], document["explanation"]["call"]) == (2, [said], 2)


@pytest.mark.parametrize(
    ("cassette", "tool"),
    [("cassettes/claude-code-tool-loop.json", "Bash"), ("cassettes/codex-tool-loop.json", "exec_command")],
)
def test_the_run_as_a_summary_and_call_graph(cassette: str, tool: str) -> None:
    code, output = explain(cassette, "--json")
    assert code == 0
    document = orjson.loads(output)
    assert (document["schemaVersion"], document["command"], document["calls"]) == (1, "explain", 2)
    run = document["explanation"]
    assert (run["assistantTurns"], run["toolCallSequence"]) == (1, [tool])
    assert run["latestRole"] in ("user", "tool")  # the request that carried the tool's result back
    graph = run["callGraph"]
    kinds = {edge["kind"] for edge in graph["edges"]}
    assert kinds == {"NEXT", "INVOKES", "RESULT"}
    (call,) = [node for node in graph["nodes"] if node["kind"] == "TOOL_CALL"]
    (result,) = [edge for edge in graph["edges"] if edge["kind"] == "RESULT"]
    assert result["from"] == call["id"]  # the tool call points at the message carrying its result
    assert run["toolResultsFor"] == ["call_capture_1"]


def test_mermaid_and_timeline() -> None:
    code, chart = explain("cassettes/claude-code-tool-loop.json", "--format", "mermaid")
    assert code == 0
    assert chart.startswith("flowchart TD\n")
    assert "-->|invokes| t1" in chart
    assert "-.->|result|" in chart
    code, text = explain("cassettes/claude-code-tool-loop.json")
    assert code == 0
    assert text.startswith("2 calls from ")
    assert "→ Bash" in text
    assert "└─ calls Bash" in text
    assert explain("cassettes/quickstart.json")[1].startswith("1 call from ")


def test_a_cassette_without_chat_calls_exits_1(tmp_path_factory: pytest.TempPathFactory) -> None:
    cassette = orjson.loads((ROOT / "cassettes" / "claude-code-tool-loop.json").read_bytes())
    cassette["exchanges"] = [e for e in cassette["exchanges"] if e.get("operation") != "messages"]
    path = tmp_path_factory.mktemp("none") / "none.json"
    path.write_bytes(orjson.dumps(cassette))
    code, output = explain(str(path), "--format", "json")
    assert (code, orjson.loads(output)["explanation"]) == (1, None)
    assert explain(str(path)) == (1, "no chat calls\n")  # the timeline says so, and exits as the JSON does


def test_no_graph_node_is_empty_and_labels_end_at_a_word(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.analysis.reports import recorded
    from tests.cassette.factory import exchange, request, response

    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 256,
        "messages": [
            {"role": "user", "content": "Summarise the quarterly report and list every risk the auditors flagged " * 2},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": ""}]},
        ],
    }
    answer = {"type": "message", "role": "assistant", "content": [], "stop_reason": "end_turn", "usage": {}}
    path = recorded(
        tmp_path_factory.mktemp("graph") / "graph.json", [exchange(request(body), response(orjson.dumps(answer)))]
    )
    code, output = explain(path, "--format", "json")
    assert code == 0
    labels = [(node["kind"], node["label"]) for node in orjson.loads(output)["explanation"]["callGraph"]["nodes"]]
    assert labels == [
        ("USER", "Summarise the quarterly report and list every risk the auditors flagged…"),
        ("ASSISTANT", "calls read_file"),
        ("TOOL_CALL", "read_file {}"),
        ("USER", "empty result of read_file"),
    ]
