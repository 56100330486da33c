"""A session as the entry points (`llmproxy.session`, the CLI) and the adapters' wiring (`llmproxy_addons.run`)
share it: its plan, the chain built from it, where its proxy listens, and once running its listeners and
environment; at the end its summary. Its stages are reachable while it runs and can be changed in place:
`proxy.use_cassettes("other.json")` switches what a replay serves.

It sits below both: the entry points start the adapters, which fill in a running session here.
"""

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmproxy.cassette import redacted_logs
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.replay_index import MatchOptions, ReplayMiss
from llmproxy.chain import Chain
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.chain.stages.replay import Replaying, ReplayStage
from llmproxy.chain.taps.record import RecordTap
from llmproxy.environment import applied
from llmproxy.errors import LlmproxyError
from llmproxy.intercept.engine import Intercept
from llmproxy.plan import Plan, build
from llmproxy.upstream_proxy import UpstreamProxy
from llmproxy.words import plural

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # imported when a mock or the meter runs: a bare replay or record needs neither
    from llmproxy.chain.stages.mock import MockStage
    from llmproxy.journal import Journal
    from llmproxy.meter import Meter
    from llmproxy.mock.log import MockLog
    from llmproxy.telemetry.hub import Telemetry


@dataclass(frozen=True, slots=True)
class Listening:
    """Where the proxy listens, and how to reach it and route through it."""

    mapping: Mapping[str, str] = field(default_factory=dict)  # HOST → URL (`--map`)
    upstream_ca: Path | None = None
    reverse: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 0
    ca_directory: Path | None = None  # default: the per-user CA (`llmproxy ca`)
    # llmproxy's own base URL (`$LLMPROXY_BASE_URL`) in record and replay, on this port (0: a free one); the
    # mock's is its relay, on `plan.base_url_port`
    base_url_port: int = 0
    base_url_env: bool = False  # also set each provider's base-URL variable (ANTHROPIC_BASE_URL…) to it
    upstream_proxy: UpstreamProxy | None = None  # go on through this proxy (the clients' HTTPS_PROXY) to the network
    # serve on the lean door, not mitmproxy, what the chain answers without an upstream and what a recording
    # sends upstream (a session whose network opens while it runs, as the pytest plugin's does, says False)
    lean_door: bool = True
    control_port: int = 0  # the control port on 127.0.0.1 (0: a free one); fixed, a scraper's target can name it


