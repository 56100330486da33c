import signal
import socket
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.conformance.server import LoopbackServer

pytest_plugins = ["pytester"]  # the pytest plugin's tests (tests/testing) run pytest inside pytest

# No per-example deadline: a slow CI machine must not turn a property test into a timing test.
settings.register_profile("llmproxy", deadline=None)
settings.load_profile("llmproxy")

# Property tests (`@given`; hypothesis marks each `hypothesis`) run once in CI, on the main Python: CI's second
# pass, on Python 3.12, deselects them (`-m "… and not hypothesis"`, .ci/run). Each searches hundreds of inputs
# of llmproxy's pure core (codecs, framing, redaction, pricing, the mock's vectors), code whose meaning no
# interpreter version changes, and the example tests of the same code still run on 3.12. A property that needs
# a particular Python, or drives a proxy, an SDK client or a subprocess, is not one of these: it would be an example
# test, or lose the deselection by a `pytest.mark` of its own and a line here saying why.


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as in a terminal, even when these tests were started in the background (a shell's `cmd &` starts
    them with SIGINT ignored, and every process they start would inherit that): the tests that stop llmproxy,
    a test or a command with Ctrl-C then see what a user sees."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A fresh loopback server on 127.0.0.1 with an empty reply queue."""
    with LoopbackServer() as server:
        yield server


# Ports a test needs the number of. A server the test runs binds port 0 itself and says which port it got (the
# loopback server does); a process that must be told its port before it binds takes
# `llmproxy_addons.proxy.free_port`'s. These two are held for the whole test, so no other process can start
# listening there meanwhile.


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound, not listening."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 something already listens on (and never answers)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `-n … --dist loadgroup`, the tests that start a coding CLI, a browser or Redis run one at a time on
    one worker: each starts several processes of its own, and two at once on a small machine only race for it."""
    for item in items:
        if item.get_closest_marker("e2e") or item.get_closest_marker("service"):
            item.add_marker(pytest.mark.xdist_group("one-at-a-time"))
