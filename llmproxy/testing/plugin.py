"""The pytest plugin (entry point `pytest11: llmproxy`, installed with the package): per-test cassettes and
expectations served by one proxy per process, a test's misses failing that test. docs/pytest.md is the manual.

    @pytest.mark.llmproxy(cassette=None, mode=None, preset=None, match=None, expectations=None, chaos=None)
    def test_agent(llmproxy, llmproxy_control): ...

A test takes part when it has the marker or asks for the `llmproxy` or `llmproxy_control` fixture; the others
never start a proxy. While it runs (its fixtures' set-up and tear-down included) `os.environ` holds the proxy and
CA variables, the control API's, and the test's id.
"""

import difflib
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import pytest

from llmproxy.background_traffic import BackgroundTraffic
from llmproxy.destinations import parse_map
from llmproxy.egress import EgressPolicy
from llmproxy.environment import TEST_ID_VARIABLE, applied
from llmproxy.errors import LlmproxyError
from llmproxy.testing.blocking import Blocker
from llmproxy.testing.keys import placeholder_keys
from llmproxy.testing.names import cassette_path, default_directory
from llmproxy.testing.reach import NETWORK_VARIABLES, Reach
from llmproxy.words import plural

if TYPE_CHECKING:  # the proxy's parts load at the first test that uses them: pytest starts as fast without
    from llmproxy.cassette.replay_index import MatchOptions
    from llmproxy.control.client import Client
    from llmproxy.intercept.rules import ChaosFile
    from llmproxy.providers.declared import Declaration
    from llmproxy.testing.fixture import TestProxy
    from llmproxy.testing.worker import Settings, Turn, TurnOutcome, WorkerProxy

MODES: Final = ("none", "once", "new_episodes", "all", "rewrite")  # llmproxy.plan.RecordMode's values
MARKER: Final = "llmproxy"
CONTROL_FIXTURE: Final = "llmproxy_control"
MARKER_ARGUMENTS: Final = ("cassette", "mode", "preset", "match", "expectations", "chaos")
REPEATABLE: Final = (  # options given as often as needed, on the command line and as ini keys (one a line)
    ("map", "HOST=URL", "send HOST's traffic to URL while clients still talk to HOST (a gateway, a local stand-in)"),
    ("route", "HOST=CODEC", "treat HOST[:PORT][/PATH] as this codec's API, or a compatible VENDOR's host"),
    ("allow-host", "HOST[:PORT]", "a test that replays may also reach HOST (this machine's own services it may)"),
    (
        "background-host",
        "HOST",
        "every request to HOST is background traffic: answered harmlessly when a test replays, never recorded",
    ),
)
CI_VARIABLES: Final = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")
TURN: Final[pytest.StashKey["Turn"]] = pytest.StashKey()
PASSED: Final = pytest.StashKey[bool]()
OUTCOME: Final[pytest.StashKey["TurnOutcome"]] = pytest.StashKey()
FAILURE: Final = pytest.StashKey[str]()
REPORTED: Final = pytest.StashKey[int]()  # how many of the test's unanswered requests its call already failed for
APPLIED: Final = pytest.StashKey[ExitStack]()  # the test's environment, put back as it was when the test ends
LEFTOVERS: Final = pytest.StashKey[list[str]]()  # what its set-up did with what a run that died left


