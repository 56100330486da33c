"""Run llmproxy in-process, to record or replay around your own code (tests, notebooks, the pytest plugin):

    from llmproxy.session import replaying

    with replaying("cassettes/session.json") as proxy:
        subprocess.run(["pytest", "tests/agent"], env=os.environ | proxy.environment, check=True)
    assert not proxy.misses

`proxy.url` is the forward proxy (for `HTTPS_PROXY`); `proxy.environment` holds every proxy and CA variable a
child process needs. The CLI's `record` and `replay` are these same sessions run around a command.
mitmproxy is imported only when a session starts.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from llmproxy import redacted_logs
from llmproxy.ca import ensure_ca
from llmproxy.cassette.files import journal_path
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, ReplayIndex, ReplayMiss
from llmproxy.cassette.store import load_cassette
from llmproxy.cassette.writer_process import WriterProcess
from llmproxy.egress import EgressPolicy
from llmproxy.environment import proxy_environment
from llmproxy.errors import LlmproxyError
from llmproxy.providers import declared
from llmproxy.record_scope import RecordScope

if TYPE_CHECKING:
    from addons.egress import EgressGate
    from addons.replayer import Replayer
    from llmproxy.mock.log import MockLog


DEFAULT_REDACTOR = Redactor()
DEFAULT_MATCH = MatchOptions()


class RecordMode(StrEnum):
    """vcrpy's record modes."""

    NONE = "none"  # replay only; never touch the network
    ONCE = "once"  # record if the cassette does not exist, else none
    NEW_EPISODES = "new_episodes"  # replay hits; forward misses and append them
    ALL = "all"  # forward everything and record it (appended)
    REWRITE = "rewrite"  # record afresh; the recording replaces the cassette once the run has started


@dataclass(frozen=True, slots=True)
class Listening:
    """Where the proxy listens, and how to reach it and route through it."""

    mapping: Mapping[str, str] = field(default_factory=dict)  # HOST → URL (`--map`)
    upstream_ca: Path | None = None
    reverse: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 0
    ca_directory: Path | None = None  # default: the per-user CA (`llmproxy ca`)


@dataclass
class Session:
    """A recording or replay that can run: its addons, and how it ends."""

    addons: list[object]
    describe: str
    mitmproxy_options: dict[str, object] = field(default_factory=dict)
    closers: list[Callable[[], str]] = field(default_factory=list)  # each returns a summary line
    starters: list[Callable[[], None]] = field(default_factory=list)  # told when the run has started cleanly
    replayer: "Replayer | None" = None
    url: str = ""  # set while running
    environment: dict[str, str] = field(default_factory=dict)  # the variables a child process needs
    ca_cert: Path | None = None  # the certificate clients must trust
    listeners: list[Any] = field(default_factory=list)  # addons.proxy.Listener: the forward one, then reverse ones
    summary: str = ""  # set when closed
    mock_log: "MockLog | None" = None
    egress: "EgressGate | None" = None  # strict replay and mock: what may connect out (`--allow-host`)
    base_url: str = ""  # llmproxy mock: where clients set by base URL connect (no interception), while running
    routes: tuple[declared.Declaration, ...] = ()  # `--route`: known to detection while the session runs

    @property
    def misses(self) -> list[ReplayMiss]:
        return list(self.replayer.log.misses) if self.replayer is not None else []

    @property
    def unused(self) -> list[Exchange]:
        return self.replayer.index.unused() if self.replayer is not None else []

    @property
    def refused(self) -> list[str]:
        """Connections out that `--allow-host` did not let through, and why."""
        return list(self.egress.refused) if self.egress is not None else []

    @property
    def strict_misses(self) -> bool:
        """Requests that got the miss status (not forwarded, as new_episodes does), or connections refused."""
        forwarded = self.replayer is not None and self.replayer.settings.forward_misses
        return bool(self.misses and not forwarded) or bool(self.refused)

    def start(self) -> None:
        """The run has started cleanly (the proxy listens; the command, if any, runs): a rewrite may now replace
        its cassette. Before this, closing leaves every cassette as it was."""
        for start in self.starters:
            start()
        self.starters.clear()

    def close(self) -> str:
        """Close everything the session opened, and its summary. Raises the first LlmproxyError a part raised
        in closing (a cassette that could not be written) once every part is closed and the summary set."""
        lines, failures = [], []
        if self.mock_log is not None:
            lines.append(self.mock_log.summary())
            try:
                self.mock_log.close()
            except LlmproxyError as error:
                failures.append(error)
        if self.replayer is not None and (self.mock_log is None or self.replayer.index.size):
            log, unused = self.replayer.log, self.unused
            lines.append(f"replayed {log.hits} requests: {len(log.misses)} missed, {len(unused)} unused")
            for miss in log.misses:  # with the paths that differ, as the miss diagnostic gave them
                first, *differences = miss.explain().splitlines()
                lines += [f"  miss: {first}", *(f"  {line}" for line in differences)]
            lines += [f"  unused: exchange {e.id}: {e.request.method} {e.request.url}" for e in unused]
        if refused := self.refused:
            lines.append(f"refused {len(refused)} connection{'s' if len(refused) != 1 else ''} out:")
            lines += [f"  refused: {refusal}" for refusal in refused]
        for close in self.closers:
            try:
                lines.append(close())
            except LlmproxyError as error:
                failures.append(error)
        self.closers.clear()
        self.summary = redacted_logs.redact("\n".join(lines))  # a miss names the request it could not answer
        if failures:
            raise failures[0]
        return self.summary


