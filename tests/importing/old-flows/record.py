"""How the flow files here were made: the SDK session of tests/importing/sdk_session.py through an older
mitmdump, as a plain proxy in front of the stand-in API the import tests use (Anthropic's answers gzip-encoded).

    python tests/importing/old-flows/record.py MITMDUMP OUT.mitm

MITMDUMP is the `mitmdump` of a scratch virtualenv holding the older mitmproxy (README.md); this runs with
the project's own venv, from the repository's root. Prints the answers the SDKs got.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())

from tests.e2e.clis import ScriptedServer
from tests.importing.conftest import free_port, gzipping, running_mitmdump
from tests.importing.sdk_session import session
from tests.record.world import turns

KEY = "sk-ant-api03-" + "x" * 86  # shaped like an Anthropic key (so redaction has one to find), and none


def main() -> None:
    mitmdump, out = sys.argv[1], Path(sys.argv[2])
    server = ScriptedServer(turns(4))
    server.answer = gzipping(server.scripted)
    port = free_port()
    try:
        with running_mitmdump(mitmdump, port, out.parent / ".home", "-w", str(out)):
            print(json.dumps(session(server.url, KEY, proxy=f"http://127.0.0.1:{port}")))
    finally:
        server.close()


if __name__ == "__main__":
    main()