def default_mode(environ: Mapping[str, str]) -> str:
    """`none` in CI (one of `CI_VARIABLES` set, and not to "", "0" or "false"), else `once`."""
    ci = any(environ.get(name, "").lower() not in ("", "0", "false", "no") for name in CI_VARIABLES)
    return "none" if ci else "once"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmproxy", "llmproxy: record, replay and mock LLM API calls per test")
    group.addoption(
        "--llmproxy-mode",
        choices=MODES,
        default=None,
        help="record mode of every llmproxy test, over the marker's (default: none in CI, once elsewhere)",
    )
    group.addoption(
        "--llmproxy-block-network",
        action="store_true",
        help="tests that do not record reach 127.0.0.1 only: connections and name lookups elsewhere fail",
    )
    group.addoption(
        "--llmproxy-cassette-dir",
        metavar="DIR",
        default=None,
        help="cassettes under DIR/<module>/ (default: cassettes/<module>/ beside each test module)",
    )
    group.addoption(
        "--llmproxy-strict-unused",
        action="store_true",
        help="a test fails when its cassette holds exchanges it never asked for",
    )
    group.addoption(
        "--llmproxy-check-orphans", action="store_true", help="list cassettes in the cassette folders no test uses"
    )
    group.addoption(
        "--llmproxy-journal-size",
        type=int,
        default=None,
        metavar="N",
        help="exchanges the control API's journal keeps, every test's (default: 1000; 0: none)",
    )
    group.addoption(
        "--llmproxy-ui",
        action="store_true",
        help="print the URL of the dashboard (with its token) of the proxy the tests run through, one per xdist "
        "worker (docs/ui.md)",
    )
    for name, metavar, help in REPEATABLE:
        group.addoption(f"--llmproxy-{name}", action="append", default=[], metavar=metavar, help=f"{help}; repeatable")
        parser.addini(f"llmproxy_{name.replace('-', '_')}", f"{help}: one a line", type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "llmproxy(cassette=None, mode=None, preset=None, match=None, expectations=None, chaos=None): serve this"
        " test's LLM calls from its own cassette (and expectations, with faults) through llmproxy; see"
        " docs/pytest.md",
    )
    config.pluginmanager.register(Runner(config), "llmproxy-runner")


@pytest.fixture
def llmproxy(request: pytest.FixtureRequest) -> "TestProxy":
    """The running proxy as this test sees it: url, environment, calls, misses, unused, tokens, cost_usd,
    tool_calls, injected (`llmproxy.testing.fixture.TestProxy`)."""
    from llmproxy.testing.fixture import TestProxy

    return TestProxy(_turn(request, MARKER))


@pytest.fixture
def llmproxy_control(request: pytest.FixtureRequest) -> "Client":
    """The control API of the proxy this test runs on (`llmproxy.control.client.Client`), scoped to the test:
    the expectations it adds answer its requests only, and the journal it reads and verifies holds its requests
    only (each filed under its node id, as if sent with `x-llmproxy-test-id`). The test has a mock of its own,
    empty until it adds expectations."""
    from llmproxy.control.client import Client

    turn = _turn(request, CONTROL_FIXTURE)
    return Client.from_environment(turn.proxy.environment | {TEST_ID_VARIABLE: request.node.nodeid})


def _turn(request: pytest.FixtureRequest, fixture: str) -> "Turn":
    turn: Turn | None = request.node.stash.get(TURN, None)
    if turn is None:  # the test's settings could not be served; or not a test's own set-up
        failure = request.node.stash.get(FAILURE, None)
        message = failure or f"the {fixture} fixture is function-scoped: use it in a test or a function fixture"
        pytest.fail(message, pytrace=False)
    return turn


def uses_llmproxy(item: pytest.Item) -> bool:
    fixtures = getattr(item, "fixturenames", ())
    return item.get_closest_marker(MARKER) is not None or MARKER in fixtures or CONTROL_FIXTURE in fixtures


