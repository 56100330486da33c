"""Run llmproxy in-process, to record, replay or mock around your own code (tests, notebooks):

    from llmproxy.session import replaying

    with replaying("cassettes/session.json") as proxy:
        subprocess.run(["pytest", "tests/agent"], env=os.environ | proxy.environment, check=True)
    assert not proxy.misses

`proxy.url` is the forward proxy (for `HTTPS_PROXY`); `proxy.environment` holds every proxy and CA variable a
child process needs, and `with proxy.apply():` sets them in this process for clients created inside the block.
The CLI's `record`, `replay` and `mock` are these same sessions run around a command. docs/session.md is the
manual.

A `Session` (`llmproxy.proxy_session`) has one shape whatever it runs: its plan (`llmproxy.plan`), the chain
built from it, and once running its listeners and environment; at the end its summary.

This module and `llmproxy.cli` are the entry points: the only places in `llmproxy/` that start the adapters
(mitmproxy is imported only when a session starts); everything else in `llmproxy/` is the pure core.
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llmproxy.cassette import redacted_logs
from llmproxy.plan import RecordMode, mock_plan, record_plan, replay_plan
from llmproxy.providers import declared
from llmproxy.proxy_session import Listening, Session

__all__ = ["Listening", "RecordMode", "Session", "mocking", "recording", "replaying", "running"]


@contextmanager
def running(session: Session, listening: Listening = Listening(), *, start: bool = True) -> Iterator[Session]:
    """The proxy running `session` on its own thread; stopped and the session closed on exit (its summary
    in `session.summary`). The plan's declared routes (`--route`) hold while it runs. `start=False`: the caller
    calls `session.start()` once the rest of its run has started too (the CLI, once the command runs)."""
    from llmproxy_addons.run import run

    redacted_logs.install()
    with declared.declared(session.plan.routes), run(session, listening, start):
        yield session


@contextmanager
def recording(cassette: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Record around a block: ``with recording("c.json") as proxy: …``. Options as `plan.record_plan`."""
    with running(Session.of(record_plan(Path(cassette), **options)), listening) as session:
        yield session


@contextmanager
def replaying(*cassettes: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Replay around a block: ``with replaying("c.json") as proxy: …``. Options as `plan.replay_plan`."""
    paths: Sequence[Path] = [Path(cassette) for cassette in cassettes]
    with running(Session.of(replay_plan(paths, **options)), listening) as session:
        yield session


@contextmanager
def mocking(expectations: str | Path, listening: Listening = Listening(), **options: Any) -> Iterator[Session]:
    """Mock around a block: ``with mocking("expectations.json") as proxy: …``. Options as `plan.mock_plan`;
    `proxy.mock_log.entries` is the request log."""
    with running(Session.of(mock_plan(Path(expectations), **options)), listening) as session:
        yield session
