"""The scorer service: offline scoring of recorded runs (DESIGN.md §8)."""
