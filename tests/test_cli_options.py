"""Options given twice, on every command: one a user may mean several of adds up, each run here for its
effect; one that can hold a single value refuses a second, naming both — never the last kept in silence."""

import collections
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from llmproxy.cli import main
from llmproxy.options import Once
from tests.cli_commands import commands
from tests.conformance.server import LoopbackServer, Reply

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "cassettes" / "quickstart.json"
ASK = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}


def options(repeatable: bool) -> list[tuple[str, str]]:
    """(command, option) for every option that takes a value: the repeatable ones, or those given once."""
    found = []
    for words, command in commands():
        for param in command.params:
            takes_values = isinstance(param, click.Option) and not param.is_flag and not param.count
            if takes_values and param.multiple == repeatable:
                found.append((" ".join(words), max(param.opts, key=len)))
    return found


ONCE = options(repeatable=False)
REPEATABLE = options(repeatable=True)


def test_every_option_of_every_command_refuses_or_adds_a_second_value() -> None:
    """Each option is made by `llmproxy.options`; the ones that add up are these, each tested below."""
    plain = [
        (" ".join(words), param.name)
        for words, command in commands()
        for param in command.params
        if isinstance(param, click.Option) and not isinstance(param, Once)
    ]
    assert plain == []
    assert {option for _, option in REPEATABLE} == {
        *("--fail", "--chaos", "--map", "--reverse", "--route", "--redact-field"),  # record, replay and mock
        *("--cassette", "--allow-host", "--ignore", "--record-host", "--prices"),
        "--replay",  # mcp: tests/control/test_mcp_stdio.py
        "--background-host",  # record, replay and mock: tests/replay/test_background_traffic.py
        "--from",  # report, explain and verify: tests/agent_logs/test_agent_logs.py
    }


@pytest.mark.parametrize(("command", "option"), ONCE, ids=[f"{command} {option}" for command, option in ONCE])
def test_an_option_that_holds_one_value_refuses_a_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str
) -> None:
    """Refused before anything runs (in a folder of its own, and with a command to run around, so that a
    value kept in silence could neither write where it should not nor serve until stopped)."""
    around = ["--", "true"] if command in ("record", "replay", "mock") else []
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*command.split(), option, "1", option, "2", *around])
    assert (result.exit_code, result.output) == (2, f"llmproxy {command}: error: {option} given twice: 1 and 2\n")


def test_the_same_value_twice_is_taken_and_live_with_no_live_is_refused() -> None:
    same = CliRunner().invoke(
        main,
        ["replay", "--cassette", str(QUICKSTART), "--seed", "7", "--seed", "7", "--fail", "529", "--explain-chain"],
    )
    assert same.exit_code == 0, same.output
    both = CliRunner().invoke(main, ["mock", "--live", "--no-live", "--", "true"])
    assert (both.exit_code, both.output) == (2, "llmproxy mock: error: --live and --no-live: choose one\n")


def llmproxy(tmp_path: Path, *arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *arguments],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")},
        cwd=cwd or tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def python(code: str, *arguments: str) -> list[str]:
    return [sys.executable, "-c", code, *arguments]


# Asks the mock (through its base URL) N times; prints the statuses as a JSON list.
STATUSES = f"""
import http.client, json, os, sys
from urllib.parse import urlsplit
base = urlsplit(os.environ["LLMPROXY_BASE_URL"])
headers = {{"content-type": "application/json", "anthropic-version": "2023-06-01"}}
connection = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
statuses = []
for model in sys.argv[2:] * int(sys.argv[1]):
    connection.request("POST", "/v1/messages", json.dumps({{**{ASK!r}, "model": model}}), headers)
    answer = connection.getresponse()
    answer.read()
    statuses.append(answer.status)
print(json.dumps(statuses))
"""


@pytest.fixture
def expectations(tmp_path: Path) -> Path:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
    return path


def test_fail_twice_injects_both_statuses_in_the_shares_asked(tmp_path: Path, expectations: Path) -> None:
    """1,000 calls under `--fail 500@0.3 --fail 429@0.05`: about 300 500s and 50 429s (each share of all
    requests), the same ones again with the same seed."""
    runs = []
    for _ in range(2):
        done = llmproxy(
            tmp_path,
            *("mock", "--expectations", str(expectations), "--fail", "500@0.3", "--fail", "429@0.05", "--seed", "7"),
            *("--", *python(STATUSES, "1000", "claude-haiku-4-5")),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]  # deterministic with --seed
    counted = collections.Counter(runs[0])
    assert set(counted) == {200, 500, 429}
    assert 240 <= counted[500] <= 360, counted  # 300 expected; 4 standard deviations either way
    assert 25 <= counted[429] <= 75, counted  # 50 expected
    assert f"injected {counted[500] + counted[429]} faults (error {counted[500] + counted[429]}), seed 7" in done.stderr


