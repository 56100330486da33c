"""The probe clients `llmproxy doctor` runs, one per language: each fetches `https://HOST/llmproxy-doctor`
through a proxy and prints one JSON line, `{"outcome": "trusted"|"untrusted"|"failed"|"skipped", "detail"}`.
They are run as files (`python probe.py`, `node probe.js`, `java Probe.java`), never imported."""
