"""Real coding CLIs (from npm, see package.json) run against llmproxy's encodings on a loopback server.

Each CLI gets a scripted session: turn 1 answers with a tool call that runs `echo llmproxy-ok`, turn 2 with a
final text. A CLI that prints the final text has parsed llmproxy's streams, run the tool and sent its output
back; the request bodies it sent are kept for assertions and for the captured fixtures. Each answer reports
the usage the provider would for the request the CLI sent (its size, the prompt cache's reads and writes).
"""

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from llmproxy.mock.prompt_cache import PromptCache
from llmproxy.model import Completion, StopReason, ToolCall
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import CHAT_CODECS, chat_codec
from llmproxy.providers.routes import detect, with_body
from tests.certs import make_test_ca
from tests.conformance.server import LoopbackServer, Received, Reply
from tests.e2e.websocket_upstream import serve_websocket

ROOT = Path(__file__).resolve().parents[2]
FINAL_TEXT = "The command printed llmproxy-ok."


def tool_loop(tool: str, arguments: dict[str, Any]) -> list[Completion]:
    """The two turns: a call of `tool`, then the final text (each with the usage the stand-in works out)."""
    return [
        Completion(
            text="Running it.",
            tool_calls=(ToolCall("call_capture_1", tool, arguments),),
            stop_reason=StopReason.TOOL_USE,
        ),
        Completion(text=FINAL_TEXT, stop_reason=StopReason.END_TURN),
    ]


@dataclass(frozen=True)
class Cli:
    name: str
    codec: str
    turns: list[Completion]
    argv: list[str]
    # other paths the CLI calls: JSON answered as is, or an answer on the side (not a turn) in the API's format
    canned: dict[str, bytes | Completion] = field(default_factory=dict)
    websocket: bool = False  # its model traffic goes over WebSocket (Codex CLI's default configuration)
    # requests on the side of the conversation (a title, a summary), told apart by a marker in the body: each
    # gets its answer and is not a turn
    asides: tuple[tuple[str, Completion], ...] = ()
    # where package.json installs its binary, under node_modules, when not as `.bin/NAME` (a native package);
    # or, for a CLI from PyPI, its path under the project (scripts/setup.sh gives it a virtualenv of its own)
    installed_as: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}-websocket" if self.websocket else self.name

    @property
    def binary(self) -> str | None:
        installed_as = self.installed_as or f".bin/{self.name}"
        local = ROOT / installed_as if installed_as.startswith(".venv") else ROOT / "node_modules" / installed_as
        return str(local) if local.exists() else shutil.which(self.name)


CLAUDE = Cli(
    "claude",
    "anthropic-messages",
    tool_loop("Bash", {"command": "echo llmproxy-ok", "description": "Print a marker"}),
    ["-p", "Run `echo llmproxy-ok` with Bash, then tell me what it printed.", "--allowedTools", "Bash"],
)
CODEX = Cli(
    "codex",
    "openai-responses",
    tool_loop("exec_command", {"cmd": "echo llmproxy-ok"}),
    [
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "Run `echo llmproxy-ok`, then tell me what it printed.",
    ],
)
# The Gemini CLI logs in with Google (an access token from the environment) and talks to Code Assist, whose
# set-up calls get canned answers. Before each turn it asks a small model which model should answer (the
# routing classifier, a non-streaming generateContent): it is told "flash".
_ROUTING = Completion(text='{"reasoning": "A single shell command.", "model_choice": "flash"}')
GEMINI = Cli(
    "gemini",
    "gemini-code-assist",
    tool_loop("run_shell_command", {"command": "echo llmproxy-ok", "description": "Print a marker"}),
    ["-p", "Run `echo llmproxy-ok` with the shell tool, then tell me what it printed.", "--yolo"],
    {
        "/v1internal:loadCodeAssist": json.dumps(
            {"currentTier": {"id": "standard-tier", "name": "Standard"}, "cloudaicompanionProject": "llmproxy-test"}
        ).encode(),
        "/v1internal:generateContent": _ROUTING,
        "/v1internal:retrieveUserQuota": b"{}",
        "/v1internal:listExperiments": b"{}",
        "/v1internal:recordCodeAssistMetrics": b"{}",
        "/v1internal:fetchAdminControls": b"{}",
    },
)
# Codex CLI as installed: the built-in OpenAI provider, which talks to `/v1/responses` over WebSocket
CODEX_WEBSOCKET = replace(CODEX, websocket=True)
# opencode, set to Anthropic by its config file (opencode_config below), runs its bash tool without asking;
# beside the conversation it asks a small model for the session's title.
OPENCODE = Cli(
    "opencode",
    "anthropic-messages",
    tool_loop("bash", {"command": "echo llmproxy-ok", "description": "Print a marker"}),
    ["run", "Run `echo llmproxy-ok` with the bash tool, then tell me what it printed."],
    asides=(("You are a title generator", Completion(text="Echo a marker", stop_reason=StopReason.END_TURN)),),
)
CLIS = {cli.label: cli for cli in (CLAUDE, CODEX, CODEX_WEBSOCKET, GEMINI, OPENCODE)}
RESPONSES_CODEC = CHAT_CODECS["openai-responses"]


