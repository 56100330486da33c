"""A command line that cannot work as written ends every command with one line in llmproxy's voice and exit
status 2: what is wrong, and for a misspelt option or command the closest real one(s)."""

import click
import pytest
from click.testing import CliRunner

from llmproxy.cli import main
from tests.cli_commands import commands

COMMAND_LINES = list(commands())


def run(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(arguments))
    return result.exit_code, result.output


@pytest.mark.parametrize(("words", "command"), COMMAND_LINES, ids=[" ".join(words) for words, _ in COMMAND_LINES])
def test_every_option_misspelt_gets_itself_suggested_first(words: list[str], command: click.Command) -> None:
    """Each long option of each command with a letter left out: one line, the option first among at most two
    suggestions — never options that only share the dashes."""
    options = [name for param in command.params if isinstance(param, click.Option) for name in param.opts]
    for option in [name for name in options if name.startswith("--") and len(name) >= 6]:
        typo = option[:4] + option[5:]
        code, output = run(*words, typo)
        said = f"llmproxy {' '.join(words)}: error: no such option {typo} (did you mean "
        assert code == 2, output
        assert output.startswith(said), output
        assert output.count("\n") == 1, output
        suggested = output.removeprefix(said).removesuffix("?)\n").split(" or ")
        assert suggested[0] == option, output
        assert len(suggested) <= 2, output


@pytest.mark.parametrize("command", ["record", "replay", "mock"])
def test_casette_suggests_only_cassette(command: str) -> None:
    assert run(command, "--casette", "c.json") == (
        2,
        f"llmproxy {command}: error: no such option --casette (did you mean --cassette?)\n",
    )


def test_a_misspelt_command_gets_the_closest_one() -> None:
    assert run("replya") == (2, "llmproxy: error: no such command 'replya' (did you mean replay?)\n")
    assert run("verify", "cots") == (2, "llmproxy verify: error: no such command 'cots' (did you mean cost?)\n")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["replay"], "llmproxy replay: error: missing option '--cassette' (see llmproxy replay --help)"),
        (
            ["verify", "cost", "c.json", "--max-usd", "x"],
            "llmproxy verify cost: error: invalid value for --max-usd: 'x' is not an amount of dollars "
            "(see llmproxy verify cost --help)",
        ),
        (
            ["replay", "--cassette", "c.json", "--timing", "abc"],
            "llmproxy replay: error: invalid value for --timing: expected recorded, instant or a number, got 'abc' "
            "(see llmproxy replay --help)",
        ),
        (
            ["replay", "--cassette", "c.json", "--ignore", "messages"],
            "llmproxy replay: error: invalid value for --ignore: a JSON path starts with '$': 'messages' "
            "(see llmproxy replay --help)",
        ),
        (
            ["report", "cassettes/quickstart.json", "--since", "yesterday"],
            "llmproxy report: error: invalid value for --since: 'yesterday' is not an ISO 8601 date or time "
            "(2026-05-01, 2026-05-01T12:00Z) (see llmproxy report --help)",
        ),
        (["mock", "--port", "x"], "llmproxy mock: error: invalid value for '--port': 'x' is not a valid integer range"),
    ],
    ids=["missing", "verify", "timing", "ignore", "since", "mock"],
)
def test_usage_errors_are_one_line_naming_the_command(arguments: list[str], said: str) -> None:
    code, output = run(*arguments)
    assert code == 2
    assert output.startswith(said), output
    assert output.count("\n") == 1, output
    assert "Traceback" not in output
