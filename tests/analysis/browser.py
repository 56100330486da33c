"""A real headless Chromium (Debian's `chromium`, installed by .ci/run) driven by Playwright, with no browser
download: the HTML report is opened as a user opens it, from a file, and the dashboard from its URL; each is
read from the DOM."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    """The browser's path; skips the test without one on a developer's machine, fails it in CI."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: .ci/run installs Debian's chromium")
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    return found


@contextmanager
def opened(page_file: Path, width: int = 1280) -> Iterator[tuple[Page, list[str]]]:
    """The page loaded in a fresh profile, and every URL it requested."""
    with browsing(page_file.resolve().as_uri(), width) as found:
        yield found


@contextmanager
def browsing(url: str, width: int = 1280) -> Iterator[tuple[Page, list[str]]]:
    """`url` loaded in a fresh profile, and every URL the page requested (redirects and the event stream
    included), as it requested them."""
    executable = chromium()
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=executable, headless=True, args=FLAGS, viewport={"width": width, "height": 900}
        )
        try:
            page = context.new_page()
            requested: list[str] = []
            page.on("request", lambda request: requested.append(request.url))
            page.goto(url)
            yield page, requested
        finally:
            context.close()
