"""What a session runs, as data: which stages fill the chain's slots, with which settings, and which requests
nothing answered may reach the network. The CLI's options and the Python API both build a `Plan`; `build`
turns it into a running chain (loading cassettes and expectations, starting the cassette writer), raising
`LlmproxyError` before anything listens. Modes are compositions of the same parts:

* record (`all`): the record tap, the network open;
* replay (`none`): the replay stage, the network closed (or open to `--allow-host`);
* replay `new_episodes`: the replay stage, the network open, the record tap keeping what went out;
* mock: the mock stage, then the replay stage when cassettes are given, the network closed.

With the control API on, record and replay carry a mock stage too, with no expectations: it passes every request
on untouched until expectations are added while the run goes on, which then answer before a cassette or the
network (as MockServer's expectations answer before it proxies).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Final

from llmproxy.background_traffic import KNOWN, BackgroundTraffic
from llmproxy.cassette.files import cassette_exists
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions
from llmproxy.chain import Chain, Network, Stage, Tap
from llmproxy.chain.chain import layout
from llmproxy.egress import EgressPolicy
from llmproxy.errors import LlmproxyError
from llmproxy.intercept.settings import NO_INTERCEPT, InterceptPlan
from llmproxy.journal import DEFAULT_CAPACITY
from llmproxy.providers import declared
from llmproxy.providers.declared import Declaration
from llmproxy.record_scope import RecordScope
from llmproxy.telemetry.settings import TelemetryPlan
from llmproxy.words import plural

if TYPE_CHECKING:
    from llmproxy.chain.stages.background_traffic import BackgroundStage
    from llmproxy.chain.stages.intercept import InterceptStage
    from llmproxy.chain.stages.mock import MockStage
    from llmproxy.chain.stages.replay import ReplayStage
    from llmproxy.chain.taps.journal import JournalTap
    from llmproxy.chain.taps.meter import MeterTap
    from llmproxy.chain.taps.record import RecordTap

DEFAULT_REDACTOR: Final = Redactor()
DEFAULT_MATCH: Final = MatchOptions()
NO_TELEMETRY: Final = TelemetryPlan()
EMPTY_MOCK: Final = "no expectations until the control API adds some"
CLOSED: Final = Network()  # nothing reaches the network; what nothing answers is refused
LLM_APIS: Final = RecordScope()  # LLM APIs on any host, and known LLM hosts


class RecordMode(StrEnum):
    """vcrpy's record modes."""

    NONE = "none"  # replay only; never touch the network
    ONCE = "once"  # record if the cassette does not exist, else none
    NEW_EPISODES = "new_episodes"  # replay hits; forward misses and append them
    ALL = "all"  # forward everything and record it (appended)
    REWRITE = "rewrite"  # record afresh; the recording replaces the cassette once the run has started

    def resolved(self, cassette: Path) -> "RecordMode":
        """The mode `cassette` is served in: `once` is `none` when the cassette exists, else `all`; any other
        mode is itself. `llmproxy replay --record-mode` and each pytest test decide it here."""
        if self is not RecordMode.ONCE:
            return self
        return RecordMode.NONE if cassette_exists(cassette) else RecordMode.ALL

    @property
    def replays(self) -> bool:
        """Whether a resolved mode serves the cassette's recordings (`none`, `new_episodes`)."""
        return self in (RecordMode.NONE, RecordMode.NEW_EPISODES)

    @property
    def records(self) -> bool:
        """Whether a resolved mode sends what nothing answered to the network and records it (`new_episodes`,
        `all`, `rewrite`)."""
        return self in (RecordMode.NEW_EPISODES, RecordMode.ALL, RecordMode.REWRITE)


@dataclass(frozen=True, slots=True)
class MockPlan:
    expectations: Path | None  # None: no expectation answers (the cassettes, the background traffic and chaos do)
    log: Path | None = None  # the request log as JSON lines


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    cassettes: tuple[Path, ...]
    match: MatchOptions = DEFAULT_MATCH
    timing: float | None = 1.0  # a scale of the recorded stream offsets; None: everything at once


