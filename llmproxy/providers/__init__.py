"""Provider wire formats: detection, codecs and the registry that finds them (DESIGN.md §2)."""
