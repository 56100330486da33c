import socket
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.conformance.server import LoopbackServer

pytest_plugins = ["pytester"]  # the pytest plugin's tests (tests/testing) run pytest inside pytest

# No per-example deadline: a slow CI machine must not turn a property test into a timing test.
settings.register_profile("llmproxy", deadline=None)
settings.load_profile("llmproxy")


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
