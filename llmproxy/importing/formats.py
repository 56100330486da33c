"""Which tool wrote a file, from its first bytes, and its reader: a HAR file and a vcrpy JSON cassette are told
apart by their top-level key, a mitmproxy flow file by its tnetstring start (``123:``), anything else is read
as a vcrpy YAML cassette. Flow files are read by mitmproxy's own `io` module, which the core never imports:
the caller passes that reader in. A gzip-compressed file (LangChain's ``.yaml.gz`` cassettes) is a vcrpy
cassette."""

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import ijson  # type: ignore[import-untyped]

from llmproxy.importing.entries import Entry, UnreadableError
from llmproxy.importing.har import json_error, read_har
from llmproxy.importing.vcrpy import read_vcrpy

type FlowReader = Callable[[Path], Iterator[Entry]]

# what a folder is searched for; a file named on the command line is read whatever its name
PATTERNS = ("*.yaml", "*.yml", "*.yaml.gz", "*.yml.gz", "*.json", "*.har", "*.flow", "*.flows", "*.mitm", "*.dump")
_TNETSTRING = re.compile(rb"\d{1,12}:")
_GZIP = b"\x1f\x8b"


def read_entries(path: Path, read_flows: FlowReader) -> Iterator[Entry]:
    """Every entry of a file, in file order. Raises UnreadableError (or OSError) for a file that cannot be read
    as any of the formats."""
    with path.open("rb") as file:
        head = file.read(64 * 1024).lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise UnreadableError(f"{path}: empty file")
    if head.startswith(_GZIP):  # LangChain keeps its vcrpy cassettes as .yaml.gz
        yield from read_vcrpy(path, _gunzipped(path))
        return
    if _TNETSTRING.match(head):
        yield from read_flows(path)
    elif head[:1] == b"{":
        if _top_key(path) == "log":
            yield from read_har(path)
        else:
            yield from read_vcrpy(path, path.read_bytes())
    else:
        yield from read_vcrpy(path, path.read_bytes())


def _gunzipped(path: Path) -> bytes:
    try:
        return gzip.decompress(path.read_bytes())
    except (OSError, EOFError, zlib.error) as exc:
        raise UnreadableError(f"{path}: not a complete gzip file ({exc})") from None


def output_name(path: Path) -> str:
    """The name a file's own cassette gets (`--per-file`): ``test_chat.yaml.gz`` → ``test_chat.json``."""
    name = path.name.removesuffix(".gz")
    return f"{Path(name).stem}.json"


def _top_key(path: Path) -> str | None:
    """The first key of a JSON document's top-level object (HAR's is ``log``), read without reading it all."""
    try:
        with path.open("rb") as file:
            for prefix, event, value in ijson.parse(file):
                if prefix == "" and event == "map_key":
                    return str(value)
    except ijson.JSONError as exc:
        raise UnreadableError(f"{path}: not valid JSON ({json_error(exc)})") from None
    return None