def record_session(
    cassette: Path,
    *,
    record_hosts: Sequence[str] = (),
    record_all: bool = False,
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
    rewrite: bool = False,
) -> Session:
    """Record every LLM exchange into `cassette` (appending; with `rewrite`, replacing it once the session
    starts). `routes`: ``HOST=CODEC|VENDOR`` declarations (`--route`). Raises LlmproxyError (CassetteError)
    before anything runs."""
    from addons.recorder import Recorder
    from addons.websocket_recorder import WebSocketRecorder

    declarations = declared.parse_all(routes)
    writer = WriterProcess.open(Path(cassette), redactor, declarations, rewrite=rewrite)
    scope = RecordScope.of(record_hosts, record_all)
    sockets = WebSocketRecorder(scope, writer)

    def close() -> str:
        return "\n".join(line for line in (str(writer.close()), sockets.report()) if line)

    return Session(
        [Recorder(scope, writer), sockets],
        f"recording to {cassette}",
        closers=[close],
        starters=[writer.start],
        routes=declarations,
    )


def replay_session(
    cassettes: Sequence[Path],
    *,
    mode: RecordMode = RecordMode.NONE,
    match: MatchOptions = DEFAULT_MATCH,
    timing: float | None = 1.0,
    miss_status: int = 599,
    allow_hosts: Sequence[str] = (),
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
) -> Session:
    """Serve `cassettes` (new recordings go to the first). `timing`: a scale of the recorded stream
    offsets, or None for everything at once. Raises LlmproxyError before anything runs."""
    from addons.egress import EgressGate
    from addons.replayer import Replayer, ReplaySettings
    from addons.stream_relay import StreamRelay

    declarations = declared.parse_all(routes)
    egress = EgressPolicy.parse(allow_hosts)  # a malformed entry is a usage error before anything is touched
    paths = [Path(path) for path in cassettes]
    if not paths and mode is not RecordMode.NONE:
        raise LlmproxyError(f"record mode {mode.value} needs a cassette to record to")
    first = paths[0] if paths else Path()
    if mode is RecordMode.ONCE:
        mode = RecordMode.NONE if _exists(first) else RecordMode.ALL
    if mode in (RecordMode.ALL, RecordMode.REWRITE):
        session = record_session(first, redactor=redactor, routes=routes, rewrite=mode is RecordMode.REWRITE)
        session.describe = f"{mode.value} mode, {session.describe}"
        return session
    if mode is RecordMode.NONE and (missing := [str(path) for path in paths if not _exists(path)]):
        raise LlmproxyError(f"no such cassette: {', '.join(missing)} (record one, or use --record-mode once)")
    exchanges = [exchange for path in paths if _exists(path) for exchange in load_cassette(path).exchanges]
    relay = StreamRelay()
    forward = mode is RecordMode.NEW_EPISODES
    settings = ReplaySettings(miss_status, timing, forward, egress)
    replayer = Replayer(ReplayIndex(exchanges, match), settings, redactor, relay)
    served = ", ".join(map(str, paths))
    if not forward:  # strict and offline: not even a TLS handshake upstream to learn a certificate
        gate = EgressGate(egress, [relay])
        return Session(
            [relay, replayer, gate],
            f"none mode, replaying {served}",
            {"upstream_cert": False},
            replayer=replayer,
            routes=declarations,
            egress=gate,
        )
    recording = record_session(first, redactor=redactor, routes=routes)
    return Session(
        [relay, replayer, *recording.addons],
        f"new_episodes mode, replaying {served}",
        closers=recording.closers,
        starters=recording.starters,
        replayer=replayer,
        routes=declarations,
    )


