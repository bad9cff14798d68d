"""Run files: read CSV or Parquet predictions into :class:`~valuecore.Predictions`.

:func:`load_runs` reads several files into :class:`ModelRun` objects (one per
model, split by split) with a :class:`LoadReport`; :func:`load_run_file`
reads one. Bad input never raises: each problem is a :class:`LoadProblem`
naming the file, the column and the rows. :func:`check_comparable` says
whether runs can be compared item by item. A run's identity, the SHA-256 of
its file, is computed when first asked for; :func:`file_sha256` gives it for
any file, remembering it as the loader does. The format is described in
``docs/run-format.md``. The everyday names are also at the top of the package.

Uses pandas (and pyarrow for Parquet).
"""

from ._io import runfiles as _runfiles
from ._io.runfiles import *  # noqa: F403  (exactly the names of _io/runfiles.py's __all__)

__all__ = list(_runfiles.__all__)
