"""A report page as results: a tiny notebook executed by papermill and rendered without code, with its title and
the navigation between reports."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from itmbench.report.render import nav_links, outputs_only, run_notebook

pytest.importorskip("papermill")


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    parameters = nbformat.v4.new_code_cell('label = "DEFAULT_LABEL"\nrows = 2')
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("Results of a tiny benchmark.\n\n## A section"),
        parameters,
        nbformat.v4.new_code_cell(
            "import sys, warnings\n"
            "from IPython.display import Markdown, display\n"
            "warnings.warn('A_WARNING_TEXT')\n"
            "print('STDERR_TEXT', file=sys.stderr)\n"
            "table = '\\n'.join(f'| m{i} | {label} |' for i in range(rows))\n"
            "display(Markdown('| model | acc |\\n|---|---|\\n' + table))"
        ),
        nbformat.v4.new_code_cell("total = rows * 2  # no output: the cell goes"),
        nbformat.v4.new_code_cell("print('total', total)"),
    ]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell{i}"  # fixed ids: the HTML carries them
    nbformat.write(nb, path)
    return path


def test_a_report_shows_outputs_only_under_its_title_and_navigation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    notebook = _notebook(tmp_path / "tiny.ipynb")
    out = Path("reports/world/tiny.html")
    nav = [("index", "reports/index.html"), ("Tiny", str(out)), ("Other", "reports/world/other.html")]
    run_notebook(notebook, out, {"label": "INJECTED_LABEL", "rows": 3}, title="A tiny <report>", nav=nav)
    html = out.read_text(encoding="utf-8")
    assert "<td>INJECTED_LABEL</td>" in html and "<td>m2</td>" in html  # the parameters reached the kernel
    assert "total 6" in html and "<h2>A section</h2>" in html
    classes = " ".join(re.findall(r'class="([^"]*)"', html)).split()
    assert "jp-CodeCell" in classes and "jp-OutputArea" in classes
    for code in ("jp-InputArea", "input_area", "jp-InputPrompt", "jp-OutputPrompt", "jp-MarkdownCell"):
        assert code not in classes, code  # no element of a code cell's input, no prompt
    for code in ("In&nbsp;[", "In [", "DEFAULT_LABEL", "rows = 3", 'INJECTED_LABEL"'):
        assert code not in html, code  # no prompt, no parameters cell (its defaults or the injected values)
    assert "print(" not in html and "display(Markdown" not in html
    assert "A_WARNING_TEXT" not in html and "STDERR_TEXT" not in html
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html
    assert html.count('class="jp-Cell ') == 3  # the markdown, the table, the total: the silent cell is gone
    assert "<title>A tiny &lt;report&gt;</title>" in html and "<h1>A tiny &lt;report&gt;</h1>" in html
    assert '<a href="../index.html">index</a>' in html and '<a href="other.html">Other</a>' in html
    assert '<strong aria-current="page">Tiny</strong>' in html  # the page itself, unlinked
    assert re.findall(r'\b(?:src|href)="([^"]*)"', html) == ["../index.html", "other.html"]  # nothing from outside
    assert "<script src" not in html and "cdnjs" not in html
    run_notebook(notebook, out, {"label": "INJECTED_LABEL", "rows": 3}, title="A tiny <report>", nav=nav)
    assert out.read_text(encoding="utf-8") == html  # the same notebook and parameters: the same bytes


def test_outputs_only_keeps_results_and_drops_code_parameters_and_warnings() -> None:
    nb = nbformat.v4.new_notebook()
    injected = nbformat.v4.new_code_cell("x = 1")
    injected.metadata["tags"] = ["injected-parameters"]
    loud = nbformat.v4.new_code_cell(
        "x",
        outputs=[
            nbformat.v4.new_output("stream", name="stderr", text="warn"),
            nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1),
        ],
    )
    nb.cells = [nbformat.v4.new_markdown_cell("# T"), injected, loud, nbformat.v4.new_raw_cell("raw")]
    shown = outputs_only(nb)
    assert [c.cell_type for c in shown.cells] == ["code", "code"]
    assert shown.cells[0].outputs[0]["data"] == {"text/markdown": "# T"}
    assert [o["output_type"] for o in shown.cells[1].outputs] == ["execute_result"]
    assert len(nb.cells) == 4 and len(nb.cells[2].outputs) == 2  # the notebook itself is left as it was


def test_nav_links_are_relative_to_the_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    links = nav_links(
        "reports/released/released.html",
        [
            ("index", "reports/index.html"),
            ("BiVLC", "reports/world/bivlc.html"),
            ("released", "reports/released/released.html"),
        ],
    )
    assert [(n.href, n.current) for n in links] == [
        ("../index.html", False),
        ("../world/bivlc.html", False),
        ("released.html", True),
    ]
