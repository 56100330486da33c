import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from llmproxy import __version__
from llmproxy.ca import ensure_ca
from llmproxy.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"llmproxy, version {__version__}\n"


def test_help_names_the_tool() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "Record, replay, mock" in result.output


def test_cli_import_does_not_load_mitmproxy() -> None:
    """The CLI must start fast: mitmproxy is imported only by commands that run the proxy."""
    code = "import sys, llmproxy.cli; print('mitmproxy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_core_never_imports_mitmproxy() -> None:
    """Importing every core module leaves mitmproxy unloaded (ruff's TID251 guards the source too)."""
    code = (
        "import pkgutil, importlib, sys, llmproxy\n"
        "for m in pkgutil.walk_packages(llmproxy.__path__, 'llmproxy.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('mitmproxy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_help_lists_each_command_as_its_own_help_would() -> None:
    """`llmproxy --help` lists the commands from a table, without importing them: what it prints must be
    what click prints from the commands themselves, at any terminal width."""
    import importlib

    import click

    from llmproxy.cli import COMMANDS

    eager = click.Group("main", help=main.help, params=main.params, context_settings=main.context_settings)
    for name, (module, attribute, _) in COMMANDS.items():
        eager.add_command(getattr(importlib.import_module(module), attribute), name)
    for width in (50, 80, 120):
        lazy_help = CliRunner().invoke(main, ["--help"], terminal_width=width, prog_name="llmproxy").output
        eager_help = CliRunner().invoke(eager, ["--help"], terminal_width=width, prog_name="llmproxy").output
        assert lazy_help == eager_help


def test_help_imports_no_command() -> None:
    code = (
        "import sys\nfrom llmproxy.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('llmproxy.') and m != 'llmproxy.cli'), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "[]"


PLAIN_REPLAY = """
import sys
from llmproxy.cli import main
try:
    main(["replay", "--cassette", sys.argv[1], "--", "true"])
except SystemExit as exit:
    assert not exit.code, exit.code
heavy = sys.argv[2:]
print(" ".join(sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))))
"""

# What a strict replay does not need to start: the control API's endpoints (made on its first request), the
# mock's engine (an expectation added over that API makes it), the meter's prices, the certificates' library
# (the CA's key is read on the first tunnel), the dashboard's terminal and mitmproxy.
HEAVY = (
    "llmproxy.control.api",
    "llmproxy.mock.engine",
    "llmproxy.mock.spec",
    "llmproxy.meter",
    "llmproxy.analysis",
    "genai_prices",
    "jsonschema",
    "cryptography",
    "rich",
    "mitmproxy",
)


@pytest.mark.slow
def test_a_plain_replay_starts_without_what_it_does_not_use(tmp_path: Path) -> None:
    ensure_ca(tmp_path / "ca")  # made here: making one is the certificates' library's work
    code = [sys.executable, "-c", PLAIN_REPLAY, str(ROOT / "cassettes" / "quickstart.json"), *HEAVY]
    environment = {**os.environ, "LLMPROXY_HOME": str(tmp_path / "ca")}
    out = subprocess.run(code, capture_output=True, text=True, check=True, env=environment, cwd=tmp_path)
    assert "replayed 0 requests" in out.stderr
    assert out.stdout.split() == []


def test_explain_chain_prints_each_modes_chain_in_order_and_starts_nothing(tmp_path: Path) -> None:
    """`--explain-chain` on record, replay and mock: the declared slots in order, each with what fills it in
    that mode; no proxy starts, no cassette is created."""
    expectations = tmp_path / "expectations.json"
    expectations.write_text('{"expectations": [{"respond": {"text": "hi"}}]}')
    recorded = tmp_path / "new.json"
    fills = {
        "record": (["record", "--cassette", str(recorded)], {"record": "to ", "upstream": "goes to the network"}),
        "replay": (
            ["replay", "--cassette", "cassettes/quickstart.json"],
            {"replay": "cassettes/quickstart.json", "upstream": "closed"},
        ),
        "mock": (
            ["mock", "--expectations", str(expectations), "--fail", "529@0.3"],
            {"mock": str(expectations), "intercept": "(--fail 529@0.3)", "upstream": "closed"},
        ),
    }
    for mode, (arguments, filled) in fills.items():
        result = CliRunner().invoke(main, [*arguments, "--explain-chain"])
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        sides = [lines.index("request side, in order:"), lines.index("response side, in order:")]
        request_slots = [line.split(":")[0].strip() for line in lines[sides[0] + 1 : sides[1]]]
        response_slots = [line.split(":")[0].strip() for line in lines[sides[1] + 1 :]]
        assert request_slots == ["intercept", "mock", "replay", "background", "upstream"], mode
        assert response_slots == ["intercept", "record", "meter", "journal"], mode
        said = {line.split(":")[0].strip(): line.partition(":")[2] for line in lines[sides[1] + 1 :]}
        said |= {line.split(":")[0].strip(): line.partition(":")[2] for line in lines[sides[0] + 1 : sides[1]]}
        for slot, text in filled.items():
            assert text in said[slot], (mode, slot, said[slot])
    assert not recorded.exists()
