"""`llmproxy mcp-tap -- CMD…`: between an agent and the stdio MCP server CMD, recording each of its exchanges
or answering them from a cassette without starting it (docs/mcp.md). Inside `llmproxy record|replay -- agent`
it follows the run: its cassette, its mode (a replay's `new_episodes` too: what the cassette lacks, the
server answers and the run records). Only JSON-RPC goes to stdout; what llmproxy says goes to stderr."""

import os
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from llmproxy.cli.reporting import reported
from llmproxy.cli.serving import configure_logging
from llmproxy.environment import CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE
from llmproxy.errors import UsageError
from llmproxy.options import option

if TYPE_CHECKING:
    from llmproxy.control.stdio_tap_client import RunRecorder
    from llmproxy.mcp.tap import Answerer, Recorder

_MODES = ("record", "replay")


@click.command(name="mcp-tap")
@option(
    "--cassette",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record to or replay this cassette (outside a run; needs --mode).",
)
@option(
    "--mode",
    type=click.Choice(_MODES),
    help="With --cassette: record (start CMD) or replay (answer from the cassette, CMD not started).",
)
@option(
    "--name",
    metavar="NAME",
    help="The name its exchanges are recorded under, stdio://NAME/ (default: "
    "the server's program, or what npx/node/uvx… launch).",
)
@option("-v", "--verbose", count=True, help="What the tap does, on stderr.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@reported("mcp-tap")
def mcp_tap(cassette: Path | None, mode: str | None, name: str | None, verbose: int, command: tuple[str, ...]) -> int:
    """Record or replay a stdio MCP server: `llmproxy mcp-tap -- npx @modelcontextprotocol/server-everything`.

    The command an agent's MCP configuration runs in the server's place. Inside `llmproxy record -- agent` it
    starts the server and records each request and answer into the run's cassette; inside `llmproxy replay --
    agent` it answers from it and starts nothing; in `llmproxy replay --record-mode new_episodes` it answers
    what the cassette holds and starts the server for what it lacks, recording its answers. Outside a run:
    `--cassette FILE --mode record|replay`.
    """
    import sys

    from llmproxy.mcp.stdio_exchange import server_name, valid_name

    configure_logging("mcp-tap", verbose)
    if not command:
        raise UsageError("mcp-tap: give the server's command after --: llmproxy mcp-tap -- npx SERVER")
    if name is not None and not valid_name(name):
        raise UsageError(f"--name {name!r}: letters, digits, '.', '_' and '-' only")
    server = name or server_name(command)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # what anything prints goes to stderr: stdout is the client's
    if cassette is not None:
        if mode is None:
            raise UsageError("--cassette needs --mode record or --mode replay")
        return _standalone(cassette, mode, server, list(command), stdin, stdout)
    if mode is not None:
        raise UsageError("--mode goes with --cassette: inside a run, the run's mode decides")
    return _in_run(server, list(command), stdin, stdout)


def _standalone(cassette: Path, mode: str, server: str, command: list[str], stdin: IO[bytes], stdout: IO[bytes]) -> int:
    from llmproxy.mcp.tap_targets import CassetteAnswers, cassette_writer

    if mode == "replay":
        if not cassette.exists():
            raise UsageError(f"--cassette {cassette}: no such cassette to replay")
        return _replay(server, CassetteAnswers(cassette, server), stdin, stdout)
    writer = cassette_writer(cassette)
    try:
        status = _record(server, command, writer, stdin, stdout)
    finally:
        click.echo(f"llmproxy mcp-tap: {server}: {writer.close()}", err=True)
    return status


def _in_run(server: str, command: list[str], stdin: IO[bytes], stdout: IO[bytes]) -> int:
    from llmproxy.control.client import Client, ControlError
    from llmproxy.control.stdio_tap_client import RunAnswers, RunRecorder

    if not os.environ.get(CONTROL_URL_VARIABLE) or not os.environ.get(CONTROL_TOKEN_VARIABLE):
        raise UsageError(
            "mcp-tap: not inside llmproxy record|replay (no $LLMPROXY_CONTROL_URL): give --cassette and --mode"
        )
    client = Client.from_environment()
    try:
        mode = client.status().mode
    except ControlError as error:
        raise UsageError(f"mcp-tap: the run's control API: {error}") from None
    if mode == "record":
        recorder = RunRecorder(client)
        status = _record(server, command, recorder, stdin, stdout)
        click.echo(f"llmproxy mcp-tap: {server}: handed {recorder.handed} exchanges to the run's recording", err=True)
        return status
    if mode == "replay":
        return _replay(server, RunAnswers(client, server), stdin, stdout)
    if mode == "replay+record":  # new_episodes: what the replay lacks, the server answers and the run records
        answers = RunAnswers(client, server, records_misses=True)
        return _fallback(server, command, answers, RunRecorder(client), stdin, stdout)
    if mode == "mock":  # the model is scripted; the agent's tools still work, as they would without the tap
        click.echo(f"llmproxy mcp-tap: {server}: the run mocks: passing through, nothing recorded", err=True)
        return _record(server, command, _Nowhere(), stdin, stdout)
    raise UsageError(f"mcp-tap: the run is {mode}: the tap records in llmproxy record and replays in llmproxy replay")


def _fallback(
    server: str, command: list[str], answers: "Answerer", recorder: "RunRecorder", stdin: IO[bytes], stdout: IO[bytes]
) -> int:
    from llmproxy.mcp.tap import FallbackTap

    tap = FallbackTap(server, command, answers, recorder, stdout)
    try:
        status = tap.run(stdin)
    except OSError as error:
        raise UsageError(f"mcp-tap: cannot start {command[0]}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        tap.recording.stop()
        raise
    replayed = tap.replaying.answered
    recorded = f", handed {recorder.handed} new exchanges to the run's recording" if tap.started else ""
    click.echo(f"llmproxy mcp-tap: {server}: replayed {replayed} requests{recorded}", err=True)
    return 0 if status == 0 else 1


class _Nowhere:
    """A recorder that keeps nothing: the tap inside `llmproxy mock`."""

    def add(self, exchange: object) -> None:
        pass


def _record(server: str, command: list[str], recorder: "Recorder", stdin: IO[bytes], stdout: IO[bytes]) -> int:
    from llmproxy.mcp.tap import RecordingTap

    tap = RecordingTap(server, command, recorder, stdout)
    try:
        status = tap.run(stdin)
    except OSError as error:
        raise UsageError(f"mcp-tap: cannot start {command[0]}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        tap.stop()
        raise
    return 0 if status == 0 else 1


def _replay(server: str, answers: "Answerer", stdin: IO[bytes], stdout: IO[bytes]) -> int:
    from llmproxy.mcp.tap import ReplayingTap

    tap = ReplayingTap(server, answers, stdout)
    tap.run(stdin)
    missed = f", {tap.missed} not recorded" if tap.missed else ""
    click.echo(f"llmproxy mcp-tap: {server}: replayed {tap.answered} requests{missed}", err=True)
    return 1 if tap.missed else 0
