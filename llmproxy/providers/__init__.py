"""Provider wire formats: detection, codecs and the registry that finds them (docs/providers.md)."""
