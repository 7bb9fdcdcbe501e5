"""The scorer service: offline scoring of recorded runs."""
