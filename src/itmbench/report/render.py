"""Reports: papermill-executed notebooks rendered to HTML, and the index that links them (`report.index`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


REPORT_TEMPLATE = Path(__file__).with_name("templates") / "report.html.j2"
# the cells papermill reads its parameters from and injects them into: code, not results
PARAMETER_TAGS = frozenset({"parameters", "injected-parameters"})


@dataclass(frozen=True)
class NavLink:
    """One link of a report's navigation: its label, its address relative to the report, and whether it
    is the report itself."""

    label: str
    href: str
    current: bool = False


def nav_links(out_html: str | Path, pages: Sequence[tuple[str, str | os.PathLike]]) -> list[NavLink]:
    """The navigation of the report written to `out_html`: each (label, path) of `pages` (paths as the
    workflow names them, relative to the working directory) linked relative to the report, and the
    report itself marked current."""
    here = Path(out_html).resolve()
    return [
        NavLink(
            label, Path(os.path.relpath(Path(path).resolve(), here.parent)).as_posix(), Path(path).resolve() == here
        )
        for label, path in pages
    ]


def outputs_only(nb: Any) -> Any:
    """A copy of an executed notebook as results: no code, no parameters, no warnings.

    The parameters cells (tags `parameters`, `injected-parameters`) go; every markdown cell becomes a
    cell whose only output is that markdown (so the page holds outputs alone: no input area at all);
    stderr streams (warnings, progress bars) are dropped; a code cell left with no output goes."""
    import copy

    import nbformat

    out = copy.deepcopy(nb)
    cells = []
    for cell in out.cells:
        if PARAMETER_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        if cell.cell_type == "markdown":
            shown = nbformat.v4.new_code_cell(
                outputs=[nbformat.v4.new_output("display_data", {"text/markdown": cell.source})]
            )
            shown["id"] = cell.get("id", shown["id"])
            cells.append(shown)
            continue
        if cell.cell_type != "code":
            continue  # raw cells: no results
        cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
        if cell.outputs:
            cells.append(cell)
    out.cells = cells
    return out


def report_html(nb: Any, title: str, nav: Sequence[NavLink] = ()) -> str:
    """An executed notebook as a report page: its outputs only (`outputs_only`), a title, and the links
    of `nav` at the top (the current page shown unlinked). The page loads nothing from outside: no
    script, style or font from a network."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_file=str(REPORT_TEMPLATE),
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
    )
    links = [{"label": n.label, "href": n.href, "current": n.current} for n in nav]
    resources = {"metadata": {"name": title}, "itmbench": {"title": title, "nav": links}}
    body, _ = exporter.from_notebook_node(outputs_only(nb), resources=resources)
    return body


def run_notebook(
    notebook: str | Path,
    out_html: str | Path,
    parameters: dict[str, Any],
    kernel: str = "python3",
    *,
    title: str = "",
    nav: Sequence[tuple[str, str | os.PathLike]] = (),
) -> None:
    """Execute a notebook with papermill (parameters injected) and write its results as HTML atomically.

    The page is `report_html`: the outputs alone under `title` (default: the notebook's name) and a
    link to each (label, path) of `nav` (`nav_links`: paths relative to the working directory). The
    kernel talks over Unix sockets of its own (`private_socket_kernel_manager`) where the OS has them,
    so reports rendered in parallel cannot collide on a TCP port. The same notebook, parameters and
    inputs give the same HTML."""
    import nbformat
    import papermill as pm

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
    body = report_html(nb, title or Path(notebook).stem, nav_links(out_html, nav))
    write_text(out_html, body)


def write_index(
    out_html: str | Path,
    reports: Sequence[str | os.PathLike],
    *,
    papers: Sequence[PaperEntry] = (),
    statuses: Sequence[str] = (),
    claims: Sequence[str | os.PathLike] = (),
    tables: Iterable[str | os.PathLike] = (),
    artefacts: Iterable[str | os.PathLike] = (),
    source: str = "world",
    title: str = "itmbench reports",
) -> None:
    """reports/index.html: every report, and per paper its claims, largest differences and coverage matrix.

    `papers` are the sections (``itmbench.papers.coverage.index_entries``), `statuses` the coverage
    statuses in order, `claims` the claims CSVs (the source's; with a mirror, the released files'),
    `tables` the papers' world tables (CSV),
    `artefacts` the coverage matrices' files this run built (only those are linked); see
    `itmbench.report.index`."""
    out_html = Path(out_html)
    text = index_html(out_html.parent, reports, papers, statuses, claims, tables, artefacts, source=source, title=title)
    write_text(out_html, text)
