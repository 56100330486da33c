"""Recordings made by other tools (vcrpy cassettes, HAR files, mitmproxy flow files) read as the exchanges
llmproxy would have captured, and cassettes written back in those formats (docs/import.md)."""
