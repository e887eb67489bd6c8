"""Report notebooks: papermill runs them with parameters, on a kernel with sockets of its own."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from itmbench.report.render import run_notebook


def _notebook(path: Path, body: str) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("label = 'default'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets: POSIX only (elsewhere the kernel uses TCP)")
def test_the_kernel_talks_over_private_unix_sockets_and_gets_the_parameters(tmp_path: Path) -> None:
    body = (
        "import json, ipykernel.connect\n"
        "info = json.loads(ipykernel.connect.get_connection_info())\n"
        "print('transport=' + info['transport'], 'label=' + label)"
    )
    out = tmp_path / "reports" / "r.html"
    run_notebook(_notebook(tmp_path / "nb.ipynb", body), out, {"label": "injected"})
    html = out.read_text()
    # TCP ports drawn by parallel report jobs can collide (ZMQError: Address already in use); IPC cannot
    assert "transport=ipc" in html and "label=injected" in html
    assert [p.name for p in out.parent.iterdir()] == ["r.html"]  # no temp folder left beside it
    again = tmp_path / "again.html"
    run_notebook(tmp_path / "nb.ipynb", again, {"label": "injected"})
    assert again.read_bytes() == out.read_bytes()  # papermill's random id of the injected cell is not in it


def test_a_failing_cell_raises_and_writes_no_report(tmp_path: Path) -> None:
    import papermill as pm

    out = tmp_path / "r.html"
    with pytest.raises(pm.PapermillExecutionError, match="no such table"):
        run_notebook(_notebook(tmp_path / "nb.ipynb", "raise FileNotFoundError('no such table')"), out, {})
    assert not out.exists() and list(tmp_path.glob(".nb.*")) == []
