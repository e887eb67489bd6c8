"""Write each mirrored file's record count into src/itmbench/sources/released.yaml (`records:`), counted from the files.

The loaders refuse a declared file whose record count differs from its `records` (and the
predictions scorers use the counts as the benchmark's size), so the numbers must come from the
files themselves: this script counts every file of the mirror with
`itmbench.sources.released.count_records` (data rows of a CSV, non-blank lines of a text file,
record keys or items of a JSON, the length of an npy) and writes `records: N` after each entry's
`md5:` line, replacing an older value. Files not in the mirror keep no count. Run it again after
a declared file changes; tests/sources/test_sources_released.py checks the counts against the
mirror. Usage: python benchmarks/declare_record_counts.py [--mirror ../shared/mirror] [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from itmbench.sources.released import count_records, load_registry, resolve

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO / "src" / "itmbench" / "sources" / "released.yaml"


def with_counts(text: str, counts: dict[str, int]) -> str:
    """The registry text with `records: N` after the md5 line of every counted key (older values replaced)."""
    out: list[str] = []
    key = None
    for line in text.splitlines(keepends=True):
        match = re.match(r"^  - key: (\S+)$", line.rstrip("\n"))
        if match:
            key = match.group(1)
        if re.match(r"^    records: ", line):
            continue
        out.append(line)
        if key in counts and re.match(r"^    md5: ", line):
            out.append(f"    records: {counts[key]}\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=str(REPO.parent / "shared" / "mirror"))
    parser.add_argument("--check", action="store_true", help="only report whether released.yaml is up to date")
    args = parser.parse_args(argv)
    counts: dict[str, int] = {}
    for key, released in load_registry().items():
        path = resolve(released, args.mirror)
        if released.in_mirror and path.is_file():
            counts[key], unit = count_records(path)
            print(f"{key}: {counts[key]} {unit}")
    text = REGISTRY.read_text(encoding="utf-8")
    new = with_counts(text, counts)
    if args.check:
        print("released.yaml is up to date" if new == text else "released.yaml differs from the mirror's counts")
        return 0 if new == text else 1
    if new != text:
        REGISTRY.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
