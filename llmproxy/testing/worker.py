"""One proxy per pytest process (each xdist worker has its own), started once, at the first test that uses it;
each test then swaps what the chain serves in place — its chaos, its cassette, its expectations, whether the
network is open, a meter of its own, its id — through the chain's runtime control surface (`llmproxy.chain.state`),
and swaps it all back out when it ends. A test gets the chain whole: a request sees one test's settings, never a
mix.

The chain (`plan.assemble`): intercept → mock → replay → background (when the test replays) → (upstream when
the test records, else refused) ;
intercept → record → meter → journal. A slot a test does not use is inert: the intercept with no chaos, the mock
with no expectations and the replay with no cassette pass requests on silently.

The proxy has a control port (`llmproxy.control`): its journal files each request under the test that sent it
(its node id, `x-llmproxy-test-id`), and a test's expectations — its marker's file, and what it adds over the
API — live and end with it. Its chaos is its marker's: the chaos endpoint shows it and changes nothing.

A test records the upstream's whole answers only (`recording.AnswersOnly`), pending until the test is over:
its recording joins the cassette only when it is whole — every request it sent upstream answered — so a test
whose upstream failed, or that was killed half-way, leaves its cassette as it was.
"""

import logging
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from llmproxy.cassette.files import cassette_exists
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, ReplayMiss
from llmproxy.cassette.store import CassetteWriter
from llmproxy.chain import Network
from llmproxy.chain.stages.background_traffic import BackgroundStage
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.chain.stages.mock import MockStage
from llmproxy.chain.stages.replay import Replaying, ReplayStage
from llmproxy.chain.taps.journal import JournalTap
from llmproxy.chain.taps.meter import MeterTap
from llmproxy.chain.taps.record import RecordTap
from llmproxy.errors import LlmproxyError
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.rules import ChaosFile
from llmproxy.intercept.settings import InterceptPlan
from llmproxy.journal import DEFAULT_CAPACITY, Journal
from llmproxy.meter import Answered, Call, Meter
from llmproxy.mock.log import MockLog
from llmproxy.plan import DEFAULT_MATCH, Plan, RecordMode, assemble
from llmproxy.record_scope import RecordScope
from llmproxy.session import Listening, Session, running
from llmproxy.testing.reach import DEFAULT_REACH, Reach
from llmproxy.testing.recording import AnswersOnly
from llmproxy.upstream_proxy import UpstreamProxy

OPEN = Network(everything=True)
SETTLE_SECONDS = 5.0  # how long a test's end waits for the answers to what it sent upstream
MARKER_CHAOS = "a test's chaos is its marker's: @pytest.mark.llmproxy(chaos=...) (docs/pytest.md)"


@dataclass(frozen=True, slots=True)
class Settings:
    """What one test asks for, resolved from its marker and the command line."""

    cassette: Path
    mode: RecordMode  # as asked: `once` is decided when the test begins
    match: MatchOptions = DEFAULT_MATCH
    expectations: Path | None = None
    chaos: ChaosFile | None = None
    chaos_source: str = ""  # where the chaos came from: the file, or "the marker"
    controlled: bool = False  # it adds expectations over the control API (`llmproxy_control`): it has a mock
    test_id: str | None = None  # its node id: the requests it sends are filed under it


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a test's recording did to its cassette, once it joined it: made it (`new`), was `added` to what it
    held, or replaced it (`rewritten`)."""

    cassette: Path
    exchanges: int
    how: str


@dataclass(slots=True)
class TurnOutcome:
    """What a test's requests met, once it has ended."""

    calls: list[Call]
    misses: list[str]  # each refused request's diagnostic
    unused: list[str]  # "exchange 3: POST https://…" the test's cassette held and it never asked for
    unanswered: list[str] = field(default_factory=list)  # what the upstream never answered whole (`Turn.unanswered`)
    recorded: str = ""  # the cassette writer's summary, when the test recorded
    kept: Recorded | None = None  # when the test's recording joined its cassette