def write_opencode_config(home: Path, base_url: str | None = None) -> None:
    """opencode's user config in `home`: Anthropic's Claude Sonnet, no self-update; `base_url` sends
    Anthropic's traffic there instead of api.anthropic.com."""
    config: dict[str, Any] = {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude-sonnet-4-5"}
    config["autoupdate"] = False
    if base_url is not None:
        config["provider"] = {"anthropic": {"options": {"baseURL": base_url}}}
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(config))


@dataclass
class Session:
    """What one scripted run produced."""

    version: str
    process: subprocess.CompletedProcess[str]
    bodies: list[dict[str, Any]] = field(default_factory=list)  # the requests that took a turn
    messages: list[dict[str, Any]] = field(default_factory=list)  # every WebSocket message, warm-ups included


class ScriptedServer(LoopbackServer):
    """Answers each LLM API request with the next turn, in the format of the API it came in on (found by
    llmproxy's route detection), streamed when its route says (the body's `stream` flag, or a streaming method
    such as Gemini's); `canned` paths get their canned JSON, or their answer. `tls` serves HTTPS instead of HTTP.
    Started at once; `close` stops it.

    An answer that declares no usage reports what the provider would for the request: its size, and what the
    provider's prompt cache reads and writes of it, as the requests before it left that cache
    (`mock.prompt_cache`) — the second turn of a session reads the first one's prefix, as real runs show."""

    def __init__(
        self,
        turns: list[Completion],
        canned: dict[str, bytes | Completion] | None = None,
        tls: ssl.SSLContext | None = None,
        asides: tuple[tuple[str, Completion], ...] = (),
    ) -> None:
        self.turns = turns
        self.canned = canned or {}
        self.asides = asides
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.messages: list[dict[str, Any]] = []  # what came over WebSocket connections, warm-ups included
        self._cache = PromptCache()
        self._cache_lock = threading.Lock()
        super().__init__(tls, answer=self.scripted)
        self.start()

    def next_turn(self, body: dict[str, Any], path: str) -> Completion | None:
        if len(self.bodies) >= len(self.turns):
            return None
        self.bodies.append(body)
        self.paths.append(path)
        return self.turns[len(self.bodies) - 1]

    def scripted(self, received: Received) -> Reply:
        if received.method == "GET" and received.headers.get("upgrade", "").lower() == "websocket":
            return Reply(takeover=lambda connection: self.websocket(connection, received))
        fixed = self.canned.get(received.path.split("?")[0])
        if isinstance(fixed, bytes):
            return Reply(200, {"content-type": "application/json"}, fixed)
        route = detect(received.headers.get("host", ""), received.path, received.headers, method=received.method)
        codec = chat_codec(route) if route is not None else None
        request = json.loads(received.body) if codec is not None else None
        aside = fixed or next((answer for marker, answer in self.asides if marker.encode() in received.body), None)
        completion = (aside or self.next_turn(request, received.path)) if codec is not None else None
        if codec is None or route is None or completion is None:
            return Reply(404)
        completion = self.with_usage(completion, codec, route.model, request)
        if with_body(route, request).streaming:
            headers = {"content-type": codec.stream_media_type}
            return Reply(200, headers, events=list(codec.encode_stream(completion, request)))
        return Reply(200, {"content-type": "application/json"}, codec.encode_response(completion, request))

    def websocket(self, connection: socket.socket, upgrade: Received) -> None:
        serve_websocket(
            connection,
            upgrade.head,
            lambda body: self.next_turn(body, upgrade.path),
            self.messages,
            lambda answer, request: self.with_usage(answer, RESPONSES_CODEC, None, request),
        )

    def with_usage(self, answer: Completion, codec: ChatCodec, model: str | None, request: Any) -> Completion:
        """`answer` with the usage the provider reports for `request` (its whole body, in `codec`'s format;
        `model` where only the URL names it), unless it declares its own."""
        if answer.usage is not None:
            return answer
        conversation = codec.decode_request(Parsed(request))
        conversation = replace(conversation, model=conversation.model or model)
        with self._cache_lock:  # one request at a time reads and fills the cache, as the provider's would
            return replace(answer, usage=self._cache.usage(codec.provider, conversation, answer))


