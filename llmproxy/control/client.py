"""A small typed client of the control API, for Python code that drives a running llmproxy without the pytest
plugin: a test, a notebook, a CI script. It answers with the API's own models (`llmproxy.control.models`) and
raises `ControlError` with the API's one-line error; it calls the control port directly, never through the
proxy the process's `HTTPS_PROXY` may point at.

    from llmproxy.control.client import Client

    control = Client.from_environment()          # LLMPROXY_CONTROL_URL and LLMPROXY_CONTROL_TOKEN
    control.add_expectations({"expectations": [{"respond": {"text": "Hi"}}]})
    print([entry.model for entry in control.journal(source="mocked").entries])

A client made for one test (`test_id`; the pytest plugin's `llmproxy_control` fixture is one) adds, lists and
clears that test's expectations, and reads and verifies that test's requests, unless a call names another.
"""

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from llmproxy.control.analysis_models import (
    Debugged,
    DebugRequest,
    ExplainQuery,
    Misses,
    MissesQuery,
    ReportQuery,
)
from llmproxy.control.mock_a2a_models import MockA2aAgents
from llmproxy.control.mock_mcp_models import MockMcpServers
from llmproxy.control.models import (
    Added,
    Cleared,
    Expectations,
    JournalEntry,
    JournalPage,
    JournalQuery,
    Removed,
    Reset,
    Status,
    Verified,
    VerifyRequests,
)
from llmproxy.control.paths import API_BASE
from llmproxy.control.verify_models import (
    DriftVerified,
    GateVerified,
    SequenceVerified,
    ToolCallVerified,
    VerifyCost,
    VerifyDrift,
    VerifySequence,
    VerifyStructuredOutput,
    VerifyToolCall,
)

if TYPE_CHECKING:
    from llmproxy.outputs.explain import Explained

from llmproxy.control.run_models import Load, Loaded, Save, Saved, Stopping
from llmproxy.control.stdio_tap_models import StdioAnswer, StdioExchange, StdioRecorded, StdioRequest
from llmproxy.environment import CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE, TEST_ID_VARIABLE
from llmproxy.errors import LlmproxyError
from llmproxy.intercept.control import Answer
from llmproxy.mock import spec
from llmproxy.mock.spec import ExpectationsFile
from llmproxy.validation_errors import describe

_DIRECT: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # not through the proxy


