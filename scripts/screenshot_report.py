"""Write docs/report-screenshot.png, the README's picture of the HTML report: `llmproxy report` over the
committed cassettes, opened in headless Chromium (Debian's `chromium`), its first screen captured.

    .venv/bin/python scripts/screenshot_report.py
"""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llmproxy.analysis.render import render  # noqa: E402
from tests.analysis.browser import opened  # noqa: E402
from tests.analysis.reports import report_of  # noqa: E402


def main() -> int:
    report = report_of("cassettes")
    with tempfile.TemporaryDirectory() as scratch:
        page_file = Path(scratch) / "report.html"
        page_file.write_text(render(report, "html"), encoding="utf-8")
        with opened(page_file, width=1100) as (page, _):
            target = ROOT / "docs" / "report-screenshot.png"
            page.screenshot(path=str(target), clip={"x": 0, "y": 0, "width": 1100, "height": 1000})
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
