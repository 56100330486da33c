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


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 something already listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]
