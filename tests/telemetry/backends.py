"""Prometheus, as a user runs it (Debian's `prometheus`), started on 127.0.0.1 with a generated configuration:
it scrapes the targets a file lists (`file_sd_configs`, re-read as the file changes), so one server scrapes each
llmproxy run a test starts, each under a label of its own."""

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: llmproxy
    file_sd_configs:
      - files: ["{targets}"]
        refresh_interval: 1s
"""

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Prometheus:
    url: str
    targets: Path

    def scrape(self, control_origin: str, run: str) -> None:
        """Scrape the control port at `control_origin` from now on, its series labelled `run`."""
        target = control_origin.removeprefix("http://")
        listed = json.loads(self.targets.read_text()) if self.targets.exists() else []
        listed.append({"targets": [target], "labels": {"run": run}})
        written = self.targets.with_suffix(".tmp")
        written.write_text(json.dumps(listed))
        written.replace(self.targets)

    def query(self, promql: str) -> list[dict[str, Any]]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with _DIRECT.open(url, timeout=5) as answer:
            document = json.load(answer)
        assert document["status"] == "success", document
        result: list[dict[str, Any]] = document["data"]["result"]
        return result

    def value(self, promql: str, expected: float, timeout: float = 30.0) -> float:
        """The query's one value, once it is `expected` (scrapes come every second); the last one seen else."""
        deadline = time.monotonic() + timeout
        found = float("nan")
        while time.monotonic() < deadline:
            result = self.query(promql)
            if result:
                found = float(result[0]["value"][1])
                if found == expected:
                    return found
            time.sleep(0.25)
        return found


@contextmanager
def prometheus(directory: Path, configuration: str | None = None) -> Iterator[Prometheus]:
    """Prometheus on a free port: with `configuration` (YAML), or scraping the targets `Prometheus.scrape`
    lists."""
    binary = shutil.which("prometheus")
    assert binary is not None, "Debian's prometheus package is not installed (.ci/run installs it)"
    targets = directory / "targets.json"
    targets.write_text("[]")
    config = directory / "prometheus.yml"
    config.write_text(configuration if configuration is not None else CONFIG.format(targets=targets))
    port = free_port()
    log = (directory / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with _DIRECT.open(f"{url}/-/ready", timeout=2) as ready:
                    if ready.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None, (directory / "prometheus.log").read_text()
            assert time.monotonic() < deadline, "prometheus did not get ready"
            time.sleep(0.2)
        yield Prometheus(url, targets)
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
