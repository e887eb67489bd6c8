"""Numbers in README.md and docs/ are rendered from files, never typed: snippet blocks and their check.

A snippet is `<!-- snippet: KIND ARGS -->CONTENT<!-- /snippet -->`. CONTENT is what `render(KIND
ARGS)` returns, from a file in the repository (params.yaml, the schema, a paper's published CSV)
or from an output the pipeline or a `benchmarks/` script writes (results/..., reports/...). A
snippet whose CONTENT starts with a newline is a block (a table); otherwise it is inline (one
value in a sentence). Kinds (ARGS are shell words; options are key=value):

- `param KEY`: the value of a dotted key of params.yaml (`world.captions_per_image`).
- `params SECTION [keys=a,b]`: a table of a params.yaml section: key, value, the schema's
  description (the schema is the only statement of what each parameter does).
- `published CSV [table=T] [block=B] [rows=a|b] [columns=a|b]`: a paper's published numbers as
  printed, rows x columns, from `papers/<paper>/published_*.csv` (value text kept as transcribed).
- `published-cell CSV table=T row=R column=C [block=B]`: one published value, inline.
- `file PATH [rows=REGEX]`: a text file (a Markdown table the pipeline writes), optionally only the
  table rows whose first cell matches REGEX (the header rows and non-table lines are kept).
- `json PATH KEY [decimals=N] [scale=X]`: one value of a JSON file (a metrics file), inline.
- `released [benchmark=a|b] [keys=k1|k2]`: a table of the registry's files (src/itmbench/sources/released.yaml):
  key, URL, size, md5 and record count as declared ('–' where the registry does not know it).

Outside snippets and fenced code blocks, `unchecked_numbers` finds every number and allows only
the few in `ALLOWLIST` (versions, a paper's table numbers, ...): a result typed by hand fails.

Usage: python -m itmbench.report.snippets [--update] [--root DIR] [--outputs DIR] [FILE ...]
(no FILE: README.md and docs/**/*.md; without --update it checks and exits 1 on any problem).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from itmbench.errors import reading
from itmbench.params import load_yaml

SNIPPET = re.compile(r"<!-- snippet: (?P<spec>.*?) -->(?P<content>.*?)<!-- /snippet -->", re.S)
# Top folders that hold what the pipeline or a benchmarks/ script writes (git-ignored outputs).
OUTPUT_DIRS = ("results", "reports", "data", "logs")
PENDING = '*(not rendered here: this file is written by a run; see docs/README.md, "Numbers in the docs")*'

# Numbers allowed outside snippets: each is a name or a definition, never a result. Keep it short.
ALLOWLIST: list[tuple[str, str]] = [
    # tool versions: the floors in pyproject.toml (Python >= 3.10, Snakemake >= 9.17, torch >= 2.4)
    (r"\b(?:Python|Snakemake|torch|PyTorch|Debian)\s*(?:≥|>=)?\s*\d+(?:\.\d+)+", "versions"),
    # a paper's own numbering of its tables, figures, sections and algorithms: names, not results
    (
        r"\b(?:[Aa]ppendix\s+)?(?:Tables?|Figures?|Algorithm|[Ss]ections?)\s+[A-Z]?\.?\d+(?:\.\d+)*"
        r"(?:\s*(?:[–-]|and|,)\s*[A-Z]?\.?\d+(?:\.\d+)*)*",
        "paper table/figure/section numbers",
    ),
    # this project's issues and upstream issue/PR numbers (issue 15, snakemake#3689)
    (r"\bissues?\s+#?\d+", "issue numbers"),
    # the names of the COCO test galleries (5,000 and 1,000 images): dataset names
    (r"\bCOCO\s+[15][kK]\b", "dataset names"),
    # ordered-list markers
    (r"(?m)^\s*\d+\.\s", "list markers"),
]

NUMBER = re.compile(r"(?<![\w@#./\-])[-−+]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE]-?\d+)?")
UNITS = {"x", "k", "K", "M", "B", "s", "ms", "min", "h", "px", "GB", "MB", "GiB", "pp"}


class MissingOutput(Exception):
    """A snippet's source is a pipeline output that this checkout does not have (yet)."""


@dataclass(frozen=True)
class Snippet:
    """One snippet block of a Markdown file: its spec, its content and where the content sits."""

    path: Path
    line: int
    spec: str
    content: str
    start: int
    end: int

    @property
    def block(self) -> bool:
        """A block snippet (a table) rather than an inline value."""
        return self.content.startswith("\n")