@dataclass(frozen=True, slots=True)
class RecordPlan:
    cassette: Path
    scope: RecordScope = LLM_APIS
    fresh: bool = False  # replace what the cassette holds, once the run has started (record mode rewrite)
    unanswered: bool = False  # also record requests the upstream never answered whole (`--record-unanswered`)


@dataclass(frozen=True, slots=True)
class Plan:
    mock: MockPlan | None = None
    replay: ReplayPlan | None = None
    record: RecordPlan | None = None
    network: Network = CLOSED
    redactor: Redactor = DEFAULT_REDACTOR
    strict_background: bool = False  # the CLIs' background traffic is refused like anything else
    background: BackgroundTraffic = KNOWN  # what is background traffic (`--background-host` adds hosts)
    base_url: bool = False  # announce the relay to clients set by base URL (`LLMPROXY_BASE_URL`)
    base_url_port: int = 0  # the relay's port (0: a free one)
    routes: tuple[Declaration, ...] = ()  # `--route`: known to detection while the session runs
    meter: bool = False  # each answer's tokens, cost and timing (`--live`, `-v`, `--json`, the pytest plugin)
    telemetry: TelemetryPlan = NO_TELEMETRY  # spans and metrics over OTLP, `/metrics` (docs/telemetry.md)
    intercept: InterceptPlan = NO_INTERCEPT
    # the exchanges the control API's journal keeps (the oldest dropped beyond); 0, or no control API: none
    journal: int = DEFAULT_CAPACITY
    describe: str = field(default="", compare=False)

    def explain(self) -> str:
        """The chain this plan builds, slot by slot, without loading or starting anything (`--explain-chain`)."""
        from llmproxy.chain.stages.background_traffic import BackgroundStage
        from llmproxy.chain.stages.replay import pace
        from llmproxy.chain.taps.intercept import InterceptTap
        from llmproxy.chain.taps.journal import JournalTap
        from llmproxy.chain.taps.meter import MeterTap

        stages = {}
        taps = {}
        if self.intercept.configured:
            chaos = self.intercept.chaos
            what = [
                plural(len(chaos.rules), "rule") if chaos.rules else "",
                f"a ${chaos.budgetUsd} budget" if chaos.budgetUsd else "",
            ]
            where = f"; counters in {self.intercept.state}" if self.intercept.state else ""
            stages["intercept"] = " and ".join(part for part in what if part) + f" ({self.intercept.source}){where}"
            taps["intercept"] = InterceptTap.EXPLAINED
        if self.mock is not None:
            log = f", request log to {self.mock.log}" if self.mock.log is not None else ""
            given = self.mock.expectations
            stages["mock"] = (f"expectations {given}" if given is not None else "no expectations") + log
        elif self.intercept.control:
            stages["mock"] = EMPTY_MOCK
        if self.replay is not None:
            stages["replay"] = f"{', '.join(map(str, self.replay.cassettes))} (streams at {pace(self.replay.timing)})"
        if self.answers_background:
            stages["background"] = BackgroundStage.EXPLAINED
        if self.record is not None:
            scope = self.record.scope
            also = "everything" if scope.everything else ", ".join(sorted(scope.hosts))
            fresh = " (replacing it)" if self.record.fresh else ""
            taps["record"] = f"to {self.record.cassette}{fresh}: LLM APIs" + (f", and {also}" if also else "")
            if self.record.unanswered:
                taps["record"] += "; requests the upstream never answered too"
        if self.meter or self.telemetry.active:
            taps["meter"] = MeterTap.EXPLAINED + (
                f"; telemetry: {self.telemetry.describe()}" if self.telemetry.active else ""
            )
        if self.journals:
            taps["journal"] = JournalTap.explained(self.journal)
        declared = "".join(f"\nroute declared: {route}" for route in self.routes)
        return layout(stages, self.network, taps) + declared

    @property
    def cassettes(self) -> list[str]:
        """The cassettes the run records to and replays from, each once."""
        found = [str(self.record.cassette)] if self.record is not None else []
        if self.replay is not None:
            found += [str(path) for path in self.replay.cassettes if str(path) not in found]
        return found

    @property
    def journals(self) -> bool:
        """Whether the run keeps a journal: it has a control API to read it, and room for an entry."""
        return self.intercept.control and self.journal > 0

    @property
    def answers_background(self) -> bool:
        """Whether background traffic nothing else answers gets a harmless answer (when the network is closed to
        it), not a refusal."""
        return not self.network.everything and not self.strict_background

    def with_local_services(self) -> "Plan":
        """The plan for a command llmproxy runs itself: a request nothing answers that goes to this machine and is
        no LLM API call (a CLI's own local daemon, reached through the proxy) passes through — it is the
        command's own machine, not a provider. A plan whose network is open is as it was."""
        if self.network.everything:
            return self
        egress = replace(self.network.egress, local_services=True)
        return replace(self, network=replace(self.network, egress=egress))

    @property
    def offline(self) -> bool:
        """Nothing may reach the network: not even a TLS handshake upstream to learn a certificate."""
        return not self.network.everything and not self.network.egress.entries


