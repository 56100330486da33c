"""`llmproxy replay`: serve recorded exchanges, strictly and offline by default."""

import sys
from enum import StrEnum
from pathlib import Path

import click

from llmproxy.cassette import jsonpath
from llmproxy.cassette.files import journal_path
from llmproxy.cassette.presets import PRESETS
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted, ReplayIndex
from llmproxy.cassette.store import load_cassette
from llmproxy.cassette.writer_process import WriterProcess
from llmproxy.cli.serving import ServeOptions, configure_logging, proxy_options, serve
from llmproxy.errors import LlmproxyError
from llmproxy.record_scope import RecordScope


class RecordMode(StrEnum):
    """vcrpy's record modes."""

    NONE = "none"  # replay only; never touch the network
    ONCE = "once"  # record if the cassette does not exist, else none
    NEW_EPISODES = "new_episodes"  # replay hits; forward misses and append them
    ALL = "all"  # forward everything and record it (appended)
    REWRITE = "rewrite"  # delete the cassette, then record


def _timing(value: str) -> float | None:
    if value == "recorded":
        return 1.0
    if value == "instant":
        return None
    try:
        scale = float(value)
    except ValueError:
        raise click.BadParameter(f"expected recorded, instant or a number, got {value!r}") from None
    if scale < 0:
        raise click.BadParameter("a timing scale cannot be negative")
    return scale


def _ignore(values: tuple[str, ...]) -> tuple[jsonpath.Path, ...]:
    try:
        return tuple(jsonpath.parse(value) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--ignore") from None


@click.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "--cassette",
    "cassettes",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Cassette to serve (repeatable; new recordings go to the first).",
)
@click.option(
    "--record-mode",
    type=click.Choice([mode.value for mode in RecordMode]),
    default=RecordMode.NONE.value,
    show_default=True,
    help="none: offline, strict; once; new_episodes; all; rewrite (vcrpy's meanings).",
)
@click.option("--allow-host", multiple=True, metavar="HOST", help="Let traffic to HOST reach the network.")
@click.option(
    "--preset",
    type=click.Choice([*PRESETS, "none"]),
    help="Ignore what this client varies between runs (default: chosen from the User-Agent).",
)
@click.option("--ignore", multiple=True, metavar="JSONPATH", help="Ignore this body field when matching ($.a.b[0]).")
@click.option(
    "--on-exhausted",
    type=click.Choice([mode.value for mode in OnExhausted]),
    default=OnExhausted.ERROR.value,
    show_default=True,
    help="When identical requests outnumber their recordings: serve the last again, or miss.",
)
@click.option("--miss-status", type=click.IntRange(100, 999), default=599, show_default=True)
@click.option(
    "--timing", default="recorded", show_default=True, help="recorded, instant, or a scale (0.5: twice as fast)."
)
@click.option("--fail-on-unused", is_flag=True, help="Exit non-zero if some recorded exchanges were never served.")
@click.option("--redact-field", multiple=True, metavar="NAME", help="Also redact JSON fields named NAME. Repeatable.")
@proxy_options
def replay(
    cassettes: tuple[Path, ...],
    record_mode: str,
    allow_host: tuple[str, ...],
    preset: str | None,
    ignore: tuple[str, ...],
    on_exhausted: str,
    miss_status: int,
    timing: str,
    fail_on_unused: bool,
    redact_field: tuple[str, ...],
    **serving: object,
) -> None:
    """Serve recorded LLM exchanges: `llmproxy replay --cassette c.json -- CMD ARGS…`.

    In the default mode (`none`) nothing reaches the network: a request with no recording gets
    --miss-status and a diagnostic naming the closest recording and what differs, and llmproxy exits
    non-zero. Streams keep their recorded timing unless --timing says otherwise.
    """
    from addons.recorder import Recorder
    from addons.replayer import Replayer, ReplaySettings
    from addons.stream_relay import StreamRelay

    options = ServeOptions(**serving)  # type: ignore[arg-type]
    configure_logging(options.verbose)
    mode = RecordMode(record_mode)
    scale = _timing(timing)
    match = MatchOptions(preset, _ignore(ignore), OnExhausted(on_exhausted))
    redactor = Redactor(frozenset(redact_field))
    first = cassettes[0]
    if mode is RecordMode.ONCE:
        mode = RecordMode.NONE if first.exists() or journal_path(first).exists() else RecordMode.ALL
    if mode is RecordMode.REWRITE:
        first.unlink(missing_ok=True)
        journal_path(first).unlink(missing_ok=True)
        mode = RecordMode.ALL

    addons: list[object] = []
    replayer = None
    try:
        if mode in (RecordMode.NONE, RecordMode.NEW_EPISODES):
            exchanges = [e for path in cassettes if _exists(path) for e in load_cassette(path).exchanges]
            if mode is RecordMode.NONE:
                missing = [str(path) for path in cassettes if not _exists(path)]
                if missing:
                    raise LlmproxyError(
                        f"no such cassette: {', '.join(missing)} (record one, or use --record-mode once)"
                    )
            relay = StreamRelay()
            settings = ReplaySettings(
                miss_status, scale, mode is RecordMode.NEW_EPISODES, frozenset(h.lower() for h in allow_host)
            )
            replayer = Replayer(ReplayIndex(exchanges, match), settings, redactor, relay)
            addons += [relay, replayer]
        writer = WriterProcess.open(first, redactor) if mode is not RecordMode.NONE else None
    except LlmproxyError as error:
        raise click.ClickException(str(error)) from error
    if writer is not None:
        addons.append(Recorder(RecordScope.of(), writer))

    def finish() -> str:
        lines = []
        if replayer is not None:
            log = replayer.log
            unused = replayer.index.unused()
            served = ", ".join(map(str, cassettes))
            lines.append(f"replayed {log.hits} requests from {served}: {len(log.misses)} missed, {len(unused)} unused")
            lines += [f"  miss: {miss.explain().splitlines()[0]}" for miss in log.misses]
            lines += [f"  unused: exchange {e.id}: {e.request.method} {e.request.url}" for e in unused]
        if writer is not None:
            lines.append(str(writer.close()))
        return "\n".join(lines)

    describe = f"{mode.value} mode, {'replaying' if replayer else 'recording to'} {', '.join(map(str, cassettes))}"
    offline = {"upstream_cert": False} if mode is RecordMode.NONE else {}
    try:
        status = serve("replay", options, addons, describe, finish, offline)
    except LlmproxyError as error:
        if writer is not None:
            writer.close()
        raise click.ClickException(str(error)) from error
    failed = replayer is not None and (
        (replayer.log.misses and not replayer.settings.forward_misses) or (fail_on_unused and replayer.index.unused())
    )
    if status == 0 and failed:
        status = 1
    sys.exit(status)


def _exists(path: Path) -> bool:
    return path.exists() or journal_path(path).exists()
