"""Placeholder: the owning work item replaces this module with its commands."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