def parse_timing(value: str) -> float | None:
    """`--timing`: `recorded` (1.0), `instant` (None: every event at once) or a scale (0.5: twice as fast).
    Raises ValueError saying what it expects."""
    if value == "recorded":
        return 1.0
    if value == "instant":
        return None
    try:
        scale = float(value)
    except ValueError:
        raise ValueError(f"expected recorded, instant or a number, got {value!r}") from None
    if scale < 0 or scale != scale:
        raise ValueError("a timing scale cannot be negative")
    return scale


def record_plan(
    cassette: Path,
    *,
    record_hosts: Sequence[str] = (),
    record_all: bool = False,
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
    intercept: InterceptPlan = NO_INTERCEPT,
    record_unanswered: bool = False,
    background_hosts: Sequence[str] = (),
) -> Plan:
    """Record every LLM exchange into `cassette` (appending). `routes`: ``HOST=CODEC|VENDOR`` declarations
    (`--route`); `record_unanswered`: requests the upstream never answered whole too (an outage), which are
    otherwise only named. Raises LlmproxyError for a declaration it cannot read."""
    background = BackgroundTraffic.of(background_hosts)
    scope = RecordScope.of(record_hosts, record_all, background.hosts)
    return Plan(
        record=RecordPlan(Path(cassette), scope, unanswered=record_unanswered),
        network=Network(everything=True),
        background=background,
        redactor=redactor,
        routes=declared.parse_all(routes),
        intercept=intercept,
        describe=f"recording to {cassette}",
    )


