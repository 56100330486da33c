"""What a log record looks like on stderr: one line in llmproxy's voice, named after the command that runs —
`llmproxy replay: refused: POST https://…`, `llmproxy mock: budget spent: …` — with an exception's last line
(`…: ValueError: why`) and never its traceback or the logger's name, which are internals. `--debug` adds
them back: the level, the logger (`llmproxy.chain.chain`) and the traceback.

The CLI sets it up for its process; the cassette writer process, which logs for the same command, takes the
same settings (`in_use`).
"""

import logging
import sys

_PLAIN = "%(message)s"
_DEBUG = "%(levelname)s %(name)s: %(message)s"


class LogLine(logging.Formatter):
    """`COMMAND: message`; with `debug`, `COMMAND: LEVEL logger: message` and the traceback."""

    def __init__(self, command: str, debug: bool) -> None:
        prefix = command.replace("%", "%%")
        super().__init__(f"{prefix}: {_DEBUG if debug else _PLAIN}")
        self.command = command
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        if self.debug:
            return super().format(record)
        if record.exc_info and record.exc_info[1] is not None:
            last = f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        elif record.exc_text:  # already formatted (and redacted: `redacted_logs`): its last line says what
            last = record.exc_text.rstrip().splitlines()[-1]
        else:
            return super().format(record)
        record = logging.makeLogRecord(record.__dict__)
        record.msg, record.args = f"{record.getMessage()}: {last}", None
        record.exc_info, record.exc_text = None, None
        return super().format(record)


def to_stderr(command: str, level: int, debug: bool) -> None:
    """Log records of `level` and above to stderr as `LogLine`s (the root logger's one handler)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogLine(command, debug))
    logging.basicConfig(level=level, handlers=[handler])


def in_use() -> tuple[str, bool]:
    """The command and `debug` of the lines this process writes (`to_stderr`), for a process that logs for it."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler.formatter, LogLine):
            return handler.formatter.command, handler.formatter.debug
    return "llmproxy", False
