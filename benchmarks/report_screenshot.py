"""A picture of a report: render reports/index.html (or any report) to PNG with a headless Chromium.

The README shows docs/img/report.png, made by this script from a finished run (the picture there is of a
run on the tests' tiny world):

    python benchmarks/report_screenshot.py                                   # reports/index.html -> docs/img/report.png
    python benchmarks/report_screenshot.py --report reports/world/bivlc.html --out docs/img/bivlc.png

Chromium is not a dependency of the project (Debian: `apt-get install chromium`); the script
looks for chromium, chromium-browser, google-chrome or the browser given with --browser, and
exits with a message naming them when none is installed. Usage:
python benchmarks/report_screenshot.py [--report HTML] [--out PNG] [--width 1280] [--height 1000] [--browser PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser(given: str | None) -> str:
    """The browser to run: the one given, else the first of BROWSERS on PATH."""
    for name in [given] if given else BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit(
        f"no headless browser found (tried {', '.join([given] if given else BROWSERS)}); "
        "on Debian: apt-get install chromium"
    )


def screenshot(report: Path, out: Path, width: int, height: int, browser: str) -> None:
    """Render the report's first screen (width x height CSS pixels) to a PNG, written atomically."""
    if not report.exists():
        raise SystemExit(f"{report} does not exist: run the pipeline first (snakemake --cores all)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "shot.png"
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",  # as root (containers) Chromium refuses to start with its sandbox
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--window-size={width},{height}",
            "--virtual-time-budget=5000",  # let the page's images and fonts load
            f"--screenshot={png}",
            report.resolve().as_uri(),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if res.returncode != 0 or not png.exists():
            raise SystemExit(f"{browser} failed ({res.returncode}):\n{res.stderr[-2000:]}")
        tmp_out = out.with_name(f".{out.name}.tmp")
        shutil.copyfile(png, tmp_out)
        os.replace(tmp_out, out)


def main(argv: list[str] | None = None) -> int:
    """Render one report to PNG."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", type=Path, default=REPO / "reports" / "index.html")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "report.png")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--browser", help=f"a browser executable (default: the first of {', '.join(BROWSERS)} on PATH)")
    args = ap.parse_args(argv)
    screenshot(args.report, args.out, args.width, args.height, find_browser(args.browser))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