@dataclass(eq=False)
class Session:
    plan: Plan
    chain: Chain
    url: str = ""  # the forward proxy, while running
    environment: dict[str, str] = field(default_factory=dict)  # the variables a child process needs
    ca_cert: Path | None = None  # the certificate clients must trust
    listeners: list[Any] = field(default_factory=list)  # the forward listener, then reverse ones
    base_url: str = ""  # `$LLMPROXY_BASE_URL`: where clients set by base URL connect, while running
    egress: Any = None  # strict replay and mock, while running: the adapters' gate on connections out
    control_url: str = ""  # the runtime control API's chaos endpoint, while running (`llmproxy chaos …`)
    control_api_url: str = ""  # its REST API (`/llmproxy/api/v1`), while running
    ui_url: str = ""  # the dashboard on the control port, with the token it is entered with, while running
    summary: str = ""  # set when closed
    # how the run ends when asked to (`stop`), set by whoever runs it: the CLI stops as Ctrl-C would, a session
    # run in-process (`llmproxy.session`) is closed where it stands
    stopper: Callable[[], None] | None = field(default=None, repr=False)
    ended: threading.Event = field(default_factory=threading.Event, repr=False)  # set once closed
    _closed: bool = field(default=False, repr=False)
    _closing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _unreported: LlmproxyError | None = field(default=None, repr=False)

    @classmethod
    def of(cls, plan: Plan) -> "Session":
        """The plan's session, its parts loaded. Raises LlmproxyError before anything runs."""
        return cls(plan, build(plan))

    def loaded(self) -> None:
        """Once the cassettes a replay serves are read whole (the proxy may answer from them meanwhile). Raises
        CassetteError for one that is wrong: the run fails before it runs anything, as if it had not started."""
        if (replay := self.replay) is not None:
            replay.state.value.loaded()

    @property
    def describe(self) -> str:
        return self.plan.describe

    @property
    def mock(self) -> "MockStage | None":
        from llmproxy.chain.stages.mock import MockStage

        return next((stage for stage in self.chain.stages if isinstance(stage, MockStage)), None)

    @property
    def replay(self) -> ReplayStage | None:
        return next((stage for stage in self.chain.stages if isinstance(stage, ReplayStage)), None)

    @property
    def intercept(self) -> Intercept | None:
        """The chaos, quotas and budget every request meets: `proxy.intercept.hosts.put(…)` changes them
        while it runs, as the control API does. None in a chain built without it (the pytest plugin's)."""
        return next((stage.engine for stage in self.chain.stages if isinstance(stage, InterceptStage)), None)

    @property
    def record(self) -> RecordTap | None:
        return next((tap for tap in self.chain.taps if isinstance(tap, RecordTap)), None)

    @property
    def meter(self) -> "Meter | None":
        """Each answer as a call, with its tokens, cost and timing, when the plan asks for it (`Plan.meter`)."""
        if not self.plan.meter and not self.plan.telemetry.active:  # its tap (and its pricing) is not in the chain
            return None
        from llmproxy.chain.taps.meter import MeterTap

        tap = next((tap for tap in self.chain.taps if isinstance(tap, MeterTap)), None)
        return tap.meter if tap is not None else None

    @property
    def telemetry(self) -> "Telemetry | None":
        """The run's telemetry (spans, metrics), when the plan asks for it (`Plan.telemetry`)."""
        if not self.plan.telemetry.active:
            return None
        from llmproxy.chain.taps.meter import MeterTap

        tap = next((tap for tap in self.chain.taps if isinstance(tap, MeterTap)), None)
        return tap.telemetry if tap is not None else None

    @property
    def journal(self) -> "Journal | None":
        """The exchanges the proxy saw, redacted, newest last, for the control API (`Plan.journal`)."""
        if not self.plan.journals:
            return None
        from llmproxy.chain.taps.journal import JournalTap

        tap = next((tap for tap in self.chain.taps if isinstance(tap, JournalTap)), None)
        return tap.journal if tap is not None else None

    @property
    def mock_log(self) -> "MockLog | None":
        """The mock's request log (`llmproxy mock`)."""
        return self.mock.log if self.mock is not None else None

    @property
    def misses(self) -> list[ReplayMiss]:
        """Requests the replay had no recording for, that were refused."""
        return list(self.replay.state.value.misses) if self.replay is not None else []

    @property
    def unused(self) -> list[Exchange]:
        """Recorded exchanges never served (background traffic aside: its ids change every run)."""
        return self.replay.unused() if self.replay is not None else []

    @property
    def refused(self) -> list[str]:
        """Connections out that `--allow-host` did not let through, and why."""
        return list(self.egress.refused) if self.egress is not None else []

    @property
    def upstream_unreachable(self) -> bool:
        """Once closed: whether the recording recorded nothing because the upstream answered none of the requests
        sent to it (refused, unresolved, timed out…); its cassette was then left as it was."""
        record = self.record
        return record is not None and record.recorded is not None and record.recorded.unreachable

    @property
    def strict_misses(self) -> bool:
        """Whether a request was refused because nothing answered it (new_episodes forwards instead), or a
        connection out was."""
        return self.chain.refusals > 0 or bool(self.refused)

    def start(self) -> None:
        """The run has started cleanly (the proxy listens; the command, if any, runs): a rewrite may now replace
        its cassette. Before this, closing leaves every cassette as it was."""
        if (record := self.record) is not None:
            record.start()

    @contextmanager
    def apply(self) -> Iterator["Session"]:
        """This process's environment set to use the proxy while running — `environment`: the proxy and CA
        variables, `LLMPROXY_BASE_URL` and, with `Listening(base_url_env=True)`, each provider's base-URL
        variable — and put back as it was after the block: ``with replaying("c.json") as proxy, proxy.apply():``.
        Create clients inside it: SDKs read these variables when a client is made."""
        if not self.environment:
            raise ValueError(f"this session is not running ({self.describe})")
        with applied(self.environment):
            yield self

    def use_cassettes(self, *cassettes: str | Path, match: MatchOptions | None = None) -> Replaying:
        """Serve `cassettes` from the next request on, while running (the cassettes are loaded first: a bad
        one raises CassetteError and the old ones serve on). Returns what was served until now, with its
        hits, misses and unused exchanges."""
        if self.replay is None:
            raise ValueError(f"this session does not replay ({self.describe})")
        return self.replay.use([Path(cassette) for cassette in cassettes], match)

    @property
    def stoppable(self) -> bool:
        """Whether `stop` can end the run: it runs, and whoever runs it said how to stop it."""
        return self.stopper is not None and not self.ended.is_set()

    def stop(self) -> None:
        """End the run as Ctrl-C would (the control API's stop), by the means whoever runs it gave (`stopper`):
        it returns at once, the run ends on its own threads. Nothing happens when it is not `stoppable`."""
        stopper = self.stopper
        if stopper is not None and not self.ended.is_set():
            stopper()

    def close_now(self) -> None:
        """Close from another thread than the one that runs the session (a stop): a failure to close is logged
        here and raised again by the runner's own `close`."""
        try:
            self.close()
        except LlmproxyError as error:
            logger.error("%s", error)
            self._unreported = error

    def close(self) -> str:
        """End the run: every stage's summary in the chain's order, then the connections refused (kept in
        `summary`). Raises the first LlmproxyError a part raised in closing (a cassette that could not be
        written) once every part is closed and the summary set; closing again returns the summary (and raises
        a failure `close_now` could only log)."""
        with self._closing:
            if self._closed:
                failure, self._unreported = self._unreported, None
                if failure is not None:
                    raise failure
                return self.summary
            self._closed = True
            try:
                return self._close()
            finally:
                self.ended.set()

    def _close(self) -> str:
        failure: LlmproxyError | None = None
        try:
            self.chain.close()
        except LlmproxyError as error:
            failure = error
        lines = self.chain.summary()
        if refused := self.refused:
            lines.append(f"refused {plural(len(refused), 'connection')} out:")
            lines += [f"  refused: {refusal}" for refusal in refused]
        self.summary = redacted_logs.redact("\n".join(lines))  # a miss names the request it could not answer
        if failure is not None:
            raise failure
        return self.summary
