"""The control API's endpoints over the run itself: what it is (`status`), starting afresh (`reset`), loading an
expectations file or a cassette into it (`load`), writing what it saw to a cassette (`save`, MockServer's
`record_llm_fixtures`) and ending it as Ctrl-C would (`stop`).

Loading checks everything before it changes anything: a bad file is a 400 naming it and the JSON path, and
nothing of it is loaded. Saving hands the journal's exchanges, as they were captured, to the recorder's own
writer with the run's redactor, so the cassette is what `llmproxy record` would have written of them.
"""

from pathlib import Path
from typing import Any, Final

from llmproxy import __version__
from llmproxy.cassette.store import CassetteWriter
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.chain.stages.replay import Replaying, ReplayStage
from llmproxy.control.auth import Access
from llmproxy.control.models import JournalCounts, Listener, Reset, ServedCassette, Status
from llmproxy.control.router import ApiError, Call, Endpoint
from llmproxy.control.run_models import Load, Loaded, Save, Saved, Stopping
from llmproxy.errors import CassetteError, LlmproxyError, MockError
from llmproxy.inputs import expand_paths
from llmproxy.journal import Journal, Query
from llmproxy.mock.engine import MockEngine
from llmproxy.mock.spec import ExpectationsFile
from llmproxy.plan import Plan
from llmproxy.proxy_session import Session

CASSETTES: Final = ("*.json",)  # what a folder of cassettes holds


def run_endpoints(session: Session) -> list[Endpoint]:
    """The run's own endpoints over `session`, which must be running when they are called."""

    def status(call: Call[Any, Any, Any]) -> Status:
        journal = session.journal
        mock = session.mock
        engine = mock.state.value[0] if mock is not None else None
        replay = session.replay
        serving = replay.state.value if replay is not None else None
        record = session.record
        return Status(
            version=__version__,
            mode=mode(session.plan),
            describe=session.describe,
            proxy_url=session.url,
            base_url=session.base_url or None,
            listeners=[Listener(url=listener.url, target=listener.target) for listener in session.listeners],
            refused=session.chain.refusals,
            expectations=len(engine.standing()) if engine is not None else None,
            cassettes=_served(session),
            replayed=serving.hits if serving is not None else None,
            recording=(record.destination or None) if record is not None else None,
            journal=journal_counts(journal) if journal is not None else None,
        )

    def reset(call: Call[Any, Any, Any]) -> Reset:
        mock = session.mock
        answering = mock.state.value[0] if mock is not None else None
        journal = session.journal
        intercept = session.intercept
        hosts = 0
        counters = False
        if intercept is not None:
            hosts = len(intercept.hosts.snapshot())
            intercept.hosts.clear()
            counters = intercept.store.forget()
        return Reset(
            expectations=answering.clear() if answering is not None else None,
            journal=journal.clear() if journal is not None else None,
            chaos=hosts,
            counters=counters,
        )

    def load(call: Call[Any, Any, Load]) -> Loaded:
        assert call.body is not None  # the endpoint declares its body: the router always gives one
        return loaded(session, call.body)

    def save(call: Call[Any, Any, Save]) -> Saved:
        assert call.body is not None
        journal = session.journal
        if journal is None:
            raise ApiError(404, "this run keeps no journal to save (--journal-size 0)")
        return saved(journal, session.plan, call.body)

    def stop(call: Call[Any, Any, Any]) -> Stopping:
        if not session.stoppable:
            raise ApiError(409, "this run is not running: there is nothing to stop")
        call.after.append(session.stop)  # once the caller has its answer
        return Stopping(stopping=True, run=session.describe)

    return [
        Endpoint(
            "GET",
            "/status",
            "The run: version, mode, listeners, counts, the expectations and cassettes it serves",
            status,
            Status,
            Access.READ,
        ),
        Endpoint(
            "POST",
            "/reset",
            "Start afresh: no expectations, an empty journal, no chaos per host, quota and budget counters at 0",
            reset,
            Reset,
        ),
        Endpoint(
            "POST",
            "/load",
            "Load an expectations file or a cassette (file or folder) into the run, or expectations given inline",
            load,
            Loaded,
            body=Load,
        ),
        Endpoint(
            "POST",
            "/save",
            "Write what the proxy saw (the journal) to a cassette, redacted as the recorder writes",
            save,
            Saved,
            body=Save,
        ),
        Endpoint("POST", "/stop", "End the run as Ctrl-C would, once this answer is sent", stop, Stopping),
    ]


def mode(plan: Plan) -> str:
    if plan.mock is not None:
        return "mock"
    if plan.replay is not None:
        return "replay+record" if plan.record is not None else "replay"
    return "record" if plan.record is not None else "proxy"


def journal_counts(journal: Journal) -> JournalCounts:
    return JournalCounts(
        kept=journal.kept,
        capacity=journal.capacity,
        dropped=journal.dropped,
        last=journal.last,
        by_source=journal.counts(),
    )