def mock_session(
    expectations: Path,
    *,
    cassettes: Sequence[Path] = (),
    match: MatchOptions = DEFAULT_MATCH,
    miss_status: int = 599,
    log: Path | None = None,
    base_url_port: int = 0,
    redactor: Redactor = DEFAULT_REDACTOR,
    routes: Sequence[str] = (),
) -> Session:
    """Answer from `expectations` first, then from `cassettes` (replay's rules), never from the network.
    Clients set by base URL connect to `session.base_url` (on `base_url_port`, default a free one). Raises
    LlmproxyError (a MockError naming the field) before anything runs."""
    from addons.mocker import Mocker
    from llmproxy.mock.engine import MockEngine
    from llmproxy.mock.load import load_expectations
    from llmproxy.mock.log import MockLog

    expectations = Path(expectations)
    engine = MockEngine(load_expectations(expectations))
    replay = replay_session(cassettes, match=match, miss_status=miss_status, redactor=redactor, routes=routes)
    mock_log = MockLog(redactor, log)
    relay, replayer, gate = replay.addons
    relay.port = base_url_port  # type: ignore[attr-defined]
    mocker = Mocker(engine, relay, mock_log, replayer.direct)  # type: ignore[arg-type, attr-defined]
    session = Session(
        [relay, mocker, replayer, gate],
        f"mocking from {expectations}" + (f", then {replay.describe}" if cassettes else ""),
        replay.mitmproxy_options,
        replayer=replay.replayer,
        mock_log=mock_log,
        routes=replay.routes,
        egress=replay.egress,
    )
    return session


@contextmanager
def running(session: Session, listening: Listening = Listening(), *, start: bool = True) -> Iterator[Session]:
    """The proxy running `session` on its own thread; stopped and the session closed on exit (its summary
    in `session.summary`). The session's declared routes hold while it runs. `start=False`: the caller calls
    `session.start()` once the rest of its run has started too (the CLI, once the command runs)."""
    with declared.declared(session.routes):
        yield from _run(session, listening, start)


def _run(session: Session, listening: Listening, start: bool) -> Iterator[Session]:
    from addons.proxy import ProxySettings, ProxyThread
    from addons.stream_relay import StreamRelay
    from addons.upstreams import Destination, Upstreams

    redacted_logs.install()
    try:
        ca = ensure_ca(listening.ca_directory)
        bundle = ca.write_bundle(ca.directory / "bundle.pem")
        settings = ProxySettings(
            confdir=ca.directory,
            listen_host=listening.host,
            listen_port=listening.port,
            reverse=listening.reverse,
            upstream_ca=listening.upstream_ca,
            options=session.mitmproxy_options,
        )
        upstreams = Upstreams({host.lower(): Destination.parse(url) for host, url in listening.mapping.items()})
        if session.egress is not None:  # what the user pointed llmproxy at is reached as configured
            configured = [*upstreams.mapped.values(), *map(Destination.parse, listening.reverse)]
            session.egress.policy = session.egress.policy.with_explicit([(d.host, d.port) for d in configured])
        proxy = ProxyThread(settings, [*session.addons, upstreams]).start()
    except BaseException:
        with suppress(LlmproxyError):  # the error that stopped the start is the one to report
            session.close()
        raise
    try:
        upstreams.reverse_prefixes = {
            listener.spec: urlsplit(listener.target).path.rstrip("/") for listener in proxy.listeners if listener.target
        }
        session.url = proxy.url
        session.environment = proxy_environment(proxy.url, ca.cert_path, bundle)
        session.ca_cert = ca.cert_path
        session.listeners = list(proxy.listeners)
        relay = next((addon for addon in session.addons if isinstance(addon, StreamRelay) and addon.direct), None)
        if relay is not None:
            session.base_url = f"http://127.0.0.1:{relay.port}"
            session.environment["LLMPROXY_BASE_URL"] = session.base_url
        if start:
            session.start()
        yield session
    finally:
        proxy.stop()
        session.close()


@contextmanager
def recording(cassette: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Record around a block: ``with recording("c.json") as proxy: …``. Options as `record_session`."""
    with running(record_session(Path(cassette), **options), listening) as session:
        yield session


@contextmanager
def replaying(*cassettes: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Replay around a block: ``with replaying("c.json") as proxy: …``. Options as `replay_session`."""
    with running(replay_session([Path(c) for c in cassettes], **options), listening) as session:
        yield session


@contextmanager
def mocking(expectations: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Mock around a block: ``with mocking("expectations.json") as proxy: …``. Options as `mock_session`;
    `proxy.mock_log.entries` is the request log."""
    with running(mock_session(Path(expectations), **options), listening) as session:
        yield session


def _exists(path: Path) -> bool:
    return path.exists() or journal_path(path).exists()
