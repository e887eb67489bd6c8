"""Reports: papermill-executed notebooks rendered to HTML, and the index that links them."""

from __future__ import annotations

import html
import os
import tempfile
from pathlib import Path
from typing import Any

from itmbench.io import write_text


def run_notebook(
    notebook: str | Path, out_html: str | Path, parameters: dict[str, Any], kernel: str = "python3"
) -> None:
    """Execute a notebook with papermill (parameters injected) and write it as HTML atomically."""
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    out_html = Path(out_html)
    out_html.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_html.parent, prefix=".nb.") as tmp:
        executed = Path(tmp) / "executed.ipynb"
        pm.execute_notebook(
            str(notebook),
            str(executed),
            parameters=parameters,
            kernel_name=kernel,
            cwd=os.getcwd(),
            progress_bar=False,
        )
        nb = nbformat.read(executed, as_version=4)
        body, _ = HTMLExporter().from_notebook_node(nb)
    write_text(out_html, body)


def write_index(out_html: str | Path, reports: list[str | Path], title: str = "itmbench reports") -> None:
    """reports/index.html: one link per report, relative to the index, grouped by source folder."""
    out_html = Path(out_html)
    base = out_html.parent.resolve()
    groups: dict[str, list[Path]] = {}
    for r in sorted(Path(p) for p in reports):
        groups.setdefault(r.parent.name, []).append(r)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto}li{margin:.3em 0}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for source, paths in groups.items():
        parts.append(f"<h2>source: {html.escape(source)}</h2><ul>")
        for p in paths:
            rel = os.path.relpath(p.resolve(), base)
            parts.append(f'<li><a href="{html.escape(rel)}">{html.escape(p.stem)}</a></li>')
        parts.append("</ul>")
    parts.append("</body></html>")
    write_text(out_html, "\n".join(parts) + "\n")