def cli_env(root: Path, folder: str = "work", **variables: str) -> dict[str, str]:
    """A bare environment in a fresh `root/home` (and a `root/<folder>` to run in): nothing tells the CLI
    about the proxy but what llmproxy injects; the llmproxy CA is shared by the runs under one test."""
    (root / "home").mkdir(parents=True)
    (root / folder).mkdir()
    base = {"PATH": os.environ["PATH"], "HOME": str(root / "home"), "LANG": "C.UTF-8"}
    return base | {"LLMPROXY_HOME": str(root.parent / "llmproxy")} | variables


def record_scripted(
    cli: Cli, tmp_path: Path, host: str, env: dict[str, str], *also: str, options: Sequence[str] = ()
) -> tuple[subprocess.CompletedProcess[str], Path, ScriptedServer]:
    """`llmproxy record` around the CLI talking to `host`, mapped to a scripted HTTPS upstream (stopped
    afterwards): the run, the cassette, and the upstream with the bodies it received. The hosts in `also`
    (a package registry…) are mapped to it too, so nothing reaches the network: it answers them 404.
    `options`: more of `llmproxy record`'s (`--fail 529@1`…)."""
    upstream_ca = make_test_ca(tmp_path, (host, *also))
    upstream = ScriptedServer(cli.turns, cli.canned, tls=upstream_ca.server_context, asides=cli.asides)
    cassette = tmp_path / "cassettes" / f"{cli.name}.json"  # not where opencode looks for opencode.json
    mapping = [arg for name in (host, *also) for arg in ("--map", f"{name}={upstream.url}")]
    try:
        recorded = around(
            cli,
            tmp_path / "record",
            env,
            "record",
            "--cassette",
            str(cassette),
            *mapping,
            "--upstream-ca",
            str(upstream_ca.cert_path),
            *options,
        )
    finally:
        upstream.close()
    return recorded, cassette, upstream


def around(
    cli: Cli, root: Path, env: dict[str, str], *llmproxy: str, folder: str = "work", timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """`llmproxy ARGS… -- CLI …` run in `root/<folder>` (made if need be) with `env` (the CLI must be
    installed)."""
    assert cli.binary is not None
    (root / folder).mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *llmproxy, "--", cli.binary, *cli.argv],
        cwd=root / folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def mock_tool_loop(
    cli: Cli, root: Path, env: dict[str, str], expectations: dict[str, Any], conversation: int, tool: str
) -> subprocess.CompletedProcess[str]:
    """`llmproxy mock` around the CLI with `expectations`, whose entry number `conversation` is the two-turn
    tool loop: the CLI printed the final text, and the request log shows turn 1 then turn 2 answered, the
    second bringing back the tool's output (and the first not)."""
    root.mkdir(parents=True, exist_ok=True)
    path, log = root / "expectations.json", root / "mock.jsonl"
    path.write_text(json.dumps(expectations))
    done = around(cli, root, env, "mock", "--expectations", str(path), "--log", str(log))
    assert done.returncode == 0, done.stderr[-3000:]
    assert FINAL_TEXT in done.stdout
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    name = f"conversation {conversation}"
    answered = [entry for entry in entries if entry.get("answeredBy", "").startswith(name + " ")]
    assert [entry["answeredBy"] for entry in answered] == [f"{name} turn 1", f"{name} turn 2"]
    (result,) = answered[1]["toolResults"]
    assert result["name"] == tool
    assert "llmproxy-ok" in result["text"]
    assert "llmproxy-ok" not in json.dumps(answered[0].get("toolResults", []))
    return done


MISS_DIAGNOSTIC = "no recorded exchange matches; closest is exchange"
REFUSED = "llmproxy replay: refused: "  # logged the moment llmproxy refuses a request
# seconds from llmproxy's first refusal to the end of the run (docs/replay.md#misses-explain-themselves)
MISS_ENDS_WITHIN = 10.0


@dataclass(frozen=True)
class Miss:
    """A run meant to miss, and the seconds from llmproxy's first refusal to the run's end (None: nothing was
    refused). The refusal's moment is when its log line reached us, so the CLI's start-up is not counted; the
    end is llmproxy's exit, after the CLI's and its own shutdown: an upper bound on how long the CLI ran on."""

    run: subprocess.CompletedProcess[str]
    after_refusal: float | None


