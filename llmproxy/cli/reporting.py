"""How a command ends: its exit status, and for anything that went wrong one line on stderr that says what —
never a traceback unless `--debug` asks for it.

Exit statuses, the same for every command that runs the proxy:

* the wrapped command's own status (128 + N when a signal N ended it); 130 or 143 when Ctrl-C or SIGTERM
  stopped llmproxy itself;
* 2: the command line cannot work as written (click's own usage errors, a malformed `--map`, …);
* 1: llmproxy could not do what was asked (a file missing or unreadable, a port in use, a full or read-only
  disk, a replay miss);
* 127 / 126: the command to run around does not exist / cannot be executed, as a shell says.
"""

import functools
import logging
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any

import click

from llmproxy import redacted_logs
from llmproxy.errors import LlmproxyError

type Command = Callable[..., int]


class Stopped(BaseException):
    """SIGTERM (or a second Ctrl-C) while llmproxy was starting or stopping: unwind, then exit 128 + N."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def reported(name: str) -> Callable[[Command], Callable[..., None]]:
    """Wrap a command's body (which returns its exit status) so that it ends as the module docstring says;
    its `debug` keyword (the `--debug` option) asks for tracebacks."""

    def decorate(body: Command) -> Callable[..., None]:
        @functools.wraps(body)
        def run(*args: Any, **kwargs: Any) -> None:
            sys.exit(run_reported(name, bool(kwargs.get("debug")), lambda: body(*args, **kwargs)))

        return run

    return decorate


def run_reported(name: str, debug: bool, body: Callable[[], int]) -> int:
    try:
        return body()
    except click.ClickException:  # a value the command line cannot take, found late: said as click says them
        raise
    except LlmproxyError as error:
        return _fail(name, debug, str(error), error.exit_status)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Stopped as stopped:
        return 128 + stopped.signum
    except OSError as error:  # the environment: a disk, a folder, a descriptor
        where = f"{error.filename}: " if error.filename else ""
        return _fail(name, debug, f"{where}{error.strerror or error}", 1)
    except Exception as error:  # a bug: still one line, unless --debug
        hint = "" if debug else " (--debug shows the traceback)"
        return _fail(name, debug, f"internal error: {type(error).__name__}: {error}{hint}", 1)


def _fail(name: str, debug: bool, message: str, status: int) -> int:
    """The error line (and with `debug` the traceback), redacted: an error may quote a URL or a header."""
    if debug:
        click.echo(redacted_logs.redact(traceback.format_exc().rstrip("\n")), err=True)
    click.echo(redacted_logs.redact(f"llmproxy {name}: error: {message}"), err=True)
    return status


class OneLineFormatter(logging.Formatter):
    """Log records with an exception as one line (``…: ValueError: why``); the traceback only with `debug`."""

    def __init__(self, fmt: str, debug: bool) -> None:
        super().__init__(fmt)
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
