"""Reports: papermill-executed notebooks rendered to HTML, and the index that links them (`report.index`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from itmbench.io import write_text
from itmbench.report.index import PaperEntry, index_html


def private_socket_kernel_manager(sockets: Path) -> type:
    """A kernel manager class whose kernels talk over Unix sockets in `sockets` (a folder of their own).

    Jupyter's default TCP transport picks free ports by binding and releasing them before the kernel
    binds them, so kernels started at the same moment (Snakemake running report jobs in parallel) can
    draw the same port and one dies with ``ZMQError: Address already in use`` (snakemake#3689,
    papermill#511). IPC transport with a socket path no other kernel uses has no such race. Unix
    socket paths are limited to about 100 bytes, so `sockets` should be a short path (a fresh folder
    in the system temp dir)."""
    from jupyter_client.manager import AsyncKernelManager

    class PrivateSocketKernelManager(AsyncKernelManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("connection_file", str(sockets / "kernel.json"))
            super().__init__(*args, **kwargs)

    return PrivateSocketKernelManager


def run_notebook(
    notebook: str | Path, out_html: str | Path, parameters: dict[str, Any], kernel: str = "python3"
) -> None:
    """Execute a notebook with papermill (parameters injected) and write it as HTML atomically.

    The kernel talks over Unix sockets of its own (`private_socket_kernel_manager`) where the OS has
    them, so reports rendered in parallel cannot collide on a TCP port. The same notebook, parameters
    and inputs give the same HTML."""
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    out_html = Path(out_html)
    out_html.parent.mkdir(parents=True, exist_ok=True)
    engine: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        if os.name == "posix":
            sockets = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="itmnb")))
            engine["kernel_manager_class"] = private_socket_kernel_manager(sockets)
        tmp = stack.enter_context(tempfile.TemporaryDirectory(dir=out_html.parent, prefix=".nb."))
        executed = Path(tmp) / "executed.ipynb"
        pm.execute_notebook(
            str(notebook),
            str(executed),
            parameters=parameters,
            kernel_name=kernel,
            cwd=os.getcwd(),
            progress_bar=False,
            **engine,
        )
        nb = nbformat.read(executed, as_version=4)
        for cell in nb.cells:  # papermill gives the cell it injects a random id; the HTML carries it
            if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
                cell["id"] = "injected-parameters"
        body, _ = HTMLExporter().from_notebook_node(nb)
    write_text(out_html, body)


def write_index(
    out_html: str | Path,
    reports: Sequence[str | os.PathLike],
    *,
    papers: Sequence[PaperEntry] = (),
    statuses: Sequence[str] = (),
    claims: str | os.PathLike | None = None,
    tables: Iterable[str | os.PathLike] = (),
    artefacts: Iterable[str | os.PathLike] = (),
    source: str = "world",
    title: str = "itmbench reports",
) -> None:
    """reports/index.html: every report, and per paper its claims, largest differences and coverage matrix.

    `papers` are the sections (``itmbench.papers.coverage.index_entries``), `statuses` the coverage
    statuses in order, `claims` the source's claims CSV, `tables` the papers' world tables (CSV),
    `artefacts` the coverage matrices' files this run built (only those are linked); see
    `itmbench.report.index`."""
    out_html = Path(out_html)
    text = index_html(out_html.parent, reports, papers, statuses, claims, tables, artefacts, source=source, title=title)
    write_text(out_html, text)
