"""Coding agents' own session logs (Claude Code, Codex, Gemini CLI, opencode) read as report calls.

Each agent keeps a log of the answers its model gave, with the tokens the API reported for each: enough for
a report's costs, tokens, tool calls and most of its KPIs, without a proxy or a recording (docs/agent-logs.md).
`entries` is what every reader yields; `files` finds and tells apart the agents' files; `read` turns them
into calls, each API answer counted once however many times the logs repeat it; `reconcile` checks a log
against a recording of the same run.
"""