class ControlError(LlmproxyError):
    """The control API refused a call (`status`), or could not be reached (`status` 0); the message is its
    one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Client:
    def __init__(self, url: str, token: str, timeout: float = 10.0, test_id: str | None = None) -> None:
        """`url`: the control port's origin, or any URL on it (`LLMPROXY_CONTROL_URL` is its chaos endpoint).
        `test_id`: the test each call is scoped to when it names none (None: every test)."""
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.api = self.origin + API_BASE
        self._token = token
        self.timeout = timeout
        self.test_id = test_id

    @classmethod
    def from_environment(cls, environment: Mapping[str, str] = os.environ) -> "Client":
        """The run's control API, from the variables llmproxy gives the command it runs (or a session's
        `environment`), scoped to the test `LLMPROXY_TEST_ID` names when it is set (a pytest plugin test's)."""
        url, token = environment.get(CONTROL_URL_VARIABLE), environment.get(CONTROL_TOKEN_VARIABLE)
        if not url or not token:
            raise ControlError(0, f"no control API: {CONTROL_URL_VARIABLE} and {CONTROL_TOKEN_VARIABLE} are not set")
        return cls(url, token, test_id=environment.get(TEST_ID_VARIABLE) or None)

    def status(self) -> Status:
        return Status.model_validate(self._call("GET", "/status"))

    def journal(self, **filters: Any) -> JournalPage:
        """Filters as the endpoint's query: provider, model, path, source, test_id, since, limit (`test_id`:
        the client's unless given; None reads every test's)."""
        filters.setdefault("test_id", self.test_id)
        query = JournalQuery.model_validate(filters).model_dump(by_alias=True, exclude_defaults=True, mode="json")
        where = f"/journal?{urlencode(query)}" if query else "/journal"
        return JournalPage.model_validate(self._call("GET", where))

    def entry(self, seq: int) -> JournalEntry:
        return JournalEntry.model_validate(self._call("GET", f"/journal/{seq}"))

    def clear_journal(self) -> int:
        return Cleared.model_validate(self._call("DELETE", "/journal")).cleared

    def expectations(self, test_id: str | None = None) -> Expectations:
        """Every expectation, or only those added for `test_id` (the client's, unless given)."""
        return Expectations.model_validate(self._call("GET", "/expectations" + self._scoped(test_id)))

    def add_expectations(
        self, expectations: ExpectationsFile | Mapping[str, Any], test_id: str | None = None
    ) -> list[int]:
        """Entries in the expectations file's JSON (or its model); the ids they were given. `test_id` (the
        client's, unless given): they answer only requests sent with it in the `x-llmproxy-test-id` header."""
        body = _dumped(expectations) if isinstance(expectations, BaseModel) else dict(expectations)
        return Added.model_validate(self._call("POST", "/expectations" + self._scoped(test_id), body)).added

    def remove_expectation(self, expectation: int) -> None:
        Removed.model_validate(self._call("DELETE", f"/expectations/{expectation}"))

    def clear_expectations(self, test_id: str | None = None) -> int:
        """Remove every expectation, or only those added for `test_id` (the client's, unless given); how many."""
        return Cleared.model_validate(self._call("DELETE", "/expectations" + self._scoped(test_id))).cleared

    def mcp_servers(self) -> MockMcpServers:
        """The mock MCP servers: where each is served, its tools with the calls they have had, resources,
        prompts (MockServer's `list_mock_tools`)."""
        return MockMcpServers.model_validate(self._call("GET", "/mcp-servers"))

    def a2a_agents(self) -> MockA2aAgents:
        """The mock A2A agents: where each is served, its agent card, the messages its replies answered."""
        return MockA2aAgents.model_validate(self._call("GET", "/a2a-agents"))

    def _scoped(self, test_id: str | None) -> str:
        scope = test_id or self.test_id
        return f"?{urlencode({'testId': scope})}" if scope is not None else ""

    def verify_requests(
        self,
        match: spec.Match | Mapping[str, Any] | None = None,
        *,
        exactly: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
        source: str | None = None,
        test_id: str | None = None,
    ) -> Verified:
        """How many requests the journal holds that hold to `match` (the expectations file's), against a count
        (none given: at least one); a failure lists the closest requests."""
        verify = {"match": match or {}, "exactly": exactly, "at_least": at_least, "at_most": at_most}
        body = _body(VerifyRequests, {**verify, "source": source, "test_id": test_id or self.test_id})
        return Verified.model_validate(self._call("POST", "/verify/requests", body))

    def verify_sequence(
        self,
        *sequence: spec.Match | Mapping[str, Any],
        source: str | None = None,
        test_id: str | None = None,
    ) -> SequenceVerified:
        """Requests holding to each match arrived in this order (others may come between)."""
        body = _body(VerifySequence, {"sequence": list(sequence), "source": source, "test_id": test_id or self.test_id})
        return SequenceVerified.model_validate(self._call("POST", "/verify/sequence", body))

    def verify_tool_call(
        self,
        name: str,
        *,
        args_regex: str | None = None,
        arguments: Any = None,
        exactly: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
        allow_partial: bool = False,
        source: str | None = None,
        test_id: str | None = None,
    ) -> ToolCallVerified:
        """The model called tool `name` (its arguments containing `args_regex`, holding to the JSON predicate
        `arguments`) as often as expected: at least once when no count is given."""
        verify = {"name": name, "args_regex": args_regex, "arguments": arguments, "allow_partial": allow_partial}
        counts = {
            "exactly": exactly,
            "at_least": at_least,
            "at_most": at_most,
            "source": source,
            "test_id": test_id or self.test_id,
        }
        body = _body(VerifyToolCall, {**verify, **counts})
        return ToolCallVerified.model_validate(self._call("POST", "/verify/tool-call", body))

    def verify_structured_output(
        self,
        schema: Mapping[str, Any],
        *,
        allow_partial: bool = False,
        source: str | None = None,
        test_id: str | None = None,
    ) -> GateVerified:
        """Every answer with text is JSON that meets the JSON Schema `schema`."""
        verify = {
            "schema": dict(schema),
            "allow_partial": allow_partial,
            "source": source,
            "test_id": test_id or self.test_id,
        }
        body = _body(VerifyStructuredOutput, verify)
        return GateVerified.model_validate(self._call("POST", "/verify/structured-output", body))

    def verify_cost(
        self,
        max_usd: Decimal | str | float,
        *,
        price_as: str | None = None,
        allow_unpriced: bool = False,
        allow_partial: bool = False,
        source: str | None = None,
        test_id: str | None = None,
    ) -> GateVerified:
        """The answers' estimated cost is at most `max_usd` US dollars, priced as `llmproxy report` prices."""
        verify = {"max_usd": max_usd, "price_as": price_as, "allow_unpriced": allow_unpriced}
        body = _body(
            VerifyCost, {**verify, "allow_partial": allow_partial, "source": source, "test_id": test_id or self.test_id}
        )
        return GateVerified.model_validate(self._call("POST", "/verify/cost", body))

    def verify_drift(self, cassette: str | os.PathLike[str], *, timeout: float = 60.0) -> DriftVerified:
        """Re-send the cassette's requests to the live provider (it costs what they cost) and compare the answers'
        shapes with the recorded ones, as `llmproxy verify drift --live` does."""
        body = _body(VerifyDrift, {"cassette": os.fspath(cassette), "live": True, "timeout": timeout})
        return DriftVerified.model_validate(self._call("POST", "/verify/drift", body))

    def misses(self, *, test_id: str | None = None, since: int = 0, limit: int | None = None) -> Misses:
        """The requests nothing answered, each with the closest expectations and recording and what differs."""
        query = _query(MissesQuery, {"test_id": test_id or self.test_id, "since": since, "limit": limit})
        return Misses.model_validate(self._call("GET", "/misses" + query))

    def debug_request(
        self, url: str, body: Any = None, *, method: str = "POST", headers: Mapping[str, str] | None = None
    ) -> Debugged:
        """What would answer this request, and why each other expectation or recording would not: nothing is
        answered or counted."""
        request = _body(DebugRequest, {"method": method, "url": url, "headers": dict(headers or {}), "body": body})
        return Debugged.model_validate(self._call("POST", "/misses/debug", request))

    def report(self, format: str = "markdown", **selected: Any) -> str:
        """The optimisation report over the journal as `llmproxy report --format` writes it (markdown, json, csv,
        html); `selected` as the endpoint's query: source, test_id, session, provider, model, since, max_calls,
        group_by."""
        query = _query(ReportQuery, {**selected, "format": format})
        return self._text("GET", "/report" + query)

    def explain(self, **selected: Any) -> "Explained":
        """One session's agent run explained (`llmproxy explain --json`); `selected` as `report`'s."""
        from llmproxy.outputs.explain import Explained  # the analysis loads only when it is asked for

        return Explained.model_validate_json(self._text("GET", "/explain" + _query(ExplainQuery, selected)))

    def explain_text(self, format: str = "timeline", **selected: Any) -> str:
        """The run as a timeline, or its call graph as a Mermaid chart (`format="mermaid"`)."""
        return self._text("GET", "/explain" + _query(ExplainQuery, {**selected, "format": format}))

    def reset(self) -> Reset:
        """No expectations, an empty journal, no chaos per host, quota and budget counters at 0."""
        return Reset.model_validate(self._call("POST", "/reset"))

    def load(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        inline: ExpectationsFile | Mapping[str, Any] | None = None,
        kind: str | None = None,
        test_id: str | None = None,
    ) -> Loaded:
        """An expectations file, a cassette or a folder of them (`path`, on the proxy's machine), or expectations
        given `inline`, loaded into the run."""
        if isinstance(inline, BaseModel):
            inline = inline.model_dump(mode="json", by_alias=True, exclude_unset=True)
        given = {"path": os.fspath(path) if path is not None else None, "inline": inline, "kind": kind}
        body = Load.model_validate(given | {"test_id": test_id or self.test_id}).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        return Loaded.model_validate(self._call("POST", "/load", body))

    def save(self, path: str | os.PathLike[str], **options: Any) -> Saved:
        """What the proxy saw, written to a cassette at `path`; options as the endpoint's body: sources, test_id,
        provider, model, since, overwrite."""
        body = Save.model_validate({"path": os.fspath(path), **options})
        return Saved.model_validate(self._call("POST", "/save", body.model_dump(mode="json", by_alias=True)))

    def stop(self) -> Stopping:
        """End the run as Ctrl-C would; it ends once this returns."""
        return Stopping.model_validate(self._call("POST", "/stop"))

    def send(self, method: str, target: str, body: bytes = b"") -> Answer:
        """One request as it is (`target`: a path on the control port, with its query; `body`: JSON), and the
        answer whatever its status — what the MCP server relays. Raises ControlError (status 0) only when the
        port cannot be reached."""
        request = urllib.request.Request(self.origin + target, data=body or None, method=method)
        request.add_header("authorization", f"Bearer {self._token}")
        if body:
            request.add_header("content-type", "application/json")
        try:
            with _DIRECT.open(request, timeout=self.timeout) as response:
                return _answer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            with error:
                return _answer(error.code, error.headers, error.read())
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ControlError(0, f"cannot reach the control API at {self.api}: {reason}") from None

    def record_stdio(self, exchange: StdioExchange) -> StdioRecorded:
        """An exchange of a stdio MCP server (`llmproxy mcp-tap`) into the run's recording."""
        return StdioRecorded.model_validate(self._call("POST", "/stdio/exchanges", _dumped(exchange)))

    def answer_stdio(self, request: StdioRequest) -> StdioAnswer:
        """What the run's replay answers a stdio MCP server's request with, or why nothing."""
        return StdioAnswer.model_validate(self._call("POST", "/stdio/answers", _dumped(request)))

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return self._checked(method, path, body).body

    def _checked(self, method: str, path: str, body: Any = None) -> Answer:
        """The API's answer to one call; ControlError with the API's one line when it refused."""
        answer = self.send(method, API_BASE + path, json.dumps(body).encode() if body is not None else b"")
        if not 200 <= answer.status < 300:
            said = answer.body.get("error", "") if isinstance(answer.body, dict) else ""
            raise ControlError(answer.status, str(said) or f"{answer.status} from {method} {self.api}{path}")
        return answer

    def _text(self, method: str, path: str) -> str:
        """A rendered document's text (a report in markdown), or the JSON answer as its text."""
        answer = self._checked(method, path)
        return answer.body.decode() if isinstance(answer.body, bytes) else json.dumps(answer.body)


def _answer(status: int, headers: Any, data: bytes) -> Answer:
    """The answer as the control plane gave it: its JSON object, or its bytes as its content type says."""
    media_type = headers.get("content-type", "application/json")
    kept = tuple((name.lower(), value) for name, value in headers.items() if name.lower() == "allow")
    if media_type.startswith("application/json"):
        try:
            document = json.loads(data)
        except ValueError:
            document = None
        if isinstance(document, dict):
            return Answer(status, document, kept, media_type)
    return Answer(status, data, kept, media_type)


def _body(model: type[BaseModel], fields: Mapping[str, Any]) -> Any:
    """`fields` (snake_case, None for what is not given) checked by the API's own `model`, as the API's JSON: a
    refusal names the field as the API would (`$.argsRegex`)."""
    given = {to_camel(name): value for name, value in fields.items() if value is not None}
    try:
        checked = model.model_validate(given)
    except ValidationError as error:
        raise ControlError(400, "; ".join(describe(error, given))) from None
    return checked.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def _query(model: type[BaseModel], fields: Mapping[str, Any]) -> str:
    """`fields` checked by the endpoint's query `model`, as a query string ("" when nothing is given)."""
    given = {to_camel(name): value for name, value in fields.items() if value is not None}
    try:
        checked = model.model_validate(given)
    except ValidationError as error:
        raise ControlError(400, "; ".join(describe(error, given))) from None
    query = checked.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return f"?{urlencode(query)}" if query else ""


def _dumped(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
