"""What the pytest plugin's tests share: the stand-in upstream, one llmproxy home (one CA) per module, and a
pytester with no proxy or CI variable of the outer run's."""

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmproxy.testing.plugin import CI_VARIABLES
from tests.testing.upstream import Upstream

# Imported before pytester's first snapshot of sys.modules: it forgets the modules each in-process run imports,
# and a twice-imported mitmproxy or cryptography does not mix with the first (besides costing seconds a run).
importlib.import_module("tests.mitm")
importlib.import_module("llmproxy_addons.run")
importlib.import_module("anthropic")
importlib.import_module("openai")


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def llmproxy_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llmproxy-home")  # one CA for every run here


@pytest.fixture
def tester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, llmproxy_home: Path) -> pytest.Pytester:
    monkeypatch.setenv("LLMPROXY_HOME", str(llmproxy_home))
    for name in CI_VARIABLES:  # the default mode is tested on its own
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(
        "[pytest]\nfilterwarnings = ignore::DeprecationWarning\nasyncio_default_fixture_loop_scope = function"
    )
    return pytester