def replay_plan(
    cassettes: Sequence[Path],
    *,
    mode: RecordMode = RecordMode.NONE,
    match: MatchOptions = DEFAULT_MATCH,
    timing: float | None = 1.0,
    miss_status: int | None = None,
    allow_hosts: Sequence[str] = (),
    strict_background: bool = False,
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
    intercept: InterceptPlan = NO_INTERCEPT,
    background_hosts: Sequence[str] = (),
) -> Plan:
    """Serve `cassettes` (new recordings go to the first) by vcrpy's record `mode`. Raises LlmproxyError (a
    UsageError for a malformed `allow_hosts` or `background_hosts` entry) before any file is touched."""
    declarations = declared.parse_all(routes)
    egress = EgressPolicy.parse(allow_hosts)
    background = BackgroundTraffic.of(background_hosts)
    paths = tuple(Path(path) for path in cassettes)
    if not paths and mode is not RecordMode.NONE:
        raise LlmproxyError(f"record mode {mode.value} needs a cassette to record to")
    first = paths[0] if paths else Path()
    mode = mode.resolved(first)
    if not mode.replays:  # all, rewrite
        record = RecordPlan(first, RecordScope.of(background=background.hosts), fresh=mode is RecordMode.REWRITE)
        describe = f"{mode.value} mode, recording to {first}"
        return Plan(
            record=record,
            network=Network(everything=True),
            redactor=redactor,
            background=background,
            routes=declarations,
            intercept=intercept,
            describe=describe,
        )
    served = ", ".join(map(str, paths))
    replay = ReplayPlan(paths, match, timing)
    if mode.records:  # new_episodes
        network = Network(everything=True, miss_status=miss_status)
        describe = f"new_episodes mode, replaying {served}"
        record = RecordPlan(first, RecordScope.of(background=background.hosts))
        return Plan(
            replay=replay,
            record=record,
            network=network,
            redactor=redactor,
            background=background,
            routes=declarations,
            intercept=intercept,
            describe=describe,
        )
    network = Network(egress=egress, miss_status=miss_status)
    describe = f"none mode, replaying {served}"
    return Plan(
        replay=replay,
        network=network,
        redactor=redactor,
        strict_background=strict_background,
        background=background,
        routes=declarations,
        intercept=intercept,
        describe=describe,
    )


def mock_plan(
    expectations: Path | None,
    *,
    cassettes: Sequence[Path] = (),
    match: MatchOptions = DEFAULT_MATCH,
    miss_status: int | None = None,
    log: Path | None = None,
    strict_background: bool = False,
    base_url_port: int = 0,
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
    intercept: InterceptPlan = NO_INTERCEPT,
    background_hosts: Sequence[str] = (),
) -> Plan:
    """Answer from `expectations` (None: none) first, then from `cassettes` (replay's rules), never from the
    network. Clients set by base URL connect to the relay (on `base_url_port`, default a free one)."""
    paths = tuple(Path(path) for path in cassettes)
    replay = ReplayPlan(paths, match, timing=1.0) if paths else None
    source = f"from {expectations}" if expectations is not None else "with no expectations"
    describe = f"mocking {source}" + (f", then none mode, replaying {', '.join(map(str, paths))}" if paths else "")
    return Plan(
        mock=MockPlan(Path(expectations) if expectations is not None else None, log),
        replay=replay,
        network=Network(miss_status=miss_status),
        redactor=redactor,
        strict_background=strict_background,
        background=BackgroundTraffic.of(background_hosts),
        base_url=True,
        base_url_port=base_url_port,
        routes=declared.parse_all(routes),
        intercept=intercept,
        describe=describe,
    )