@dataclass(eq=False)
class Turn:
    """A test's time on the proxy: from `WorkerProxy.begin` to `end`."""

    settings: Settings
    mode: RecordMode  # `once` resolved: none or all
    proxy: "WorkerProxy"
    meter: Meter
    intercept: Intercept  # the test's own: its counters and windows start afresh
    log: MockLog | None
    recording: AnswersOnly | None
    refused_before: int  # connections the egress gate had refused before this test
    existed: bool = False  # the cassette, when the test began
    ended: TurnOutcome | None = field(default=None)
    waiting: list[str] = field(default_factory=list)  # sent upstream, still unanswered when last settled

    @property
    def replaying(self) -> Replaying:
        return self.proxy.replay.state.value

    def misses(self) -> list[str]:
        """Diagnostics of this test's requests that nothing answered, so far: the replay's (closest recording,
        differing JSON paths), else the mock's (closest expectation), and connections out the gate refused."""
        missed = [call for call in self.meter.calls if call.answered is Answered.MISS]
        lines = [miss.explain() for miss in self.replaying.misses if isinstance(miss, ReplayMiss)]
        if not lines and missed and self.log is not None:  # else what the mock passed on, something answered
            lines = [
                f"{entry['method']} https://{entry['host']}{entry['path']}: {entry['miss']}"
                for entry in self.log.misses
            ]
        if len(lines) < len(missed):
            lines += [f"{call.method} {call.url}: {call.detail}" for call in missed[len(lines) :]]
        return lines + self.proxy.session.refused[self.refused_before :]

    def settle(self) -> None:
        """Wait (`SETTLE_SECONDS` at most) until what the test sent upstream has its answer ended: a client that
        gave up waiting is done, the proxy not yet."""
        self.waiting = self.proxy.chain.wait_for_upstream(SETTLE_SECONDS)

    def unanswered(self) -> list[str]:
        """What the test sent upstream and got no whole answer to, so far: it is not recorded, and the test's
        recording is not kept."""
        if self.recording is None:
            return []
        still = [f"no answer from the upstream to {request} when the test ended" for request in self.waiting]
        return [*self.recording.unanswered, *still]

    def unused(self) -> list[str]:
        if not self.mode.replays:
            return []
        passes_over = self.proxy.replay.passes_over()  # the test's chaos is still in place
        return [
            f"exchange {e.id}: {e.request.method} {e.request.url}" for e in self.replaying.index.unused(passes_over)
        ]

    def end(self, passed: bool) -> TurnOutcome:
        """Swap the test's settings out; close its recording, kept only when it is whole and holds an answer (a
        rewrite's, only when the test passed too): else the cassette stays as it was. Raises LlmproxyError when
        the cassette could not be written."""
        if self.ended is not None:
            return self.ended
        self.settle()
        misses, unused = self.misses(), self.unused()
        proxy = self.proxy
        proxy.chain.use_network(proxy.replay_network)
        proxy.intercepting.use(proxy.idle_intercept)
        proxy.replay.use([])
        proxy.mock.use(None, proxy.idle_log)
        proxy.record.use(None)
        proxy.chain.use_test_id(None)
        self.ended = TurnOutcome(self.meter.calls, misses, unused, self.unanswered())
        if (recording := self.recording) is not None:
            whole = not self.ended.unanswered and recording.recorded > 0
            joins = whole and (self.mode is not RecordMode.REWRITE or passed)
            if joins:
                recording.start()  # only now does the recording join (or, rewriting, replace) the cassette
            summary = recording.close()
            self.ended.recorded = str(summary)
            if joins:
                how = "new" if not self.existed else "rewritten" if self.mode is RecordMode.REWRITE else "added"
                self.ended.kept = Recorded(self.settings.cassette, summary.exchanges, how)
        return self.ended


class _TheTestsSayIt(logging.Filter):
    """The proxy's log line for each request or connection it refused: the plugin fails the test that made it
    with the same diagnostic, so pytest's captured log of that test would only say it again."""

    LOGGERS = ("llmproxy.chain.chain", "llmproxy_addons.egress")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("refused")

    def __enter__(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)


