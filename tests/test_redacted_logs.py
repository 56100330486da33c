"""No secret in a log line: llmproxy's records are redacted when they are made (docs/security.md#what-is-printed)."""

import logging

import pytest

from llmproxy.cassette import redacted_logs
from llmproxy.log_lines import LogLine
from tests.secret_corpus import QUERIES, SHAPES


@pytest.fixture(autouse=True)
def installed() -> None:
    redacted_logs.install()


def test_messages_arguments_and_tracebacks_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    key, token = SHAPES["google"], QUERIES["access_token"]
    url = f"https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key={key}&access_token={token}"
    logger = logging.getLogger("llmproxy.some.module")
    with caplog.at_level(logging.INFO):
        logger.warning("could not answer %s", url)
        try:
            raise ValueError(f"upstream refused {url}")
        except ValueError:
            logging.getLogger("llmproxy_addons.door").exception("llmproxy mock could not answer %s", url)
    text = caplog.text + "".join(record.exc_text or "" for record in caplog.records)
    assert key not in text
    assert token not in text
    assert "g:generateContent?key=<redacted:" in text
    assert "ValueError: upstream refused" in text


def test_other_loggers_are_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("someone.else").warning("key %s", SHAPES["github"])
    assert SHAPES["github"] in caplog.text


def test_install_is_idempotent() -> None:
    factory = logging.getLogRecordFactory()
    redacted_logs.install()
    assert logging.getLogRecordFactory() is factory


def test_a_failure_under_the_cli_is_one_line_that_says_what(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's log line rebuilds a record with `logging.makeLogRecord`, which makes it nameless first: the
    redacting factory must take that, or logging reports its own error in place of the line."""
    handler = logging.StreamHandler()
    handler.setFormatter(LogLine("llmproxy replay", debug=False))
    logger = logging.getLogger("llmproxy.some.module")
    logger.addHandler(handler)
    try:
        try:
            raise ValueError(f"upstream refused key {SHAPES['google']}")
        except ValueError:
            logger.exception("could not answer")
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "Logging error" not in err
    assert err.startswith("llmproxy replay: could not answer: ValueError: upstream refused key <redacted:")
    assert len(err.splitlines()) == 1
