"""Run files of the experiments (``mlsom.experiment``, ``mlsom experiment --novelty-streams``):
one finished run's record as JSON, written atomically and read back with a bound on its size.
"""

import json
import os
import stat
import time
from pathlib import Path

# A run file holds one run's counts and curves: a few hundred kB at most. Anything else in its
# place (a FIFO, a directory, a huge or damaged file) is not a finished run.
RUN_FILE_MAX_BYTES = 64 * 2**20


def finished(path):
    """Whether ``path`` holds a finished run: a regular file of a plausible size."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return stat.S_ISREG(st.st_mode) and 0 < st.st_size <= RUN_FILE_MAX_BYTES


def read_record(path):
    """The JSON object of a run file (a ValueError when it is larger than RUN_FILE_MAX_BYTES or
    holds no JSON object; OSError as reading raises it)."""
    with open(path, "rb") as f:
        raw = f.read(RUN_FILE_MAX_BYTES + 1)
    if len(raw) > RUN_FILE_MAX_BYTES:
        raise ValueError(f"larger than {RUN_FILE_MAX_BYTES} bytes")
    record = json.loads(raw)
    if not isinstance(record, dict):
        raise ValueError("not a run record")
    return record


def store(result, path):
    """Write ``result`` (JSON-serialisable) to ``path``: a new temporary file of this process's
    own (never an existing file, FIFO or link), then an atomic rename, so that a run file is
    either complete or absent."""
    tmp = Path(f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(result))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
