"""`llmproxy explain PATH…`: the recorded agent run as a timeline, a call graph (JSON) or a Mermaid chart."""

from pathlib import Path
from typing import Any

import click

from llmproxy.cli.output import json_option
from llmproxy.cli.report import json_format, selection_options, unreadable_exits, write_output
from llmproxy.options import option


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@selection_options
@option(
    "--format",
    "format_",
    type=click.Choice(["timeline", "json", "mermaid"]),
    help="timeline (default): the calls and the conversation; json: summary and call graph; mermaid: a flowchart",
)
@json_option
@option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="write here (default: stdout)")
def explain(paths: tuple[Path, ...], format_: str | None, as_json: bool, output: Path | None, **selection: Any) -> None:
    """Explain a recorded agent run: its calls in order and its richest conversation (the request with the
    most history) as a call graph — a node per message and per tool call; edges NEXT, INVOKES, RESULT.

    --json is --format json. Exits 2 when an input cannot be read, 1 when it holds no chat call to explain
    (in every format: the timeline still says what it found).
    """
    from llmproxy.analysis.explain import explain_selected, timeline
    from llmproxy.analysis.graph import mermaid
    from llmproxy.analysis.tool_servers import tool_row
    from llmproxy.cli.report import read_selected
    from llmproxy.outputs import dumps
    from llmproxy.outputs.explain import Explained

    fmt = json_format(format_, as_json) or "timeline"
    with unreadable_exits():
        recorded, selected = read_selected(paths, **selection)
    calls, coverage, explanation = explain_selected(recorded, selected)
    tools = recorded.tool_servers.ordered()
    if fmt == "timeline":
        write_output(timeline(calls, explanation, coverage.gaps(), tools), output)
    elif fmt == "json":
        rows = [tool_row(tally) for tally in tools]
        document = Explained(calls=len(calls), gaps=coverage.gaps(), explanation=explanation, mcpTools=rows)
        write_output(dumps(document) + "\n", output)
    elif explanation is not None:
        for gap in coverage.gaps():  # beside the chart, which has no place for it
            click.echo(f"llmproxy explain: {gap}", err=True)
        write_output(mermaid(explanation.callGraph), output)
    if explanation is None:
        # an agent's log or a mock log keeps the answers, not the requests a call graph is drawn from
        why = "no chat call" if not calls else "no request kept (a log keeps only answers) or none that decodes"
        click.echo(f"llmproxy explain: {why} to explain", err=True)
        raise SystemExit(1)
