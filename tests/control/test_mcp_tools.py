"""The MCP tools are the REST API's endpoints: one per endpoint, with its access and MockServer's name where the
table gives one (a row that names no endpoint is stale and fails here), their input schemas made from the
endpoints' own models, a call made into the request the endpoint takes; and docs/control.md's table of tools is
the one they make."""

import json
import re
from pathlib import Path

import pytest

from llmproxy.control.api import control_api
from llmproxy.control.auth import Access
from llmproxy.control.mcp.stdio import api_tools
from llmproxy.control.mcp.tools import CONVENIENCES, NAMES, InvalidArguments, Tool, tool_name, tools
from llmproxy.control.models import JournalQuery, VerifyRequests
from llmproxy.control.router import Endpoint, Router
from llmproxy.intercept import control as chaos

PAGE = Path(__file__).resolve().parents[2] / "docs" / "control.md"


def router() -> Router:
    from llmproxy.chain import Chain
    from llmproxy.plan import Plan
    from llmproxy.proxy_session import Session

    return control_api(Session(Plan(), Chain()))


def by_name() -> dict[str, Tool]:
    return {tool.name: tool for tool in api_tools()}


def test_each_endpoint_is_one_tool_with_its_access() -> None:
    """Every endpoint but a stream (the event stream: a tool call answers once) is one tool."""
    api = router()
    made = by_name()
    answered = [endpoint for endpoint in api.endpoints if not endpoint.streamed]
    for endpoint in answered:
        tool = made[tool_name(endpoint)]
        assert tool.endpoint == f"{endpoint.method} {api.base}{endpoint.path}"
        assert tool.access is endpoint.access
    assert [endpoint.path for endpoint in api.endpoints if endpoint.streamed] == ["/events"]
    assert tool_name(next(e for e in api.endpoints if e.streamed)) not in made
    assert len(made) == len(answered) + len(CONVENIENCES)


def test_every_row_of_the_name_table_names_an_endpoint() -> None:
    served = {(endpoint.method, endpoint.path) for endpoint in router().endpoints}
    assert set(NAMES) <= served
    conveniences = {(convenience.method, convenience.path) for convenience in CONVENIENCES}
    api = router()
    on_endpoints = {(endpoint.method, api.base + endpoint.path) for endpoint in api.endpoints}
    assert {row for row in conveniences if not row[1].startswith(chaos.PATH)} <= on_endpoints


def test_an_endpoint_without_a_row_is_named_by_its_operation() -> None:
    assert by_name()["remove_expectation"].endpoint == "DELETE /llmproxy/api/v1/expectations/{id}"
    assert by_name()["clear_journal"].access is Access.MUTATE


def test_a_tool_that_does_not_say_it_reads_is_taken_to_change_the_run() -> None:
    def undeclared(call: object) -> VerifyRequests:
        raise AssertionError("not called")

    api = Router(
        "/api", [Endpoint("POST", "/undeclared", "An endpoint that says nothing", undeclared, VerifyRequests)], "t", "1"
    )
    (tool, *_) = tools(api)
    assert (tool.name, tool.access) == ("undeclared", Access.MUTATE)
    assert by_name()["clear_chaos"].access is Access.MUTATE  # a convenience that does not say either


def test_two_tools_of_one_name_are_refused() -> None:
    def get_status(call: object) -> VerifyRequests:
        raise AssertionError("not called")

    clash = Router("/llmproxy/api/v1", [Endpoint("GET", "/other", "Another", get_status, VerifyRequests)], "t", "1")
    with pytest.raises(ValueError, match="two MCP tools would be named get_status"):
        tools(Router(clash.base, [*router().endpoints, *clash.endpoints], "t", "1"))


def test_input_schemas_are_the_endpoints_models() -> None:
    made = by_name()
    query = JournalQuery.model_json_schema(by_alias=True)["properties"]
    assert made["retrieve_recorded_requests"].input_schema["properties"] == query
    verify = made["verify_request"].input_schema
    assert set(verify["properties"]) == set(VerifyRequests.model_json_schema(by_alias=True)["properties"])
    assert verify["additionalProperties"] is False
    assert "Match" in verify["$defs"]
    assert made["retrieve_request_responses"].input_schema["required"] == ["seq"]
    assert set(made["create_expectation"].input_schema["properties"]) == {
        "testId",
        "expectations",
        "mcpServers",
        "a2aAgents",
    }
    json.dumps([tool.input_schema for tool in made.values()])  # each is JSON


def test_arguments_become_the_request_the_endpoint_takes() -> None:
    made = by_name()
    journal = made["retrieve_recorded_requests"].request({"source": "mocked", "limit": 5, "testId": "t 1"})
    assert (journal.method, journal.target, journal.body) == (
        "GET",
        "/llmproxy/api/v1/journal?source=mocked&limit=5&testId=t+1",
        b"",
    )
    assert made["retrieve_request_responses"].request({"seq": 7}).target == "/llmproxy/api/v1/journal/7"
    added = made["create_expectation"].request({"expectations": [{"respond": {"text": "x"}}], "testId": "a"})
    assert added.target == "/llmproxy/api/v1/expectations?testId=a"
    assert json.loads(added.body) == {"expectations": [{"respond": {"text": "x"}}]}
    one = made["mock_llm_completion"].request({"match": {"model": "m"}, "respond": {"text": "y"}, "times": 2})
    assert json.loads(one.body) == {"expectations": [{"match": {"model": "m"}, "respond": {"text": "y"}, "times": 2}]}
    hostile = made["mock_adversarial_llm_response"].request({"payload": "jailbreak_persona"})
    assert json.loads(hostile.body) == {"expectations": [{"adversarial": "jailbreak_persona"}]}
    removed = made["remove_chaos"].request({"host": "api.openai.com"})
    assert (removed.method, removed.target) == ("DELETE", "/llmproxy/chaos?host=api.openai.com")


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("get_status", {"verbose": True}, "$.verbose: not an argument of get_status: it takes none"),
        ("retrieve_request_responses", {}, "$.seq: required"),
        ("remove_chaos", {}, "$.host: Field required"),
        ("set_chaos", {"host": "h", "chaos": {"errorStatus": "x"}}, "$.chaos.errorStatus"),
    ],
)
def test_arguments_that_cannot_make_the_request_name_each_problem(
    tool: str, arguments: dict[str, object], said: str
) -> None:
    with pytest.raises(InvalidArguments) as raised:
        by_name()[tool].request(arguments)
    assert str(raised.value).startswith(f"invalid arguments for {tool}: ")
    assert said in str(raised.value)


def test_the_page_lists_every_tool_with_what_it_calls_and_its_access() -> None:
    section = PAGE.read_text().split("\n## MCP\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| `([A-Z]+ [^`]+)` \| (read|mutate) \|$", section, re.MULTILINE)
    assert rows == [(tool.name, tool.endpoint, tool.access.value) for tool in api_tools()]
