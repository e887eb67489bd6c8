"""Reading a released file with its declared loader: the one step of the released-file registry that reaches a paper.

A declaration's `loader` ('module:function') names a function of ``itmbench.papers.<module>.released``, reached
through the paper registry's `package_part`. It lives here, not in `itmbench.sources.released`, because the
papers' loaders import that module's checks (`check_released`, `check_count`): the registry of files imports no
paper, and no paper's loader imports the step that loads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from itmbench.papers.registry import package_part
from itmbench.sources.released import ReleasedFile, check_released, released_file, resolve


def loader_of(released: ReleasedFile) -> Callable[..., Any]:
    """The loader function a declaration names (its `loader`: 'module:function' of papers.<module>.released)."""
    if released.loader is None:
        raise ValueError(f"released file {released.key!r} has no loader (it is not read as a table)")
    module_name, _, function_name = released.loader.partition(":")
    function = getattr(package_part(module_name, "released"), function_name, None)
    if not callable(function):
        raise ValueError(f"released file {released.key!r}: loader {released.loader!r} is not a function")
    return function


def load_released(key: str, mirror: str | os.PathLike, **overrides: Any) -> Any:
    """Resolve a released file in a mirror and read it with its declared loader (which checks md5 and count)."""
    released = released_file(key)
    path = resolve(released, mirror, must_exist=True)
    check_released(path, key)
    return loader_of(released)(path, **{**released.args, **overrides})
