"""The old world beside the new: each table the docs render from a default run, as an older commit's docs
printed it and as a run of today's world writes it (issue 31, "then re-decide").

The docs render the world's tables as snippets of a default run's files (`<!-- snippet: file
results/world/... -->`), so an older commit's docs hold what its world's run wrote. For every such snippet of
the pages of `--old` (a commit), this writes the old content and the file of the run given by `--outputs`
(today's default run), one after the other in fenced blocks, page by page, to `--out`; a table that is new
since `--old` is listed as new. Nothing is retyped: the old text comes from `git show`, the new from the run.

Usage: python benchmarks/old_beside_new.py --old 32e4ec7 --outputs RUN_DIR --out docs/old-world.md
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from itmbench.io import write_text  # noqa: E402
from itmbench.report.snippets import SNIPPET  # noqa: E402

PAGES = ("retrieval", "bison", "mcic", "eccv", "cxc", "bivlc", "sugarcrepe")


def git_show(commit: str, path: str) -> str | None:
    res = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPO, capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else None


def world_snippets(text: str) -> dict[str, str]:
    """The page's snippets of a run's files: path -> rendered content (the first of a path, in page order)."""
    out: dict[str, str] = {}
    for m in SNIPPET.finditer(text):
        spec = m.group("spec").split()
        if len(spec) >= 2 and spec[0] == "file" and spec[1].startswith("results/world/"):
            out.setdefault(spec[1], m.group("content").strip("\n"))
    return out


def fenced(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def page_section(page: str, old: str, outputs: Path) -> list[str]:
    old_text = git_show(old, f"docs/{page}.md")
    new_text = (REPO / "docs" / f"{page}.md").read_text(encoding="utf-8")
    before = world_snippets(old_text) if old_text else {}
    now = world_snippets(new_text)
    lines = [f"## {page}", ""]
    for path in list(before) + [p for p in now if p not in before]:
        lines += [f"### `{path}`", ""]
        if path in before:
            lines += [f"The old world (docs at {old}):", "", fenced(before[path]), ""]
        else:
            lines += [f"New since {old}: no old table.", ""]
        new_file = outputs / path
        if new_file.is_file():
            lines += ["Today's world (the run's file):", "", fenced(new_file.read_text(encoding="utf-8")), ""]
        else:
            lines += ["Today's run wrote no such file.", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True, help="the commit whose docs hold the old world's tables")
    p.add_argument("--outputs", type=Path, required=True, help="today's default run (its results/ folder's parent)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if not (args.outputs / "results" / "world").is_dir():
        raise SystemExit(f"{args.outputs}: no results/world here (run `snakemake --cores all` there first)")
    run_head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=args.outputs, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "# The old world beside the new",
        "",
        f"Written by `benchmarks/old_beside_new.py --old {args.old}` from the docs of {args.old} (the old world's",
        "default run, as its snippets rendered it) and a default run of today's world"
        + (f" at {run_head}." if run_head else "."),
        "Each paper's page says what moved and why; the tables are here, unedited.",
        "",
    ]
    for page in PAGES:
        lines += page_section(page, args.old, args.outputs)
    text = "\n".join(lines).rstrip() + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    write_text(args.out, text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