class Runner:
    """The plugin's state in one process: the proxy (started at the first test that uses it), the network
    blocker, and what the end-of-run summary lists."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        option = config.getoption
        self.forced_mode = option("llmproxy_mode")
        self.default_mode = default_mode(os.environ)
        directory = option("llmproxy_cassette_dir")
        self.root = Path(config.rootpath, directory) if directory else None
        if self.root is not None:
            self._check_root(directory)
        self.strict_unused: bool = option("llmproxy_strict_unused")
        self.check_orphans: bool = option("llmproxy_check_orphans")
        self.ui: bool = option("llmproxy_ui")
        self.journal_size: int | None = option("llmproxy_journal_size")
        if self.journal_size is not None and self.journal_size < 0:
            raise pytest.UsageError(f"--llmproxy-journal-size {self.journal_size}: expected 0 or more")
        self.reach = _reach(config)
        self.blocker = Blocker(self.reach.egress)
        if option("llmproxy_block_network"):
            self.blocker.install()
        self.session = _session_name(config)
        self.proxy: WorkerProxy | None = None
        self.failed_start: str | None = None
        self.expected: set[Path] = set()  # every collected llmproxy test's cassette
        self.folders: set[Path] = set()
        self.unused: dict[str, list[str]] = {}  # node id → its unused exchanges
        self.recorded: dict[str, list[tuple[str, int, str]]] = {}  # cassette → (node id, exchanges, how), in order
        self.leftovers: dict[str, None] = {}  # journals recovered, discarded or ignored, in order, once each
        self.orphans: list[str] = []

    def _check_root(self, directory: str) -> None:
        """`--llmproxy-cassette-dir`: a directory, or one to be made by recording. Raises pytest.UsageError."""
        assert self.root is not None
        if self.root.exists() and not self.root.is_dir():
            raise pytest.UsageError(f"--llmproxy-cassette-dir {directory}: not a directory ({self.root})")
        mode = self.forced_mode or self.default_mode
        if not self.root.exists() and mode == "none":
            why = "--llmproxy-mode none" if self.forced_mode else "in CI the mode is none"
            raise pytest.UsageError(
                f"--llmproxy-cassette-dir {directory}: no such directory ({self.root}), and {why}: it only"
                " replays cassettes, it records none"
            )

    # collection: which cassettes the tests would use, for --llmproxy-check-orphans

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        if self.check_orphans and uses_llmproxy(item):
            marker = item.get_closest_marker(MARKER)
            try:
                explicit = _marker_arguments(marker).get("cassette") if marker else None
            except LlmproxyError:  # its set-up fails, saying why
                return
            self.expected.add(cassette_path(item, explicit, self.root).resolve())
            self.folders.add(default_directory(Path(str(item.path)), self.root))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.check_orphans:
            return
        found = {path.resolve() for folder in self.folders if folder.is_dir() for path in folder.glob("*.json")}
        self.orphans = sorted(_shown(path, self.config.rootpath) for path in found - self.expected)
        if hasattr(self.config, "workeroutput"):  # an xdist worker: the controller prints it
            self.config.workeroutput["llmproxy_orphans"] = self.orphans

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist: each worker collected every test, and found the same orphans."""
        self.orphans = sorted({*self.orphans, *getattr(node, "workeroutput", {}).get("llmproxy_orphans", [])})

    # each test

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """Before the test's fixtures: its settings in place and its environment set. What stops that fails
        the set-up once the fixtures are set (so that they are torn down as usual)."""
        turn, failure = None, None
        if uses_llmproxy(item):
            try:
                turn = self._begin(item)
            except LlmproxyError as error:
                failure = item.stash[FAILURE] = f"llmproxy: {error}"
            except Exception as error:  # reported as the test's set-up error; pytest's own set-up still runs
                failure = item.stash[FAILURE] = f"llmproxy failed: {type(error).__name__}: {error}"
        if turn is not None:
            item.stash[TURN] = turn
            item.stash[APPLIED] = environment = ExitStack()
            environment.enter_context(applied(turn.proxy.environment | {TEST_ID_VARIABLE: item.nodeid}))
            if turn.recording is None:  # replaying: the SDKs want a key to start, and it is never sent on
                environment.enter_context(applied(placeholder_keys(os.environ)))
        recording = turn is not None and turn.recording is not None
        self.blocker.blocking = self.blocker.installed and not recording
        result = yield
        if failure is not None:
            pytest.fail(failure, pytrace=False)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        turn = item.stash.get(TURN, None)
        try:
            result = yield
        except Exception as error:
            if problems := self._problems(item, turn, _told(error)):
                error.add_note("\n".join(problems))
            raise
        if problems := self._problems(item, turn):
            pytest.fail("\n".join(problems), pytrace=False)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when == "call":
            item.stash[PASSED] = report.passed
        if report.when == "setup" and (leftovers := item.stash.get(LEFTOVERS, None)):
            report.user_properties.append(("llmproxy_leftovers", leftovers))
        outcome = item.stash.get(OUTCOME, None)
        if report.when == "teardown" and outcome is not None:  # user properties: xdist takes them to the controller
            if outcome.unused:
                report.user_properties.append(("llmproxy_unused", outcome.unused))
            if (kept := outcome.kept) is not None:
                shown = _shown(kept.cassette, self.config.rootpath)
                report.user_properties.append(("llmproxy_recorded", [shown, kept.exchanges, kept.how]))
        return report

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            self.blocker.blocking = False
            self.blocker.take()
            if (environment := item.stash.get(APPLIED, None)) is not None:
                environment.close()
            turn = item.stash.get(TURN, None)
            if turn is not None:
                try:
                    outcome = item.stash[OUTCOME] = turn.end(passed=item.stash.get(PASSED, False))
                except LlmproxyError as error:
                    pytest.fail(f"llmproxy: {error}", pytrace=False)
                if late := outcome.unanswered[item.stash.get(REPORTED, 0) :]:  # after the test's call: its fixtures'
                    pytest.fail("\n".join(self._unanswered(item, turn, late)), pytrace=False)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == "llmproxy_unused":
                self.unused[report.nodeid] = [str(line) for line in value]  # type: ignore[attr-defined]
            elif name == "llmproxy_recorded":
                cassette, exchanges, how = cast("list[Any]", value)
                self.recorded.setdefault(str(cassette), []).append((report.nodeid, int(exchanges), str(how)))
            elif name == "llmproxy_leftovers":
                self.leftovers.update(dict.fromkeys(str(line) for line in value))  # type: ignore[attr-defined]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.unused and not self.orphans and not self.recorded and not self.leftovers:
            return
        write = terminalreporter.write_line
        terminalreporter.section("llmproxy")
        for line in self.leftovers:
            write(line)
        for nodeid, exchanges in sorted(self.unused.items()):
            write(f"{nodeid}: {len(exchanges)} unused (--llmproxy-strict-unused fails the test for them)")
            for exchange in exchanges:
                write(f"  unused: {exchange}")
        if self.orphans:
            write(f"{plural(len(self.orphans), 'cassette')} no collected test uses:")
            for orphan in self.orphans:
                write(f"  orphan: {orphan}")
        if self.recorded:
            write(f"llmproxy recorded {plural(len(self.recorded), 'cassette')}:")
            for cassette, recordings in sorted(self.recorded.items()):
                write(f"  {cassette}: {_recorded(recordings)}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.proxy is not None:
            self.proxy.close()
        self.blocker.uninstall()

    # the parts

    def _begin(self, item: pytest.Item) -> "Turn":
        """Raises LlmproxyError: the proxy could not start (every test after says so too), or the test's
        settings cannot be served."""
        from llmproxy.cassette.leftovers import gathered
        from llmproxy.cassette.redact import Redactor
        from llmproxy.journal import DEFAULT_CAPACITY
        from llmproxy.testing.worker import WorkerProxy

        if self.failed_start is not None:
            raise LlmproxyError(self.failed_start)
        settings = self.settings(item)
        if self.proxy is None:
            try:
                journal = DEFAULT_CAPACITY if self.journal_size is None else self.journal_size
                self.proxy = WorkerProxy(Redactor(), self.reach, journal=journal)
            except LlmproxyError as error:
                self.failed_start = f"the proxy could not start: {error}"
                raise LlmproxyError(self.failed_start) from None
            if self.ui:
                self._announce_ui(self.proxy.session.ui_url)
        with gathered() as leftovers:  # a journal a killed run left: said at the end of the run
            turn = self.proxy.begin(settings, owner=f"pid {os.getpid()}: {item.nodeid}, in {self.session}")
        if leftovers:
            item.stash[LEFTOVERS] = leftovers
        return turn

    def _announce_ui(self, url: str) -> None:
        """`--llmproxy-ui`: the dashboard's URL, on the terminal whatever pytest captures (an xdist worker's
        too); opened in the browser when pytest's own stdout is a terminal."""
        from llmproxy.control.ui import announce

        def say(line: str) -> None:
            stream = sys.__stderr__
            if stream is not None:
                stream.write(f"{line}\n")
                stream.flush()

        announce("pytest", url, no_open=not _terminal(), say=say)

    def settings(self, item: pytest.Item) -> "Settings":
        """The test's settings: the command line's mode over the marker's over the default. Raises
        LlmproxyError for a marker argument it cannot use."""
        from llmproxy.plan import RecordMode
        from llmproxy.testing.worker import Settings

        marker = item.get_closest_marker(MARKER)
        arguments = _marker_arguments(marker) if marker is not None else {}
        mode = self.forced_mode or arguments.get("mode") or self.default_mode
        try:
            mode = RecordMode(mode)
        except ValueError:
            raise _one_of("mode", mode, MODES) from None
        here = Path(str(item.path)).parent
        expectations = arguments.get("expectations")
        if expectations is not None:
            if not isinstance(expectations, str | os.PathLike):
                raise LlmproxyError(f"expectations={expectations!r}: expected an expectations file's path")
            expectations = here / expectations
        chaos, source = _chaos(arguments.get("chaos"), here)
        return Settings(
            cassette_path(item, arguments.get("cassette"), self.root),
            mode,
            _match(arguments.get("preset"), arguments.get("match")),
            expectations,
            chaos,
            source,
            controlled=CONTROL_FIXTURE in getattr(item, "fixturenames", ()),
            test_id=item.nodeid,
        )

    def _problems(self, item: pytest.Item, turn: "Turn | None", told: str = "") -> list[str]:
        """What fails the test: what it sent upstream and got no whole answer to, its misses, the connections the
        blocker stopped, its unused exchanges when --llmproxy-strict-unused asks. A miss the test's error already
        tells (`told`: the refusal the client raised carries llmproxy's diagnostic) is not told again."""
        problems = []
        if turn is not None:
            turn.settle()
            unanswered = turn.unanswered()
            item.stash[REPORTED] = len(unanswered)
            problems += self._unanswered(item, turn, unanswered)
        if blocked := self.blocker.take():
            problems += ["llmproxy blocked the network:", *(f"blocked: {attempt}" for attempt in blocked)]
        if turn is not None:
            # a client that retries a refused request misses it again
            misses = Counter(line for line in turn.misses() if line.partition("\n")[0] not in told)
            if misses:
                problems += ["llmproxy: nothing recorded answers a request:"]
            problems += [f"miss{f' ({n} times)' if n > 1 else ''}: {line}" for line, n in misses.items()]
            if self.strict_unused and (unused := turn.unused()):
                problems += ["llmproxy: the cassette holds exchanges the test did not ask for:"]
                problems += [f"unused (--llmproxy-strict-unused): {line}" for line in unused]
        return problems

    def _unanswered(self, item: pytest.Item, turn: "Turn", unanswered: list[str]) -> list[str]:
        """One line each: the test, the request and why — and that the test's cassette takes none of what it
        recorded."""
        cassette = turn.settings.cassette
        fate = "is left as it was" if cassette.exists() else "is not written"
        shown = _shown(cassette, self.config.rootpath)
        return [f"llmproxy: {item.nodeid}: {line}: {shown} {fate}" for line in unanswered]


def _reach(config: pytest.Config) -> "Reach":
    """`--llmproxy-map`, `--llmproxy-route`, `--llmproxy-allow-host` and `--llmproxy-background-host`: each ini
    key's lines, then the command line's (a host mapped in both goes where the command line says), read by the
    CLI's own parsers of `--map`, `--route`, `--allow-host` and `--background-host`. Raises pytest.UsageError
    naming the option or key a bad value came from."""

    def read[T](name: str, parse: Callable[[list[str]], T]) -> T:
        key = f"llmproxy_{name.replace('-', '_')}"
        given = [(f"{key} in {config.inipath.name if config.inipath else 'the ini file'}", config.getini(key))]
        given.append((f"--llmproxy-{name}", config.getoption(key)))
        for where, values in given:  # each source alone first, so that an error names where it was given
            try:
                parse(values)
            except LlmproxyError as error:
                message = str(error)
                message = where + message.removeprefix(f"--{name}") if message.startswith(f"--{name}") else message
                raise pytest.UsageError(message) from None
        return parse([value for _, values in given for value in values])

    def routes(values: list[str]) -> "tuple[Declaration, ...]":
        if not values:  # detection's codecs load only for routes to declare
            return ()
        from llmproxy.providers import declared

        return declared.parse_all(values)

    return Reach(
        read("map", parse_map),
        read("route", routes),
        read("allow-host", lambda values: EgressPolicy.parse(values, local_services=True)),
        {name: os.environ[name] for name in NETWORK_VARIABLES if os.environ.get(name)},
        read("background-host", BackgroundTraffic.of),
    )


def _told(error: BaseException) -> str:
    """What the error says, with the errors it was raised from or while handling."""
    told, seen = [], set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        told.append(str(cause))
        cause = cause.__cause__ or cause.__context__
    return "\n".join(told)


def _recorded(recordings: Sequence[tuple[str, int, str]]) -> str:
    """What the run's tests did to one cassette, in the order they ended: "new, 2 exchanges (test_a, test_b)",
    "1 exchange added (test_c)", "rewritten, 3 exchanges (test_d)" — a rewrite replaces what came before it."""
    exchanges, how = 0, "added"
    for _, added, made in recordings:
        if made == "added":
            exchanges += added
        else:
            exchanges, how = added, made
    tests = ", ".join(nodeid for nodeid, _, _ in recordings)
    counted = plural(exchanges, "exchange")
    return f"{counted} added ({tests})" if how == "added" else f"{how}, {counted} ({tests})"


def _session_name(config: pytest.Config) -> str:
    """This pytest session as another one that finds a cassette held is told it: "the pytest session started
    10:32 in /repo" (and the xdist worker) — its command line would say little ("pytest -n 4")."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    return f"the pytest session started {time.strftime('%H:%M')} in {config.rootpath}" + (
        f", xdist worker {worker}" if worker else ""
    )


def _marker_arguments(marker: pytest.Mark) -> dict[str, Any]:
    """The marker's arguments by name. Raises LlmproxyError for one it does not take, or a cassette that is not
    a name or a path (collection names cassettes from it)."""
    if len(marker.args) > 1:
        raise LlmproxyError("@pytest.mark.llmproxy takes at most one positional argument: the cassette")
    if unknown := sorted(set(marker.kwargs) - set(MARKER_ARGUMENTS)):
        hint = _did_you_mean(unknown[0], MARKER_ARGUMENTS) or f" (it takes {', '.join(MARKER_ARGUMENTS)})"
        raise LlmproxyError(f"@pytest.mark.llmproxy: unknown argument {unknown[0]!r}{hint}")
    arguments = dict(zip(("cassette",), marker.args, strict=False)) | dict(marker.kwargs)
    cassette = arguments.get("cassette")
    if cassette is not None and not isinstance(cassette, str | os.PathLike):
        raise LlmproxyError(f"cassette={cassette!r}: expected a cassette's name or path")
    return arguments


def _did_you_mean(value: object, choices: Sequence[str]) -> str:
    """ " (did you mean 'x'?)" for the closest of `choices`, if one is close; else ""."""
    close = difflib.get_close_matches(value, choices, n=1) if isinstance(value, str) else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def _one_of(name: str, value: object, choices: Sequence[str]) -> LlmproxyError:
    return LlmproxyError(f"{name}={value!r}: expected one of {', '.join(choices)}{_did_you_mean(value, choices)}")


def _match(preset: str | None, match: "MatchOptions | Sequence[str] | None") -> "MatchOptions":
    """`match`: MatchOptions, or JSONPaths of body fields to ignore when matching."""
    from llmproxy.cassette import jsonpath
    from llmproxy.cassette.presets import CHOICES
    from llmproxy.cassette.replay_index import MatchOptions

    if preset is not None and preset not in CHOICES:
        raise _one_of("preset", preset, CHOICES)
    if isinstance(match, MatchOptions):
        return match if preset is None else MatchOptions(preset, match.ignore, match.on_exhausted)
    paths = [match] if isinstance(match, str) else match or ()
    if not isinstance(paths, Sequence) or not all(isinstance(path, str) for path in paths):
        raise LlmproxyError(f"match={match!r}: expected JSONPaths of request-body fields to ignore, or a MatchOptions")
    try:
        ignore = tuple(jsonpath.parse(path) for path in paths)
    except ValueError as error:
        raise LlmproxyError(f"match={match!r}: {error}") from None
    return MatchOptions(preset, ignore)


def _chaos(chaos: "str | Path | Mapping[str, Any] | None", here: Path) -> tuple["ChaosFile | None", str]:
    """`chaos`: what `--chaos` reads — a chaos file's path (relative to the test module), or its content as a
    dict — or the command line's chaos options, `"--fail-first 2 --retry-after 1"`. Raises LlmproxyError
    (ChaosError naming the JSON path of each problem, UsageError)."""
    from llmproxy.intercept.rules import load_chaos, parse_chaos

    if chaos is None:
        return None, ""
    if isinstance(chaos, Mapping):
        return parse_chaos(dict(chaos), "chaos="), "the marker's chaos"
    if isinstance(chaos, str) and chaos.startswith("-"):
        from llmproxy.intercept.options import chaos_arguments, intercept_plan

        values = chaos_arguments(chaos, "chaos=")
        if values["state"] is not None:
            raise LlmproxyError("chaos=: --state is not for one test: its counters live and end with the test")
        values["chaos"] = tuple(here / path for path in values["chaos"])
        plan = intercept_plan(**values)
        return plan.chaos, f"chaos={chaos}"
    if isinstance(chaos, str | Path):
        return load_chaos(here / chaos), f"chaos={chaos}"
    raise LlmproxyError(f"chaos={chaos!r}: expected a chaos file's path, a dict or options (docs/chaos.md)")


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _terminal() -> bool:
    """Whether pytest itself writes to a terminal (its captured stdout is not one)."""
    stream = sys.__stdout__
    return stream is not None and stream.isatty()
