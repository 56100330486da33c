"""Mock answers: made-up responses that are deterministic, so tests that use them are repeatable."""
