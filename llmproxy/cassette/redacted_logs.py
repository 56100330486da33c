"""No secret in a log line: every record of llmproxy's, its addons' and mitmproxy's loggers is redacted with
the secret catalogue when it is made, whatever handler writes it afterwards (stderr, a file, a test's
capture). A request URL with ``?key=…`` in a warning, an exception whose message holds a header: the
message, its arguments and its traceback text all pass through `Redactor.text`.

Installed by the CLI, by the cassette writer process and by every in-process session: one record factory
for the whole process, added once.
"""

import logging
import threading
import traceback
from typing import Any

from llmproxy.cassette.redact import Redactor

LOGGERS = ("llmproxy", "mitmproxy")  # "llmproxy" covers the adapters' "llmproxy_addons" too
_REDACTOR = Redactor()
_lock = threading.Lock()
_installed = False


def redact(text: str) -> str:
    """Text for stderr: every secret of the catalogue replaced by its placeholder."""
    return _REDACTOR.text(text)


def install() -> None:
    """Redact the records of llmproxy's loggers (and its children's) from now on. Idempotent."""
    global _installed
    with _lock:
        if _installed:
            return
        make = logging.getLogRecordFactory()

        def redacted(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make(*args, **kwargs)
            # `logging.makeLogRecord` (the CLI's log line uses it) makes a record with no name, then fills it in
            if isinstance(record.name, str) and record.name.startswith(LOGGERS):
                _redact(record)
            return record

        logging.setLogRecordFactory(redacted)
        _installed = True


def _redact(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a malformed record: let logging report it as it would
        return
    safe = redact(message)
    if safe != message:
        record.msg, record.args = safe, None
    if record.exc_info and record.exc_info[0] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text = redact(text)
        record.exc_info = None
