"""The worked example of docs/a2a.md — the file itself, taken from the page."""

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "a2a.md").read_text()
FILES = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", PAGE, re.DOTALL)]
WORKED: dict[str, Any] = FILES[0]
PYTHON = re.findall(r"```python\n(.*?)```", PAGE, re.DOTALL)


def write_worked(folder: Path) -> Path:
    path = folder / "agents.json"
    path.write_text(json.dumps(WORKED))
    return path
