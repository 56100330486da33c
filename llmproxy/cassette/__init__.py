"""Cassettes: what the recorder captured, redacted and stored as a versioned, diff-friendly JSON file.

The package is pure (it never imports mitmproxy): the recording addon hands it `RawExchange`s, and replay
reads them back with `load_cassette`. See docs/cassette-format.md for the file format.
"""
