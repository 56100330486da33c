from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.mitm  # noqa: F401  (mitmproxy imported as tests/mitm.py says, for the in-process sessions)
from tests.intercept.redis_server import redis_server


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real Redis for the session's tests; each test takes its own namespace (`fresh_redis`)."""
    with redis_server(Path(tmp_path_factory.mktemp("redis"))) as url:
        yield url


@pytest.fixture
def fresh_redis(redis_url: str, request: pytest.FixtureRequest) -> str:
    """The session's Redis under a namespace of this test's own."""
    return f"{redis_url}?namespace=test-{request.node.name}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes the real Redis is a service test: CI runs it once, on the main Python."""
    for item in items:
        if "fresh_redis" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.service)
