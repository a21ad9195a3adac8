"""Compiled definitions kept on disk, so that the SymPy work (building a definition,
``sympy.diff``, common-subexpression elimination and code generation, 0.1–1 s per
quantity, row length and structure) is done once, not in every process.

An entry is the plain data of :func:`spec.reference._plan` (symbol names and generated
Python sources) as JSON, in ``$LOSSCHECK_CACHE`` (default ``$XDG_CACHE_HOME/losscheck``,
else ``~/.cache/losscheck``), ``definitions/<key>.json``.  The key hashes the source of
every module of this package, SymPy's and mpmath's versions and Python's: editing the
spec invalidates every entry.  Writes go to a temporary file renamed into place, so
concurrent processes (pytest-xdist workers) never read half an entry; an unreadable or
unwritable cache is skipped (the definition is derived as without it).
``LOSSCHECK_CACHE=off`` disables it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

FORMAT = 1  # bump when the entries' layout changes


def directory() -> Path | None:
    """The cache folder, or None when disabled."""
    env = os.environ.get("LOSSCHECK_CACHE")
    if env is not None and env.strip().lower() in ("", "0", "off", "no", "false"):
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "losscheck"


@functools.cache
def _fingerprint() -> str:
    import mpmath
    import sympy
    h = hashlib.sha256(f"{FORMAT} {sympy.__version__} {mpmath.__version__} {sys.version_info[:2]}".encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _path(key) -> Path | None:
    d = directory()
    if d is None:
        return None
    digest = hashlib.sha256(f"{_fingerprint()} {key!r}".encode()).hexdigest()[:32]
    return d / "definitions" / f"{digest}.json"


def load(key):
    """The entry stored under ``key`` (a repr-able tuple), or None."""
    path = _path(key)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    return entry.get("plan") if entry.get("key") == repr(key) else None


def store(key, plan) -> None:
    """Write ``plan`` under ``key`` atomically; a cache that cannot be written is skipped."""
    path = _path(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"key": repr(key), "plan": plan}, f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
