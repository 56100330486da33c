"""How a command ends: its exit status (the README's table of exit statuses: each `LlmproxyError` carries
its own, `errors.py`), and for anything that went wrong one line on stderr that says what — never a traceback
unless `--debug` asks for it. Usage errors are said by `usage.py`, in the same voice."""

import functools
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any

import click

from llmproxy.cassette import redacted_logs
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
