"""Shared fixtures: the offline mirror of the released files, when it is present."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from itmbench.sources.loading import load_released

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_TESTS = REPO / "tests" / "workflow"


def find_mirror() -> Path | None:
    """Locate the offline mirror: $ITMBENCH_MIRROR, else ../shared/mirror beside the clone."""
    env = os.environ.get("ITMBENCH_MIRROR")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "mirror")
    for path in candidates:
        if path.is_dir():
            return path
    return None


# ----------------------------------------------------------------------------------------------
# Two workers (pytest-xdist, `-n 2 --dist loadgroup` in pyproject's addopts): which tests must share one


# The shared runs: every test that reads one runs in the worker that built it (built once per session).
SHARED_RUNS = ("tiny_world_run", "tiny_world_plan", "tiny_world_plan_with_mirror")
# The groups that take minutes (docs/testing.md, "Where the whole suite's time goes"), handed out first so that
# the other worker takes the many short tests meanwhile instead of waiting at the end for one long group.
LONG_GROUPS = ("tiny_world_run", "test_coco_small_dag", "test_slurm", "test_generators_dag", "tiny_world_plan")


def _group(item: pytest.Item) -> str:
    """The xdist group of a test: a shared run's name where it reads one; else its module's, so a module's tests
    run in its order in one process, as they do without workers (a fixture per module or class is built once;
    a module that counts across its tests, as tests/fuzz/test_loaders.py does, sees all of them)."""
    names = set(item.fixturenames)
    for run in SHARED_RUNS:
        if run in names or f"{run}_copy" in names:
            return run.replace("_with_mirror", "")
    return Path(str(item.path)).stem


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`: mark each test's group (`_group`) and put the long groups first, in the order
    of LONG_GROUPS (a stable sort: within a group, and among the rest, the collection's order is kept)."""
    # a worker's own config says dist "no" and loadgroup True (xdist's remote.setup_config)
    if not getattr(config.option, "loadgroup", False):
        return
    group = {item: _group(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group[item]))
    rank = {name: k for k, name in enumerate(LONG_GROUPS)}
    items.sort(key=lambda item: rank.get(group[item], len(rank)))


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The mirror folder (files at <host>/<url path>), or skip: a user's clone has none."""
    path = find_mirror()
    if path is None:
        pytest.skip(
            "offline mirror of the released files not found (set ITMBENCH_MIRROR or put shared/mirror beside the clone)"
        )
    return path


@pytest.fixture(scope="session")
def github_raw(mirror_dir: Path) -> Path:
    """The mirrored raw.githubusercontent.com tree."""
    return mirror_dir / "raw.githubusercontent.com"


@contextlib.contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """A folder served on 127.0.0.1 by a thread of this process (its base URL); stopped after the block."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def serve() -> Callable[[Path], contextlib.AbstractContextManager[str]]:
    """serve(folder): a context manager serving the folder on 127.0.0.1 (its base URL), as a loopback mirror."""
    return serve_folder


@pytest.fixture(scope="session")
def http_mirror(mirror_dir):
    """The mirror served on 127.0.0.1 by a thread of this process; stopped after the tests."""
    with serve_folder(mirror_dir) as url:
        yield url


@pytest.fixture
def kill_on_call(monkeypatch):
    """kill_on_call(module, name, n): the n-th call of module.name raises KeyboardInterrupt (a killed run);
    returns a function that puts the real one back."""

    def arm(module, name: str, n: int = 2):
        real, calls = getattr(module, name), {"n": 0}

        def dies(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == n:
                raise KeyboardInterrupt("killed")
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, dies)
        return lambda: monkeypatch.setattr(module, name, real)

    return arm


@pytest.fixture(autouse=True)
def _torch_threads_restored():
    """Whatever a test does to torch's thread count (set_num_threads, an in-process `main([... --threads N])`),
    the next test starts with the count it had: a sample is bit-exact only per thread count, and a leaked
    count once hid a test's dependence on it."""
    import torch

    before = torch.get_num_threads()
    yield
    if torch.get_num_threads() != before:
        torch.set_num_threads(before)


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module's tests, restored afterwards: the tests' budget is one core, and a sample
    (diffusion, training) is bit-exact only for a given thread count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def released(mirror_dir: Path) -> Callable[[str], Any]:
    """load(key): a released file read by its declared loader after md5 verification, cached."""
    cache: dict[str, Any] = {}

    def load(key: str) -> Any:
        if key not in cache:
            cache[key] = load_released(key, mirror_dir)
        return cache[key]

    return load


@pytest.fixture()
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """write(name, content): a small file in the test's temp folder."""

    def make(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return make


def _workflow_helpers():
    """tests/workflow/workflow_helpers.py, importable from any test folder (pytest puts a test's own folder on
    sys.path; the workflow tests import it as `from workflow_helpers import ...`, the same module)."""
    if str(WORKFLOW_TESTS) not in sys.path:
        sys.path.insert(0, str(WORKFLOW_TESTS))
    import workflow_helpers

    return workflow_helpers


def _tiny_plan(tmp_path_factory, *args: str) -> list[dict]:
    helpers = _workflow_helpers()
    d = helpers.copy_workflow(tmp_path_factory.mktemp("tiny_world_plan"))
    res = helpers.snakemake(d, "-n", *args)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return helpers.parse_plan(res.stdout + res.stderr)


# A dry run only plans the fetches: any mirror path puts the released source in the DAG.
PLAN_MIRROR = "/nonexistent-mirror"


@pytest.fixture(scope="session")
def tiny_world_plan(tmp_path_factory) -> list[dict]:
    """ONE dry run (`snakemake -n`) of the default target on the tiny world of workflow_helpers.TINY, in a fresh
    copy of the workflow, shared by the tests that read the plan: each job's rule, wildcards, priority, input and
    output (workflow_helpers.parse_plan). Read-only: a test that plans other params or targets runs its own."""
    return _tiny_plan(tmp_path_factory)


@pytest.fixture(scope="session")
def tiny_world_plan_with_mirror(tmp_path_factory) -> list[dict]:
    """The same dry run with a mirror configured (`--config mirror=PLAN_MIRROR`): the released source's jobs too."""
    return _tiny_plan(tmp_path_factory, "--config", f"mirror={PLAN_MIRROR}")


@pytest.fixture(scope="session")
def tiny_world_run(tmp_path_factory) -> Path:
    """ONE run of the default target on the tiny world of workflow_helpers.TINY (every table, figure and report),
    shared by every test of the session that only reads its outputs, or runs Snakemake in it without writing
    (`-n`, `--lint`, a dry run with an override). A test that changes the run takes `tiny_world_run_copy`."""
    helpers = _workflow_helpers()
    d = helpers.copy_workflow(tmp_path_factory.mktemp("tiny_world_run"))
    res = helpers.snakemake(d)
    assert res.returncode == 0, helpers.failure(d, res)
    return d


@pytest.fixture
def tiny_world_run_copy(tiny_world_run: Path, tmp_path: Path) -> Path:
    """A private copy of the shared tiny run for a test that changes it (params, outputs, a share): copied with
    the files' modification times (shutil.copy2), so Snakemake sees the same finished run and has nothing to do."""
    return Path(shutil.copytree(tiny_world_run, tmp_path / "tiny_world_run", symlinks=True))