def replay_changed_prompt(
    cli: Cli, root: Path, env: dict[str, str], cassette: Path, *llmproxy: str, timeout: float = 60
) -> Miss:
    """A deliberate miss: the CLI replayed from `cassette` with another prompt than the recorded one, in
    `root/work`. With llmproxy's default miss answer it ends in seconds; a retried one (a 5xx) would take
    minutes, past `timeout`."""
    assert cli.binary is not None
    changed = [arg.replace("llmproxy-ok", "llmproxy-changed") for arg in cli.argv]
    (root / "work").mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "llmproxy", "replay", "--cassette", str(cassette), *llmproxy, "--", cli.binary]
    stdout: list[str] = []
    stderr: list[tuple[float, str]] = []  # each line with the moment it arrived
    with subprocess.Popen(
        [*argv, *changed], cwd=root / "work", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        readers = [
            threading.Thread(target=lambda: stdout.extend(child.stdout or ()), daemon=True),
            threading.Thread(
                target=lambda: stderr.extend((time.monotonic(), line) for line in child.stderr or ()), daemon=True
            ),
        ]
        for reader in readers:
            reader.start()
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
        ended = time.monotonic()
        for reader in readers:
            reader.join()
    refused = next((moment for moment, line in stderr if line.startswith(REFUSED)), None)
    run = subprocess.CompletedProcess(
        child.args, child.returncode, "".join(stdout), "".join(line for _, line in stderr)
    )
    return Miss(run, None if refused is None else ended - refused)


def cli_output_lines(run: subprocess.CompletedProcess[str]) -> list[str]:
    """What the CLI itself printed (llmproxy's own log and summary lines left out)."""
    lines = (run.stdout + run.stderr).splitlines()
    return [line for line in lines if not line.startswith(("llmproxy", "  miss:", "  unused:", "  $.", "  answered"))]


def assert_missed_fast(miss: Miss) -> None:
    """The CLI stopped on the miss within MISS_ENDS_WITHIN seconds of llmproxy's first refusal (not after
    minutes of retries), showing llmproxy's diagnostic in its own output."""
    run = miss.run
    assert run.returncode != 0, run.stderr[-3000:]
    assert any(MISS_DIAGNOSTIC in line for line in cli_output_lines(run)), (run.stdout + run.stderr)[-3000:]
    assert "missed" in run.stderr
    assert miss.after_refusal is not None, f"llmproxy logged no refusal:\n{run.stderr[-3000:]}"
    assert miss.after_refusal < MISS_ENDS_WITHIN, (
        f"the run ended {miss.after_refusal:.1f} s after llmproxy's first refusal:\n{run.stderr[-3000:]}"
    )


def run_session(cli: Cli, binary: str) -> Session:
    """Run the CLI's scripted session in a throwaway home and working directory, offline."""
    server = ScriptedServer(cli.turns, cli.canned, asides=cli.asides)
    try:
        words = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()
        version = next((word for word in words if word[:1].isdigit()), "unknown")
        with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as workdir:
            env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8"}
            # offline for sure: whatever the CLI sends beside the loopback server fails at once
            env |= {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"}
            if cli is CLAUDE:
                env |= {
                    "ANTHROPIC_BASE_URL": server.url,
                    "ANTHROPIC_API_KEY": "test-key-not-secret",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                }
            elif cli is GEMINI:
                env |= {
                    "CODE_ASSIST_ENDPOINT": server.url,
                    "GOOGLE_GENAI_USE_GCA": "true",
                    "GOOGLE_CLOUD_ACCESS_TOKEN": "test-token-not-secret",
                    "GEMINI_CLI_TRUST_WORKSPACE": "true",
                }
            elif cli is OPENCODE:
                write_opencode_config(Path(home), f"{server.url}/v1")
                env |= {"ANTHROPIC_API_KEY": "test-key-not-secret", "OPENCODE_DISABLE_MODELS_FETCH": "1"}
            elif cli.websocket:  # its own configuration file, as a user has it: only the base URL changed
                Path(home, ".codex").mkdir()
                Path(home, ".codex", "config.toml").write_text(f'openai_base_url = "{server.url}/v1"\n')
                env |= {"OPENAI_API_KEY": "test-key-not-secret"}
            else:
                Path(home, "config.toml").write_text(
                    'model = "gpt-5-codex"\nmodel_provider = "scripted"\n[model_providers.scripted]\n'
                    f'name = "scripted"\nbase_url = "{server.url}/v1"\nenv_key = "OPENAI_API_KEY"\n'
                    'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
                    "supports_websockets = false\n"
                )
                env |= {"CODEX_HOME": home, "OPENAI_API_KEY": "test-key-not-secret"}
            process = subprocess.run(
                [binary, *cli.argv], cwd=workdir, env=env, capture_output=True, text=True, timeout=180
            )
        return Session(version, process, list(server.bodies), list(server.messages))
    finally:
        server.close()
