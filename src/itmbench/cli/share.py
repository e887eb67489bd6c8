"""`itmbench share`, `pull`: sharing the expensive outputs through DVC."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

log = logging.getLogger("itmbench")


def cmd_share(args: argparse.Namespace) -> None:
    """Track the expensive outputs with DVC, record their modification times, push to the remote."""
    from itmbench.share import share

    files = share(args.source, Path(args.root), push=not args.no_push, remote=args.remote)
    print("now commit the pointers: git add " + " ".join(map(str, files)) + " dvc/mtimes.json && git commit")


def cmd_pull(args: argparse.Namespace) -> None:
    """`dvc pull`, every pulled file checked against its recorded md5, and the modification times restored
    (the workflow restores them itself after a plain `dvc pull`; this also verifies)."""
    from itmbench.share import pull

    restored, missing = pull(Path(args.root), remote=args.remote)
    log.info("pulled; restored the modification times of %d files (%d listed but absent)", restored, missing)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("share", cmd_share, "dvc add + push the expensive outputs, with their modification times")
    sp.add_argument("--source", default="world")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)
    sp.add_argument("--no-push", action="store_true")
    sp = add("pull", cmd_pull, "dvc pull the shared outputs, verify them against their md5s, restore their times")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)
