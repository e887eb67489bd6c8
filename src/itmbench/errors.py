"""The error contract: a failure about the inputs or the options is one line naming what was wrong; anything
else is a bug in itmbench.

`itmbench.cli.main` exits with `EXIT_INPUT` (2, as argparse does for a bad option) after printing
`itmbench <command>: error: <message>` when `input_error_message` recognises the failure as the input's
fault (a file that is missing, a folder or not UTF-8, a malformed CSV, JSON, YAML or parquet file, a
truncated array, an id beyond int64, a value the checks refuse: `InputError` and the `ValueError`s the
readers raise), and otherwise prints the traceback and a line saying it is a bug, exiting with `EXIT_BUG`.
A plain `ValueError` counts as the input's only where it was raised by itmbench's own code or by a reader
(pandas' and numpy's file readers, pyarrow, the standard library): one raised while drawing or computing
(matplotlib refusing negative error bars, scipy, torch) is a bug however much it looks like a complaint.

A reading site whose exceptions do not name its file (a `UnicodeDecodeError`, a `csv.Error`, numpy's
`EOFError` and `ValueError`s, a `BadZipFile`) wraps the read in `reading(path)`, which re-raises the
failure as an `InputError` naming the file (and, for text that is not UTF-8, the byte offset in the file).
"""

from __future__ import annotations

import csv
import json
import os
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

EXIT_INPUT = 2  # the input or the options are wrong: the message says what to change
EXIT_BUG = 3  # an internal error: a bug in itmbench (the traceback is printed)


class InputError(ValueError):
    """An input file, record or option that is not what it should be; the message names it and what was
    expected. A ValueError, so code that catches ValueError (argparse type functions, callers) still does."""


def utf8_offset(path: str | os.PathLike[str]) -> int | None:
    """The offset of the first byte of a file that is not UTF-8, or None (the file decodes, or cannot be read)."""
    try:
        Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start
    except OSError:
        return None
    return None


def not_utf8_message(path: str | os.PathLike[str], err: UnicodeDecodeError) -> str:
    """`<path>: not UTF-8 text: byte 0xE4 at offset 6610` (the offset in the file, not in the decoded chunk)."""
    offset = utf8_offset(path)
    offset = err.start if offset is None else offset
    byte = err.object[err.start : err.start + 1]
    shown = f"byte 0x{byte[0]:02X}" if byte else "a byte"
    return f"{path}: not UTF-8 text: {shown} at offset {offset} ({err.reason}); expected UTF-8"


@contextmanager
def reading(path: str | os.PathLike[str]) -> Iterator[None]:
    """Failures while reading `path` whose exception does not name it become an `InputError` that does."""
    try:
        yield
    except InputError:
        raise
    except UnicodeDecodeError as err:
        raise InputError(not_utf8_message(path, err)) from err
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from err
    except csv.Error as err:
        raise InputError(f"{path}: malformed CSV: {err}") from err
    except EOFError as err:
        raise InputError(f"{path}: ended early ({err or 'no data'}); expected a complete file") from err
    except OverflowError as err:
        raise InputError(f"{path}: a number out of range ({err}); expected ids and counts within int64") from err
    except zipfile.BadZipFile as err:
        raise InputError(f"{path}: not a readable archive ({err}); expected a complete file") from err
    except (KeyError, ValueError) as err:  # numpy's and the readers' own, when they do not name the file
        reason = err.args[0] if isinstance(err, KeyError) and len(err.args) == 1 else str(err)
        if str(path) in str(reason):
            raise
        raise InputError(f"{path}: {reason}") from err


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _os_error_message(err: OSError) -> str:
    path = err.filename
    if path is None:
        text = str(err)
        if isinstance(err, FileNotFoundError) and text and ":" not in text:  # pyarrow's: the bare path
            return f"{text}: no such file or folder"
        return text
    if err.filename2 is not None:
        path = f"{path} -> {err.filename2}"
    if isinstance(err, FileNotFoundError):
        return f"{path}: no such file or folder"
    if isinstance(err, IsADirectoryError):
        return f"{path}: is a folder; expected a file"
    if isinstance(err, NotADirectoryError):
        return f"{path}: a part of this path is a file; expected folders above a file (an output path under a file?)"
    if isinstance(err, FileExistsError):
        return f"{path}: exists and is not a folder; expected a folder (an output path under a file?)"
    if isinstance(err, PermissionError):
        return f"{path}: permission denied"
    return f"{path}: {err.strerror or err}"


def _is_arrow_error(err: BaseException) -> bool:
    arrow = sys.modules.get("pyarrow")
    return arrow is not None and isinstance(err, arrow.ArrowException)


def _is_yaml_error(err: BaseException) -> bool:
    yaml = sys.modules.get("yaml")
    return yaml is not None and isinstance(err, yaml.YAMLError)


# Installed packages whose plain ValueError is a reader's complaint about its file (the innermost frame of
# the traceback is in one of them); itmbench installed as a package is one.
_READER_MODULES = ("/itmbench/", "/pandas/io/", "/pyarrow/", "/numpy/lib/", "/yaml/")


def raised_by_code_that_reads(err: BaseException) -> bool:
    """Whether `err` was raised in itmbench's own code or in a reader (`_READER_MODULES`), not while a library
    drew or computed something (a ValueError from matplotlib, scipy or torch is a bug, not bad input)."""
    tb = err.__traceback__
    if tb is None:
        return True  # raised by hand (a test, a caller that builds the error): nothing says otherwise
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename.replace(os.sep, "/")
    if "/site-packages/" not in filename and "/dist-packages/" not in filename:
        return True  # itmbench (an editable checkout), the standard library's parsers, a caller's own code
    return any(name in filename for name in _READER_MODULES)


def input_error_message(err: BaseException) -> str | None:
    """The one-line message of a failure about the inputs or the options, or None for an internal error."""
    import pickle
    import zlib

    if isinstance(err, InputError):
        message = str(err)
    elif isinstance(err, UnicodeDecodeError):  # a ValueError: before the ValueErrors
        message = f"not UTF-8 text: {err} (the reader did not name the file)"
    elif isinstance(err, json.JSONDecodeError):
        message = f"not valid JSON: {err}"
    elif isinstance(err, KeyError):  # str() of a KeyError quotes its message
        message = err.args[0] if len(err.args) == 1 and isinstance(err.args[0], str) else str(err)
    elif isinstance(err, OSError):
        message = _os_error_message(err)
    elif isinstance(err, OverflowError):
        message = f"a number out of range ({err}); expected ids and counts within int64"
    elif isinstance(err, csv.Error):
        message = f"malformed CSV: {err}"
    elif isinstance(err, EOFError):
        message = f"a file ended early ({err or 'no data'}); expected a complete file"
    elif _is_arrow_error(err):
        message = f"not a readable parquet/Arrow file: {err}"
    elif _is_yaml_error(err):
        message = f"not valid YAML: {err}"
    elif isinstance(err, (zipfile.BadZipFile, zlib.error, pickle.UnpicklingError)):
        message = f"a corrupt archive or checkpoint: {err}"
    elif isinstance(err, ValueError):
        if not raised_by_code_that_reads(err):
            return None
        message = str(err)
    elif isinstance(err, RuntimeError) and not isinstance(err, (NotImplementedError, RecursionError)):
        message = str(err)  # an external tool's failure (dvc), a checkpoint that does not fit its model
    else:
        return None
    return _one_line(message) or type(err).__name__
