"""Every command the DAG plans passes the CLI's parse-time checks (issue 18): the option types and choices
that refuse a careless user's values accept every value the rules write, on the world and the COCO source."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest
from workflow_helpers import copy_workflow, snakemake

from itmbench.cli import build_parser

SHELL = (">", "2>", "&>", "&&", "||", "|", ";")


def _argv(command: str) -> list[str]:
    """The itmbench arguments of one planned shell command (redirections and chained commands cut)."""
    words = shlex.split(command)
    for i, word in enumerate(words):
        if word in SHELL or word.startswith(("2>", ">")):
            return words[1:i]
    return words[1:]


@pytest.mark.slow
@pytest.mark.parametrize("source", ["world", "coco"])
def test_every_planned_command_parses(source, tmp_path):
    res = snakemake(copy_workflow(tmp_path), "-n", "-p", override={"source": source})
    assert res.returncode == 0, res.stderr[-3000:]
    commands = re.findall(r"^(?:Shell command: )?\s*(itmbench .*)$", res.stdout + res.stderr, flags=re.M)
    assert len(commands) > 10
    refused = []
    for command in commands:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                build_parser().parse_args(_argv(command))
        except SystemExit:
            refused.append((command, err.getvalue().strip().splitlines()[-1:]))
    assert not refused, refused[:5]
