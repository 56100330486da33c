"""llmproxy: record, replay, mock, stress and understand LLM API traffic."""

__version__ = "0.1.0"