def find_snippets(text: str, path: Path = Path("<text>")) -> list[Snippet]:
    """Every snippet of a Markdown text, in order."""
    return [
        Snippet(
            path,
            text.count("\n", 0, m.start()) + 1,
            m["spec"].strip(),
            m["content"],
            m.start("content"),
            m.end("content"),
        )
        for m in SNIPPET.finditer(text)
        if not text[: m.start()].endswith("`")  # quoted in inline code: an example, not a snippet
    ]


def _args(spec: str) -> tuple[str, list[str], dict[str, str]]:
    words = shlex.split(spec)
    if not words:
        raise ValueError("empty snippet spec")
    pos = [w for w in words[1:] if "=" not in w]
    opts = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    return words[0], pos, opts


def fmt(value: Any) -> str:
    """A parameter value as params.yaml would show it (lists joined, floats without trailing zeros)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        text = f"{value:g}"
        return re.sub(r"e([-+])0*(\d)", lambda m: "e" + ("-" if m[1] == "-" else "") + m[2], text)
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, dict):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
    return str(value)


def _dig(doc: Any, key: str, where: str) -> Any:
    for part in key.split("."):
        if not isinstance(doc, dict) or part not in doc:
            raise KeyError(f"{where}: no key {key!r} (missing {part!r})")
        doc = doc[part]
    return doc


def _source(path: str, root: Path, outputs: Path) -> Path:
    rel = Path(path)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"snippet source {path!r}: give a path inside the repository")
    if rel.parts[0] in OUTPUT_DIRS:
        full = outputs / rel
        if not full.exists():
            raise MissingOutput(
                f"{path} is a pipeline output and is absent here: run the pipeline "
                "(snakemake --cores all), then python -m itmbench.report.snippets --update"
            )
        return full
    full = root / rel
    if not full.exists():
        raise FileNotFoundError(f"snippet source {path} does not exist in {root}")
    return full


def _cell_text(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell_text(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _render_params(section: str, opts: dict[str, str], root: Path) -> str:
    params = load_yaml(root / "params.yaml")
    schema = load_yaml(root / "workflow/schemas/params.schema.yaml")
    values = _dig(params, section, "params.yaml")
    node = schema
    for part in section.split("."):
        node = _dig(node, f"properties.{part}", "params.schema.yaml")
    props = node.get("properties", {})
    keys = opts["keys"].split(",") if "keys" in opts else list(values)
    rows = []
    for key in keys:
        if key not in values and key not in props:
            raise KeyError(f"params.yaml: section {section!r} has no key {key!r}")
        value = values.get(key, props.get(key, {}).get("default"))
        rows.append([f"`{key}`", f"`{fmt(value)}`", props.get(key, {}).get("description", "")])
    return _md_table(["key", "value", "what it does"], rows)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with reading(path), path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _select(records: list[dict[str, str]], opts: dict[str, str], path: str) -> list[dict[str, str]]:
    for key in ("table", "block", "row", "column"):
        if key in opts:
            records = [r for r in records if (r.get(key) or "") == opts[key]]
    for key, col in (("rows", "row"), ("columns", "column")):
        if key in opts:
            wanted = opts[key].split("|")
            records = [r for r in records if r[col] in wanted]
    if not records:
        raise KeyError(f"{path}: no published value matches {opts}")
    return records


def _render_published(path: str, opts: dict[str, str], root: Path, outputs: Path) -> str:
    records = _select(_read_csv(_source(path, root, outputs)), opts, path)
    columns = list(dict.fromkeys(r["column"] for r in records))
    if "columns" in opts:
        columns = [c for c in opts["columns"].split("|") if c in columns]
    with_block = any(r.get("block") for r in records) and "block" not in opts
    keys = list(dict.fromkeys(((r.get("block") or "") if with_block else "", r["row"]) for r in records))
    cells = {((r.get("block") or "") if with_block else "", r["row"], r["column"]): r["value"] for r in records}
    header = (["block"] if with_block else []) + ["row"] + columns
    rows = [([b] if with_block else []) + [row] + [cells.get((b, row, c), "–") for c in columns] for b, row in keys]
    return _md_table(header, rows)


def _render_published_cell(path: str, opts: dict[str, str], root: Path, outputs: Path) -> str:
    records = _select(_read_csv(_source(path, root, outputs)), opts, path)
    if len(records) != 1:
        raise ValueError(f"{path}: {len(records)} published values match {opts}; name one")
    return records[0]["value"]


def _render_file(path: str, opts: dict[str, str], root: Path, outputs: Path) -> str:
    lines = _source(path, root, outputs).read_text().rstrip("\n").split("\n")
    if "rows" not in opts:
        return "\n".join(lines)
    pattern, kept, table_line = re.compile(opts["rows"]), [], 0
    for line in lines:
        if not line.startswith("|"):
            kept.append(line)
            table_line = 0
            continue
        table_line += 1
        first = line.strip("|").split("|")[0].strip()
        if table_line <= 2 or pattern.search(first):
            kept.append(line)
    return "\n".join(kept)


def _render_json(path: str, key: str, opts: dict[str, str], root: Path, outputs: Path) -> str:
    value = _dig(json.loads(_source(path, root, outputs).read_text()), key, path)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = value * float(opts.get("scale", 1))
        if "decimals" in opts:
            return f"{value:.{int(opts['decimals'])}f}"
    return fmt(value)


def _render_released(opts: dict[str, str], root: Path) -> str:
    from itmbench.sources.released import parse_registry

    path = root / "src" / "itmbench" / "sources" / "released.yaml"
    with reading(path):
        files = list(parse_registry(path.read_text(encoding="utf-8"), str(path)).values())
    if "benchmark" in opts:
        files = [f for f in files if f.benchmark in opts["benchmark"].split("|")]
    if "keys" in opts:
        wanted = opts["keys"].split("|")
        unknown = sorted(set(wanted) - {f.key for f in files})
        if unknown:
            raise KeyError(f"{path}: no file {unknown} among the selected ({opts})")
        files = [f for f in files if f.key in wanted]
    if not files:
        raise KeyError(f"{path}: no file matches {opts}")
    rows = [
        [
            f"`{f.key}`",
            f.url,
            "–" if f.size_bytes is None else f"{f.size_bytes / 1e6:,.1f} MB",
            "–" if f.md5 is None else f"`{f.md5}`",
            "–" if f.records is None else f"{f.records:,}",
        ]
        for f in files
    ]
    return _md_table(["key", "URL", "size", "md5", "records"], rows)


def render(spec: str, root: Path, outputs: Path | None = None) -> str:
    """The content of a snippet from its spec (raises MissingOutput for an absent pipeline output)."""
    outputs = outputs or root
    kind, pos, opts = _args(spec)
    if kind == "param" and len(pos) == 1:
        return fmt(_dig(load_yaml(root / "params.yaml"), pos[0], "params.yaml"))
    if kind == "params" and len(pos) == 1:
        return _render_params(pos[0], opts, root)
    if kind == "published" and len(pos) == 1:
        return _render_published(pos[0], opts, root, outputs)
    if kind == "published-cell" and len(pos) == 1:
        return _render_published_cell(pos[0], opts, root, outputs)
    if kind == "file" and len(pos) == 1:
        return _render_file(pos[0], opts, root, outputs)
    if kind == "json" and len(pos) == 2:
        return _render_json(pos[0], pos[1], opts, root, outputs)
    if kind == "released" and not pos:
        return _render_released(opts, root)
    raise ValueError(
        f"unknown snippet {spec!r}; kinds: param KEY, params SECTION, published CSV, "
        "published-cell CSV, file PATH, json PATH KEY, released"
    )


def _wrap(snippet: Snippet, rendered: str) -> str:
    return f"\n{rendered}\n" if snippet.block else rendered


def check_text(text: str, path: Path, root: Path, outputs: Path | None = None) -> tuple[list[str], list[str]]:
    """Problems (stale snippets, unchecked numbers) and skipped snippets (absent outputs) of one text."""
    problems, skipped = [], []
    for s in find_snippets(text, path):
        try:
            expected = _wrap(s, render(s.spec, root, outputs))
        except MissingOutput as e:
            skipped.append(f"{path}:{s.line}: {s.spec}: {e}")
            continue
        except (KeyError, ValueError, FileNotFoundError) as e:
            problems.append(f"{path}:{s.line}: snippet {s.spec!r} does not render: {e}")
            continue
        if s.content != expected:
            problems.append(f"{path}:{s.line}: snippet {s.spec!r} differs from its source (run --update)")
    problems += [f"{path}:{line}: number {num!r} typed by hand: {ctx!r}" for line, num, ctx in unchecked_numbers(text)]
    return problems, skipped


def update_text(text: str, root: Path, outputs: Path | None = None) -> str:
    """The text with every renderable snippet re-rendered in place (absent outputs left as they are)."""
    out, last = [], 0
    for s in find_snippets(text):
        try:
            rendered = _wrap(s, render(s.spec, root, outputs))
        except MissingOutput:
            rendered = s.content if s.content.strip() else _wrap(s, PENDING)
        out += [text[last : s.start], rendered]
        last = s.end
    return "".join(out) + text[last:]


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def scannable(text: str) -> str:
    """The text with what the number check ignores blanked (line numbers kept): snippet contents,
    fenced code blocks, HTML comments, link targets and bare URLs."""
    for s in reversed(find_snippets(text)):
        text = _blank(text, s.start, s.end)
    for pattern in (r"<!--.*?-->", r"\]\([^)]*\)", r"https?://\S+", r"(?m)^\[[^\]]+\]:.*$"):
        for m in reversed(list(re.finditer(pattern, text, re.S))):
            text = _blank(text, m.start(), m.end())
    lines, fence = text.split("\n"), None
    for i, line in enumerate(lines):
        marker = re.match(r"\s*(```|~~~)", line)
        if fence is None and marker:
            fence = marker[1]
            lines[i] = ""
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            lines[i] = ""
    return "\n".join(lines)


def unchecked_numbers(text: str) -> list[tuple[int, str, str]]:
    """(line, number, context) of every number outside snippets, code blocks and the allowlist."""
    text = scannable(text)
    allowed = [m.span() for pattern, _ in ALLOWLIST for m in re.finditer(pattern, text)]
    found = []
    for m in NUMBER.finditer(text):
        start, end = m.span()
        tail = re.match(r"[A-Za-z_]+", text[end:])
        if tail and tail[0] not in UNITS:
            continue  # part of a name: val2014, 2D
        if any(a <= start and end <= b for a, b in allowed):
            continue
        line = text.count("\n", 0, start) + 1
        ctx = text[max(0, start - 30) : end + 30].replace("\n", " ").strip()
        found.append((line, m[0], ctx))
    return found


def _header_cells(text: str, names: Iterable[str] = ()) -> set[str]:
    """The column names of every Markdown table of a text (its first row), free-standing numbers masked (R@1 kept)
    and each of `names` (the models: which one a claim's column names is a result) as `<name>`."""
    name = (
        re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")
        if names
        else None
    )
    cells: set[str] = set()
    previous = ""
    for line in text.split("\n"):
        if line.startswith("|") and not previous.startswith("|"):
            for cell in line.strip().strip("|").split("|"):
                cell = NUMBER.sub("#", cell.strip())
                cells.add(name.sub("<name>", cell) if name else cell)
        previous = line
    return cells


def shape_problems(snippet: Snippet, root: Path, outputs: Path, names: Iterable[str] = ()) -> list[str]:
    """How an output-backed snippet's page content no longer has the shape of what the pipeline writes now, read
    from another run at `outputs` (the tests' tiny run): its file absent there, a JSON key that does not resolve
    or is no longer a number where the page shows one, a table column that run writes and the page lacks (`names`,
    the models, masked in column names: which model a column names is a result). The numbers may differ (another
    world); names may not. Raises MissingOutput for a snippet of no pipeline output."""
    kind, pos, _ = _args(snippet.spec)
    if kind not in ("file", "json") or Path(pos[0]).parts[0] not in OUTPUT_DIRS:
        raise MissingOutput(f"{snippet.spec}: not an output-backed snippet")
    where = f"{snippet.path.name}:{snippet.line}: {snippet.spec}"
    if not (outputs / pos[0]).exists():
        return [f"{where}: {pos[0]} is not written by the run at {outputs}"]
    try:
        rendered = render(snippet.spec, root, outputs)
    except (KeyError, ValueError) as e:
        return [f"{where}: does not render from the run at {outputs}: {e}"]
    if kind == "json":
        shown_number = NUMBER.fullmatch(snippet.content.strip()) is not None
        if shown_number != (NUMBER.fullmatch(rendered.strip()) is not None):
            return [f"{where}: the page shows {snippet.content.strip()!r}, the run writes {rendered.strip()!r}"]
        return []
    new = sorted(_header_cells(rendered, names) - _header_cells(snippet.content, names))
    return [f"{where}: columns {new} are written by the run at {outputs} and absent from the page"] if new else []


def doc_files(root: Path) -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def main(argv: Sequence[str] | None = None) -> int:
    """Check (default) or --update the snippet blocks of the docs; exit 1 on any problem."""
    ap = argparse.ArgumentParser(prog="python -m itmbench.report.snippets", description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="Markdown files (default: README.md and docs/**/*.md)")
    ap.add_argument("--root", type=Path, default=Path.cwd(), help="repository root (default: the current folder)")
    ap.add_argument("--outputs", type=Path, help="where results/ and reports/ are read (default: --root)")
    ap.add_argument("--update", action="store_true", help="rewrite the snippet blocks in place")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    files = [f if f.is_absolute() else root / f for f in args.files] or doc_files(root)
    problems: list[str] = []
    for path in files:
        text = path.read_text()
        if args.update:
            new = update_text(text, root, args.outputs)
            if new != text:
                path.write_text(new)
                print(f"updated {path.relative_to(root) if path.is_relative_to(root) else path}")
            text = new
        found, skipped = check_text(text, path, root, args.outputs)
        problems += found
        for s in skipped:
            print(f"skipped {s}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