def loaded(session: Session, load: Load) -> Loaded:
    """`load` read whole and checked, then put into the run; raises ApiError (400) naming the file and the JSON
    path, having changed nothing."""
    from llmproxy.mock.load import load_expectations, with_scripts

    if load.inline is not None:
        try:
            expectations = with_scripts(load.inline, Path.cwd())
        except MockError as error:
            raise ApiError(400, _one_line(error)) from None
        return Loaded(kind="expectations", files=[], added=add_to_mock(session, expectations, load.test_id))
    assert load.path is not None
    path = Path(load.path)
    if not path.exists():
        raise ApiError(400, f"{path}: no such file or folder")
    kind = load.kind or _kind(path)
    if kind == "expectations":
        if path.is_dir():
            raise ApiError(400, f"{path}: a folder is not an expectations file")
        try:
            expectations = load_expectations(path)
        except MockError as error:
            raise ApiError(400, _one_line(error)) from None
        added = add_to_mock(session, expectations, load.test_id)
        return Loaded(kind="expectations", files=[str(path)], added=added)
    if load.test_id is not None:
        raise ApiError(400, "testId scopes expectations: a cassette answers every test")
    files = expand_paths([path], CASSETTES)
    if not files:
        raise ApiError(400, f"{path}: no cassette (*.json) in this folder")
    try:
        exchanges = _serve(session, files)
    except CassetteError as error:
        raise ApiError(400, _one_line(error)) from None
    return Loaded(kind="cassette", files=list(map(str, files)), exchanges=exchanges, cassettes=_served(session))


def saved(journal: Journal, plan: Plan, save: Save) -> Saved:
    """The journal's entries that `save` selects, written to its path by the recorder's writer; raises
    ApiError: 409 for a file that exists without `overwrite`, 400 for one that cannot be written."""
    path = Path(save.path)
    if path.is_dir():
        raise ApiError(400, f"cannot save to {path}: it is a folder")
    if path.exists() and not save.overwrite:
        raise ApiError(409, f"{path} exists: send overwrite: true to replace it")
    query = Query(provider=save.provider, model=save.model, test_id=save.test_id, since=save.since)
    wanted = set(save.sources)
    entries = [entry for entry in journal.read(query) if entry.source in wanted]
    try:
        writer = CassetteWriter.open(path, plan.redactor, rewrite=True)
    except CassetteError as error:
        raise ApiError(409 if "recording" in str(error) else 400, _one_line(error)) from None
    writer.start()
    try:
        for entry in entries:
            writer.add(entry.captured())
    finally:
        summary = writer.close()
    return Saved(
        path=str(path),
        exchanges=summary.exchanges,
        journal=[entry.seq for entry in entries],
        summary=str(summary).splitlines()[0],
    )


def _kind(path: Path) -> str:
    """What a path holds: a folder is cassettes; a file is an expectations file when its JSON has
    `expectations` or `mcpServers` at the top (else a cassette, which its own reading then checks)."""
    if path.is_dir():
        return "cassette"
    from llmproxy.json_files import read_json

    try:
        document = read_json(path, "file", LlmproxyError)
    except LlmproxyError as error:
        raise ApiError(400, _one_line(error)) from None
    expecting = isinstance(document, dict) and bool({"expectations", "mcpServers"} & document.keys())
    return "expectations" if expecting else "cassette"


def add_to_mock(session: Session, expectations: ExpectationsFile, test_id: str | None) -> list[int]:
    """The ids `expectations` were given in the run's mock engine (its MCP servers served too); raises ApiError
    (400) saying in one line why the engine refused them (an MCP server in the place of another), having added
    nothing."""
    try:
        return mock_engine(session).add(expectations, test_id)
    except MockError as error:
        raise ApiError(400, _one_line(error)) from None


def mock_engine(session: Session) -> MockEngine:
    """The run's mock engine, an empty one put in place if it had none (a record or replay run: its mock stage
    has none until some are added); ApiError (404) when the run has no mock stage."""
    mock = session.mock
    if mock is None:
        raise ApiError(404, "this run has no mock stage to hold expectations (its control API is off)")
    return mock.expecting()


def _serve(session: Session, cassettes: list[Path]) -> int:
    """Serve `cassettes` too, after what the replay serves; a replay stage put in its slot, after the mock, when
    the run had none (the network as the run has it: a mock's stays closed). The exchanges they hold. Raises
    CassetteError, having changed nothing."""
    replay = session.replay
    if replay is None:
        replaying = Replaying.load(cassettes)
        chaos = next((stage.state for stage in session.chain.stages if isinstance(stage, InterceptStage)), None)
        error_status = session.chain.network.miss_status or 400  # a request it cannot examine: not retried either
        try:
            session.chain.add(ReplayStage(replaying, session.plan.redactor, 1.0, error_status, chaos))
            return replaying.index.size
        except ValueError:  # another load put one there meanwhile: add to it
            replay = session.replay
            assert replay is not None
    serving = replay.add(cassettes)
    return sum(size for _, size in serving.sizes[-len(cassettes) :])


def _served(session: Session) -> list[ServedCassette]:
    replay = session.replay
    if replay is None:
        return []
    return [ServedCassette(path=str(path), exchanges=size) for path, size in replay.state.value.sizes]


def _one_line(error: Exception) -> str:
    """An error that may list several problems (one a line), said in one line."""
    return "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
