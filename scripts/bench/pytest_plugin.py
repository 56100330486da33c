"""The pytest plugin against wrapping pytest in `llmproxy replay`: a 50-test suite, each test with its own
cassette and one official-SDK call over TLS, run both ways; and the proxy's start-up time.

    .venv/bin/python scripts/bench/pytest_plugin.py [--rounds 3] [--tests 50]

* plugin: `pytest --llmproxy-mode none suite/` — one proxy in the pytest process, each test's cassette swapped
  in as it starts;
* wrapped: `llmproxy replay --timing instant --cassette t1.json … --cassette t50.json -- pytest suite/` — one
  proxy process serving every cassette at once, the plugin disabled (`-p no:llmproxy`).

The two run in turn (A B A B …) and the ratio is taken pair by pair; the median ratio and each side's median
seconds are printed. Start-up: `WorkerProxy` built and closed in this process, the first time (imports
included) and the median of later ones. The machine is shared: medians of paired rounds, not single runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.cassette.store import CassetteWriter  # noqa: E402
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse  # noqa: E402

PYTHON = sys.executable
HEADERS = (("content-type", "application/json"),)
TEST = """
def test_{n}({fixture}):
    with anthropic.Anthropic(api_key="sk-ant-api03-bench", max_retries=0) as client:
        message = client.messages.create(**{body!r})
    assert message.content[0].text == "answer {n}"
"""


def body(n: int) -> dict[str, object]:
    return {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": f"question {n}"}]}


def write_cassette(path: Path, n: int) -> None:
    answer = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": f"answer {n}"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }
    request = RawRequest(
        "POST",
        "https",
        "api.anthropic.com",
        443,
        "/v1/messages",
        "HTTP/1.1",
        HEADERS,
        json.dumps(body(n)).encode(),
        None,
    )
    response = RawResponse(200, "OK", "HTTP/1.1", HEADERS, json.dumps(answer).encode(), None, None)
    writer = CassetteWriter.open(path, Redactor())
    writer.add(RawExchange(request, response, None, time.time(), 1.0, 2.0))
    writer.close()


def make_suite(root: Path, tests: int) -> tuple[Path, Path, list[Path]]:
    """The plugin's suite (cassettes beside it, named as the plugin names them) and the wrapped one."""
    plugin, wrapped = root / "plugin", root / "wrapped"
    cassettes = []
    for folder, fixture in ((plugin, "llmproxy"), (wrapped, "")):
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\nfilterwarnings = ignore::DeprecationWarning\n")
        source = "import anthropic\n" + "".join(TEST.format(n=n, fixture=fixture, body=body(n)) for n in range(tests))
        (folder / "test_suite.py").write_text(source)
    for n in range(tests):
        path = plugin / "cassettes" / "test_suite" / f"test_{n}.json"
        write_cassette(path, n)
        cassettes.append(path)
    return plugin, wrapped, cassettes


def timed(command: list[str], cwd: Path, environment: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])}… failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return elapsed


def startup(rounds: int) -> tuple[float, float]:
    """Seconds to start and stop the plugin's proxy: the first time in a process, and the median after."""
    from llmproxy.testing.worker import WorkerProxy

    times = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        WorkerProxy(Redactor()).close()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        environment = {**os.environ, "LLMPROXY_HOME": str(root / "home"), "PYTHONDONTWRITEBYTECODE": "1"}
        environment = {k: v for k, v in environment.items() if k not in ("CI", "HTTPS_PROXY", "HTTP_PROXY")}
        os.environ["LLMPROXY_HOME"] = environment["LLMPROXY_HOME"]
        plugin, wrapped, cassettes = make_suite(root, options.tests)
        pytest = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        with_plugin = [*pytest, "--llmproxy-mode", "none"]
        replay = [PYTHON, "-m", "llmproxy", "replay", "--timing", "instant"]
        replay += [argument for path in cassettes for argument in ("--cassette", str(path))]
        wrapping = [*replay, "--", *pytest, "-p", "no:llmproxy"]
        timed(with_plugin, plugin, environment)  # warm-up: the CA, the page cache
        pairs = [
            (timed(with_plugin, plugin, environment), timed(wrapping, wrapped, environment))
            for _ in range(options.rounds)
        ]
        first, later = startup(options.rounds)
    ratio = statistics.median(a / b for a, b in pairs)
    print(f"{options.tests} tests, each its own cassette, {options.rounds} paired rounds (medians; a shared machine):")
    print(f"  plugin (one proxy in pytest, cassette swapped per test): {statistics.median(a for a, _ in pairs):.2f} s")
    print(f"  llmproxy replay -- pytest (every cassette at once):       {statistics.median(b for _, b in pairs):.2f} s")
    print(f"  plugin / wrapped: {ratio:.2f}")
    print(f"proxy start-up and stop, in-process: first {first * 1000:.0f} ms (imports included),", end=" ")
    print(f"then {later * 1000:.0f} ms")


if __name__ == "__main__":
    main()
