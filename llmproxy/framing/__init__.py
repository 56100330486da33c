"""Pure, incremental stream framings: the same events for any split of the input bytes."""