class WorkerProxy:
    """The process's proxy: a session whose chain has every slot a test may fill, listening on 127.0.0.1."""

    def __init__(
        self,
        redactor: Redactor,
        reach: Reach = DEFAULT_REACH,
        ca_directory: Path | None = None,
        journal: int = DEFAULT_CAPACITY,
    ) -> None:
        """`journal`: the exchanges the control API's journal keeps, every test's (0: none)."""
        self.redactor = redactor
        self.replay_network = Network(egress=reach.egress)  # what a test that replays lets out
        self.idle_log = MockLog(redactor)
        self.mock = MockStage(None, self.idle_log)
        self.record = RecordTap(RecordScope.of(background=reach.background.hosts), None)
        self.meter = MeterTap(Meter())
        self.idle_intercept = Intercept()
        self.intercepting = InterceptStage(self.idle_intercept)
        self.replay = ReplayStage(Replaying.load([]), redactor, timing=None, chaos=self.intercepting.state)
        self.journal = JournalTap(Journal(journal), redactor) if journal > 0 else None
        # what the CLI's chain answers as background traffic, read against the network of the test at hand
        self.background = BackgroundStage(lambda: self.chain.network, reach.background)
        self.chain = assemble(
            self.intercepting,
            self.replay_network,
            redactor,
            mock=self.mock,
            replay=self.replay,
            background=self.background,
            record=self.record,
            meter=self.meter,
            journal=self.journal,
        )
        plan = Plan(
            network=self.replay_network,
            redactor=redactor,
            background=reach.background,
            routes=reach.routes,
            meter=True,
            intercept=InterceptPlan(fixed=MARKER_CHAOS),
            journal=journal,
            describe="the llmproxy pytest plugin",
        )
        self.session = Session(plan, self.chain)
        self._quiet = _TheTestsSayIt()
        trusted = reach.network.get("SSL_CERT_FILE") or reach.network.get("REQUESTS_CA_BUNDLE")
        listening = Listening(
            mapping=reach.mapping,
            ca_directory=ca_directory,
            upstream_proxy=UpstreamProxy.from_environment(reach.network),  # raises UsageError for one it cannot use
            upstream_ca=Path(trusted) if trusted and Path(trusted).is_file() else None,
            lean_door=False,  # the network opens for a test that records: mitmproxy serves every test
        )
        self._running: AbstractContextManager[Session] = running(self.session, listening)
        self._running.__enter__()
        self._quiet.__enter__()

    @property
    def environment(self) -> dict[str, str]:
        return self.session.environment

    def begin(self, settings: Settings, owner: str | None = None) -> Turn:
        """Serve `settings` from the next request on; `owner` names the test to another recording that finds its
        cassette held. Raises LlmproxyError (a cassette or expectations file that cannot be read, a cassette none
        mode needs that does not exist, one another recording holds) with nothing changed."""
        from llmproxy.mock.engine import MockEngine
        from llmproxy.mock.load import load_expectations
        from llmproxy.mock.spec import ExpectationsFile

        cassette = settings.cassette
        exists = cassette_exists(cassette)
        mode = settings.mode.resolved(cassette)
        if mode is RecordMode.NONE and not exists and settings.expectations is None and not settings.controlled:
            raise LlmproxyError(
                f"no cassette {cassette}: record it with --llmproxy-mode once (the default outside CI), or mock"
                " its requests (the marker's expectations=, or the llmproxy_control fixture)"
            )
        engine = None
        if settings.expectations is not None:
            engine = MockEngine(load_expectations(settings.expectations))
        elif settings.controlled:
            engine = MockEngine(ExpectationsFile(expectations=()))
        serving = [cassette] if mode is RecordMode.NEW_EPISODES or (mode.replays and exists) else []
        replaying = Replaying.load(serving, settings.match)  # before anything changes: a bad file raises here
        recording = None
        if mode.records:
            rewrite = mode is RecordMode.REWRITE
            writer = CassetteWriter.open(cassette, self.redactor, rewrite=rewrite, pending=True, owner=owner)
            recording = AnswersOnly(writer, self.redactor)
        log = MockLog(self.redactor) if engine is not None else None
        meter = self.meter.meter.another()
        intercept = Intercept(settings.chaos)
        self.meter.state.swap(meter)
        self.intercepting.use(intercept, settings.chaos_source)
        self.replay.state.swap(replaying)
        self.mock.use(engine, log or self.idle_log, str(settings.expectations or ""))
        self.record.use(recording)
        self.chain.use_network(OPEN if recording is not None else self.replay_network)
        self.chain.use_test_id(settings.test_id)
        return Turn(settings, mode, self, meter, intercept, log, recording, len(self.session.refused), exists)

    def close(self) -> None:
        self._quiet.__exit__()
        with suppress(LlmproxyError):  # every test's recording was closed when it ended
            self._running.__exit__(None, None, None)
