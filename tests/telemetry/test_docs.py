"""docs/telemetry.md's worked Prometheus set-up, run as written: its command line (with a free port for the
control port, and the command kept running until Prometheus has scraped it), Debian's prometheus with its
configuration, and its PromQL answering with the tokens the README's replay used."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.files import read_exchanges
from tests.telemetry.backends import free_port, prometheus

pytestmark = [pytest.mark.service, pytest.mark.slow]

REPOSITORY = Path(__file__).resolve().parents[2]
PAGE = REPOSITORY / "docs" / "telemetry.md"
DOCUMENTED_PORT = "9464"


def blocks(language: str) -> list[str]:
    section = PAGE.read_text().split("## Prometheus", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


WAIT = """
import json, sys, time, urllib.parse, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
url = sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    result = json.load(opener.open(url))["data"]["result"]
    if result and float(result[0]["value"][1]) > 0:
        break
    time.sleep(0.5)
"""


def test_the_prometheus_example_scrapes_the_replays_tokens(tmp_path: Path) -> None:
    (command,) = blocks("sh")
    (config,) = blocks("yaml")
    tokens_query, cost_query = blocks("promql")[0].strip().splitlines()
    port = str(free_port())
    directory = tmp_path / "prometheus"
    directory.mkdir()
    with prometheus(directory, config.replace(DOCUMENTED_PORT, port)) as server:
        words = shlex.split(command.replace(DOCUMENTED_PORT, port))
        split = words.index("--")
        assert words[0] == "llmproxy"
        assert words[split + 1] == "python"
        waiting = tmp_path / "wait.py"
        waiting.write_text(WAIT)
        # the documented client, then a wait until Prometheus has scraped what it did
        client = shlex.join([sys.executable, *words[split + 2 :]])
        wait = shlex.join([sys.executable, str(waiting), server.url, tokens_query])
        done = subprocess.run(
            [sys.executable, "-m", "llmproxy", *words[1 : split + 1], "sh", "-c", f"{client} && {wait}"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            timeout=180,
            env=os.environ,
        )
        assert done.returncode == 0, done.stderr
        (recorded,) = read_exchanges(REPOSITORY / "cassettes" / "quickstart.json")
        assert server.value(tokens_query, 21) == 21  # the cassette's usage: 21 input tokens
        (cost,) = server.query(cost_query)
        assert cost["metric"] == {"gen_ai_request_model": "claude-haiku-4-5"}
        assert float(cost["value"][1]) > 0
        assert recorded.model == "claude-haiku-4-5"