def test_a_last_fail_without_a_share_takes_the_rest(tmp_path: Path, expectations: Path) -> None:
    """docs/chaos.md: `--fail 500@0.5 --fail 429` is half and half."""
    done = llmproxy(
        tmp_path,
        *("mock", "--expectations", str(expectations), "--fail", "500@0.5", "--fail", "429", "--seed", "3"),
        *("--", *python(STATUSES, "200", "claude-haiku-4-5")),
    )
    counted = collections.Counter(json.loads(done.stdout))
    assert set(counted) == {500, 429}, done.stderr[-2000:]
    assert 70 <= counted[500] <= 130, counted  # 100 expected; 4 standard deviations either way


def test_fail_shares_that_cannot_all_be_given_are_refused(tmp_path: Path, expectations: Path) -> None:
    for fails, said in (
        (["500@0.7", "429@0.5"], "the shares add up to 1.2 of the requests; at most 1"),
        (["500", "429@0.1"], "--fail 500 takes every request left: give it a share (500@0.5), or put it last"),
    ):
        result = CliRunner().invoke(
            main, ["mock", "--expectations", str(expectations), *(f"--fail={fail}" for fail in fails), "--", "true"]
        )
        assert result.exit_code == 2
        assert said in result.output


def test_chaos_twice_applies_both_files_rules(tmp_path: Path, expectations: Path) -> None:
    files = []
    for model, status in (("model-a", 503), ("model-b", 429)):
        files += ["--chaos", str(tmp_path / f"{model}.json")]
        rule = {"match": {"model": model}, "chaos": {"errorStatus": status}}
        (tmp_path / f"{model}.json").write_text(json.dumps({"rules": [rule]}))
    done = llmproxy(
        tmp_path,
        *("mock", "--expectations", str(expectations), *files),
        *("--", *python(STATUSES, "1", "model-a", "model-b", "claude-haiku-4-5")),
    )
    assert json.loads(done.stdout) == [503, 429, 200], done.stderr[-2000:]
    seeds = []
    for name, seed in (("a", 1), ("b", 2)):
        (tmp_path / f"{name}.json").write_text(json.dumps({"seed": seed, "rules": []}))
        seeds += ["--chaos", str(tmp_path / f"{name}.json")]
    result = CliRunner().invoke(main, ["mock", *seeds, "--", "true"])
    assert result.exit_code == 2
    assert f"--chaos {tmp_path / 'a.json'} and {tmp_path / 'b.json'} set different seeds (1 and 2): give --seed" in (
        result.output
    )


# POSTs the request to each URL given through the proxy (HTTPS, trusting llmproxy's CA from SSL_CERT_FILE),
# or, for a loopback URL, directly; prints the statuses.
POST = f"""
import json, sys, urllib.request
body = {{**{ASK!r}, "alpha_field": "alpha-value-1234", "beta_field": "beta-value-5678"}}
statuses = []
for url in sys.argv[1:]:
    direct = url.startswith("http://127.0.0.1")
    opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({{}})] if direct else []))
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={{
        "content-type": "application/json", "anthropic-version": "2023-06-01", "authorization": "Bearer k"}})
    statuses.append(opener.open(request, timeout=30).status)
print(json.dumps(statuses))
"""
ANSWER = Reply(200, {"content-type": "application/json"}, json.dumps({"content": [], "usage": {}}).encode())


@pytest.fixture
def upstreams() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    with LoopbackServer() as one, LoopbackServer() as two:
        one.queue(ANSWER)
        two.queue(ANSWER)
        yield one, two


def test_map_twice_sends_each_host_where_its_own_says(
    tmp_path: Path, upstreams: tuple[LoopbackServer, LoopbackServer]
) -> None:
    one, two = upstreams
    done = llmproxy(
        tmp_path,
        *("record", "--cassette", str(tmp_path / "c.json")),
        *("--map", f"api.anthropic.com={one.url}", "--map", f"api.openai.com={two.url}"),
        *("--", *python(POST, "https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/messages")),
    )
    assert json.loads(done.stdout) == [200, 200], done.stderr[-2000:]
    assert [request.path for request in one.received] == ["/v1/messages"]
    assert [request.path for request in two.received] == ["/v1/messages"]


def test_reverse_twice_listens_for_each_target(
    tmp_path: Path, upstreams: tuple[LoopbackServer, LoopbackServer]
) -> None:
    one, two = upstreams
    script = (
        "import os, subprocess, sys\n"
        "urls = [os.environ[f'LLMPROXY_REVERSE_URL_{n}'] + '/v1/messages' for n in (1, 2)]\n"
        "subprocess.run([sys.executable, '-c', sys.argv[1], *urls], check=True)\n"
    )
    done = llmproxy(
        tmp_path,
        *("record", "--cassette", str(tmp_path / "c.json"), "--reverse", one.url, "--reverse", two.url),
        *("--", *python(script, POST)),
    )
    assert json.loads(done.stdout) == [200, 200], done.stderr[-2000:]
    assert (len(one.received), len(two.received)) == (1, 1)
    assert len(json.loads((tmp_path / "c.json").read_text())["exchanges"]) == 2


