"""The four coding CLIs run once each through `llmproxy record` against the scripted local upstream, with
HOME in a temporary folder: the cassette and the session logs each CLI wrote there of the same run.

Shared by the agent-log end-to-end tests and by scripts/capture_agent_logs.py, which redacts what these runs
produce into the small fixtures under tests/fixtures/agent_logs/.
"""

from dataclasses import dataclass
from pathlib import Path

from tests.e2e.clis import CLAUDE, CODEX, GEMINI, OPENCODE, Cli, cli_env, record_scripted, write_opencode_config

ANTHROPIC_KEY = "sk-ant-api03-" + "a" * 86
OPENAI_KEY = "sk-proj-" + "Zx8cV6bN4mQ2wE0rT9yU7iO5pA3sD1fG" * 2
CODEX_HTTPS = (
    'model = "gpt-5-codex"\nmodel_provider = "openai-https"\n[model_providers.openai-https]\n'
    'name = "openai"\nbase_url = "https://api.openai.com/v1"\nenv_key = "OPENAI_API_KEY"\n'
    'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\nsupports_websockets = false\n'
)


@dataclass(frozen=True)
class AgentRun:
    agent: str  # claude | codex | gemini | opencode
    home: Path  # the HOME the CLI ran with: its logs are under it
    cassette: Path
    returncode: int
    stdout: str
    stderr: str


def run_agent(agent: str, tmp_path: Path) -> AgentRun:
    """One scripted tool loop of `agent`, recorded; its logs stay in the run's HOME."""
    cli, host, also, env = _setup(agent, tmp_path / "record")
    process, cassette, _ = record_scripted(cli, tmp_path, host, env, *also)
    return AgentRun(agent, tmp_path / "record" / "home", cassette, process.returncode, process.stdout, process.stderr)


def _setup(agent: str, root: Path) -> tuple[Cli, str, tuple[str, ...], dict[str, str]]:
    if agent == "claude":
        env = cli_env(root, ANTHROPIC_API_KEY=ANTHROPIC_KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        return CLAUDE, "api.anthropic.com", (), env
    if agent == "codex":
        env = cli_env(root, CODEX_API_KEY=OPENAI_KEY, OPENAI_API_KEY=OPENAI_KEY)
        (root / "home" / ".codex").mkdir()
        (root / "home" / ".codex" / "config.toml").write_text(CODEX_HTTPS)
        return CODEX, "api.openai.com", ("chatgpt.com", "ab.chatgpt.com", "api.github.com"), env
    if agent == "gemini":
        login = {"GOOGLE_GENAI_USE_GCA": "true", "GOOGLE_CLOUD_ACCESS_TOKEN": "test-token-not-secret"}
        env = cli_env(root, **login, GEMINI_CLI_TRUST_WORKSPACE="true")
        return GEMINI, "cloudcode-pa.googleapis.com", (), env
    if agent == "opencode":
        env = cli_env(root, ANTHROPIC_API_KEY=ANTHROPIC_KEY, OPENCODE_DISABLE_MODELS_FETCH="1")
        write_opencode_config(root / "home")
        return OPENCODE, "api.anthropic.com", ("registry.npmjs.org",), env
    raise ValueError(agent)
