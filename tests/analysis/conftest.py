"""What the report's tests share: a team's test suite recorded once through the pytest plugin (suite.py)."""

from pathlib import Path

import pytest

from tests.analysis.suite import record_suite
from tests.testing.upstream import Upstream


@pytest.fixture(scope="session")
def suite_cassettes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of per-test cassettes the suite recorded."""
    with Upstream() as upstream:
        return record_suite(tmp_path_factory.mktemp("project"), upstream.url, tmp_path_factory.mktemp("home"))
