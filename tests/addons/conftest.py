import tests.mitm  # noqa: F401  (mitmproxy imported before the tests, warnings silenced)
