"""mitmproxy imported as tests/mitm.py says, for the in-process sessions."""

import tests.mitm  # noqa: F401
