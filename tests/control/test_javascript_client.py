"""llmproxy driven from another language: `llmproxy mock` runs node's own test runner on tests/control/js, whose
test adds an expectation over REST with `fetch`, calls the mock with the official `openai` npm package (from
package.json) and verifies the count over REST. The file is the one docs/control.md shows, word for word."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST = ROOT / "tests" / "control" / "js" / "expectations.test.mjs"
PAGE = ROOT / "docs" / "control.md"


def test_the_page_shows_the_javascript_test_word_for_word() -> None:
    [shown] = re.findall(r"`expectations\.test\.mjs`:\n\n```js\n(.*?)```", PAGE.read_text(), re.S)
    assert shown == TEST.read_text()


@pytest.mark.e2e
def test_a_node_test_drives_the_mock_over_rest(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "openai" / "package.json").is_file():
        pytest.skip("node and the openai npm package are needed: scripts/setup.sh installs it from package.json")
    environment = {"PATH": str(Path(node).parent), "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "llmproxy", "mock", "--", node, "--test", "--test-reporter=spec", str(TEST)]
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ℹ pass 1$", done.stdout, re.M), done.stdout
    assert re.search(r"^ℹ fail 0$", done.stdout, re.M), done.stdout
    assert "mock answered 1 of 1 request" in done.stderr
