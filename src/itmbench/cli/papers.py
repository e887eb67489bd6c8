"""The papers' own commands: each paper's package registers its subcommands (`itmbench.papers.<paper>.commands`,
reached through the registry's `Paper.add_commands`), in the registry's order of papers; the commands every
paper shares are the other stage modules'."""

from __future__ import annotations


def add_commands(add, sub) -> None:
    """Register every paper's own subcommands (`add(name, func, help)` returns the subparser)."""
    from itmbench.papers.registry import PAPERS

    for paper in PAPERS.values():
        paper.add_commands(add, sub)