def test_redact_field_twice_redacts_both_fields(
    tmp_path: Path, upstreams: tuple[LoopbackServer, LoopbackServer]
) -> None:
    one, _ = upstreams
    cassette = tmp_path / "c.json"
    done = llmproxy(
        tmp_path,
        *("record", "--cassette", str(cassette), "--map", f"api.anthropic.com={one.url}"),
        *("--redact-field", "alpha_field", "--redact-field", "beta_field"),
        *("--", *python(POST, "https://api.anthropic.com/v1/messages")),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (exchange,) = json.loads(cassette.read_text())["exchanges"]
    recorded = exchange["request"]["body"]["json"]
    assert recorded["alpha_field"].startswith("<redacted:")
    assert recorded["beta_field"].startswith("<redacted:")


def test_ignore_twice_ignores_both_paths(tmp_path: Path) -> None:
    """The quickstart's request with another max_tokens and no stream: a miss unless both are ignored."""
    ask = f"""
import json, os, urllib.error, urllib.request
body = {json.loads(QUICKSTART.read_text())["exchanges"][0]["request"]["body"]["json"]!r}
body = {{**body, "max_tokens": 7}}
body.pop("stream")
request = urllib.request.Request(os.environ["LLMPROXY_BASE_URL"] + "/v1/messages", data=json.dumps(body).encode(),
    headers={{"content-type": "application/json", "anthropic-version": "2023-06-01"}})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
try:
    print(opener.open(request, timeout=30).status)
except urllib.error.HTTPError as error:
    print(error.code)
"""
    for ignored, status in (["$.max_tokens"], "400"), (["$.max_tokens", "$.stream"], "200"):
        flags = [word for path in ignored for word in ("--ignore", path)]
        done = llmproxy(
            tmp_path, "replay", "--cassette", str(QUICKSTART), *flags, "--timing", "instant", "--", *python(ask)
        )
        assert done.stdout.strip() == status, done.stderr[-2000:]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (
            ["replay", "--cassette", str(QUICKSTART), "--cassette", "cassettes/chaos/recovered.json"],
            f"  replay: {QUICKSTART}, cassettes/chaos/recovered.json (streams",
        ),
        (
            ["mock", "--cassette", str(QUICKSTART), "--cassette", "cassettes/chaos/recovered.json"],
            f"  replay: {QUICKSTART}, cassettes/chaos/recovered.json (streams",
        ),
        (
            ["replay", "--cassette", str(QUICKSTART), "--allow-host", "a.example", "--allow-host", "b.example"],
            "  upstream: only a.example, b.example (--allow-host)",
        ),
        (
            ["record", "--cassette", "c.json", "--record-host", "a.example", "--record-host", "b.example"],
            "  record: to c.json: LLM APIs, and a.example, b.example",
        ),
        (
            [
                "record",
                "--cassette",
                "c.json",
                "--route",
                "a.internal=anthropic-messages",
                "--route",
                "b.internal=deepseek",
            ],
            "route declared: a.internal=anthropic-messages\nroute declared: b.internal=deepseek",
        ),
    ],
    ids=["replay --cassette", "mock --cassette", "--allow-host", "--record-host", "--route"],
)
def test_options_given_twice_both_shape_the_chain(arguments: list[str], said: str) -> None:
    """What serves, what may go out, what is recorded: the chain the command builds holds both values."""
    result = CliRunner().invoke(main, [*arguments, "--explain-chain"])
    assert result.exit_code == 0, result.output
    assert said in result.output


def test_prices_twice_prices_each_model_from_its_file(tmp_path: Path) -> None:
    prices = []
    for model, price in (("claude-haiku-4-5", "1000"), ("claude-opus-4-5", "2000")):
        path = tmp_path / f"{model}.prices.json"
        path.write_text(json.dumps({"prices": [{"model": model, "input_mtok": price, "output_mtok": price}]}))
        prices += ["--prices", str(path)]
    report = ["report", str(QUICKSTART), str(ROOT / "cassettes" / "report" / "model-overspend.json")]
    result = CliRunner().invoke(main, [*report, *prices, "--format", "json"])
    assert result.exit_code == 0, result.output
    pricing = {call["model"]: call["pricing"] for call in json.loads(result.stdout)["calls"]}
    assert "claude-haiku-4-5.prices.json" in pricing["claude-haiku-4-5"], pricing
    assert "claude-opus-4-5.prices.json" in pricing["claude-opus-4-5"], pricing


def test_the_pytest_markers_chaos_options_read_as_the_command_lines() -> None:
    """`@pytest.mark.llmproxy(chaos="…")` takes the same options: two --fail add up, a misspelt one gets the
    closest, a second --seed is refused."""
    from llmproxy.errors import UsageError
    from llmproxy.intercept.options import chaos_arguments

    assert chaos_arguments("--fail 500@0.3 --fail 429@0.05", "chaos=")["fail"] == ("500@0.3", "429@0.05")
    for text, said in (
        ("--fail-frist 2", "chaos='--fail-frist 2': no such option --fail-frist (did you mean --fail-first?)"),
        ("--seed 1 --seed 2", "chaos='--seed 1 --seed 2': --seed given twice: 1 and 2"),
    ):
        with pytest.raises(UsageError) as raised:
            chaos_arguments(text, "chaos=")
        assert str(raised.value) == said