def build(plan: Plan) -> Chain:
    """The plan's chain, its parts loaded and started. Raises LlmproxyError (a CassetteError or MockError
    naming the file and the field) before anything runs; on failure, what was started is closed again. A
    replay's cassettes are read on a thread once the proxy listens (or a request asks): the session waits for
    them before it runs anything (`Session.loaded`, which raises their CassetteError). Each
    part's modules are imported only when the plan has that part: a replay needs none of the mock's."""
    from llmproxy.chain.stages.intercept import InterceptStage
    from llmproxy.intercept.engine import Intercept
    from llmproxy.intercept.store import open_store

    engine = None
    if plan.mock is not None:
        from llmproxy.mock.engine import MockEngine
        from llmproxy.mock.load import load_expectations
        from llmproxy.mock.spec import ExpectationsFile

        given = plan.mock.expectations
        engine = MockEngine(load_expectations(given) if given is not None else ExpectationsFile(expectations=()))
    replaying = None
    if plan.replay is not None:
        from llmproxy.chain.stages.replay import Replaying, ReplayStage

        cassettes = plan.replay.cassettes
        if not plan.network.everything and (missing := [str(p) for p in cassettes if not cassette_exists(p)]):
            raise LlmproxyError(f"no such cassette: {', '.join(missing)} (record one, or use --record-mode once)")
        replaying = Replaying.load(cassettes, plan.replay.match, background=True)  # the run waits: `Session.loaded`
    intercept = Intercept(plan.intercept.chaos, open_store(plan.intercept.state))  # an unreachable store fails here
    intercepting = InterceptStage(intercept, plan.intercept.source)
    record = None
    if plan.record is not None:  # started last: nothing after it can fail
        from llmproxy.cassette.writer_process import WriterProcess
        from llmproxy.chain.taps.record import RecordTap

        cassette = plan.record.cassette
        writer = WriterProcess.open(
            cassette, plan.redactor, plan.routes, rewrite=plan.record.fresh, keep_unanswered=plan.record.unanswered
        )
        record = RecordTap(plan.record.scope, writer, str(cassette))
    mock = None
    if plan.mock is not None and engine is not None:
        from llmproxy.chain.stages.mock import MockStage
        from llmproxy.mock.log import MockLog

        log = MockLog(plan.redactor, plan.mock.log)
        mock = MockStage(engine, log, str(plan.mock.expectations or ""), intercepting.state)
    elif plan.intercept.control:  # expectations added over the control API answer first in record and replay too
        from llmproxy.chain.stages.mock import MockStage
        from llmproxy.mock.log import MockLog

        mock = MockStage(None, MockLog(plan.redactor), chaos=intercepting.state)
    replay = None
    if plan.replay is not None and replaying is not None:
        error_status = plan.network.miss_status or 400  # a request it cannot examine: not retried either
        replay = ReplayStage(replaying, plan.redactor, plan.replay.timing, error_status, intercepting.state)
        replay.background = plan.background
    background = None
    if plan.answers_background:
        from llmproxy.chain.stages.background_traffic import BackgroundStage

        background = BackgroundStage(plan.network, plan.background)
    meter = None
    if plan.meter or plan.telemetry.active:
        from llmproxy.chain.taps.meter import MeterTap
        from llmproxy.meter import Meter

        telemetry = None
        if plan.telemetry.active:
            from llmproxy.telemetry.hub import Telemetry

            run = (("llmproxy.cassette", ", ".join(plan.cassettes)),) if plan.cassettes else ()
            telemetry = Telemetry(
                replace(plan.telemetry, run=(*run, *plan.telemetry.run)),
                plan.redactor,
                lambda: intercepting.state.value,
            )
        meter = MeterTap(Meter(), telemetry)
    journal = None
    if plan.journals:
        from llmproxy.chain.taps.journal import JournalTap
        from llmproxy.journal import Journal

        journal = JournalTap(Journal(plan.journal), plan.redactor)
    return assemble(
        intercepting,
        plan.network,
        plan.redactor,
        mock=mock,
        replay=replay,
        background=background,
        record=record,
        meter=meter,
        journal=journal,
    )


def assemble(
    intercepting: "InterceptStage",
    network: Network,
    redactor: Redactor,
    *,
    mock: "MockStage | None" = None,
    replay: "ReplayStage | None" = None,
    background: "BackgroundStage | None" = None,
    record: "RecordTap | None" = None,
    meter: "MeterTap | None" = None,
    journal: "JournalTap | None" = None,
) -> Chain:
    """The chain of these parts, each in its slot — the stages intercept, mock, replay, background; the taps
    intercept (sharing the intercept stage's state), record, meter, journal — the one order every session runs them in.
    `build` assembles a plan's parts here, and so does the pytest plugin's proxy, which fills the slots once and
    swaps what they serve test by test."""
    from llmproxy.chain.taps.intercept import InterceptTap

    stages: list[Stage] = [stage for stage in (intercepting, mock, replay, background) if stage is not None]
    taps: list[Tap] = [InterceptTap(intercepting.state), *(tap for tap in (record, meter, journal) if tap is not None)]
    return Chain(stages, taps, network, redactor)
