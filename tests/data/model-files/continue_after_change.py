"""Record again what a model file's continuation gives, after a change of the method.

    PYTHONPATH=src python tests/data/model-files/continue_after_change.py TAG NAME [NAME ...]

The model files of this folder and their ``NAME-expected.npz`` are the record of an earlier
mlsom, never rewritten. Loading is checked against that record for good. What the model does
next (its frozen predictions, the stream, the attributes after it) is the method's, and a change
of the method may change it: this script writes, for the fixtures it changes,
``NAME-expected-TAG.npz`` with those outputs as today's code gives them, and
``test_model_file_compat.METHOD_CHANGES`` names the change and its fixtures. It refuses to run
unless loading still gives the recorded digests, to overwrite a file, and to record outputs
that did not change (the change then needs no new record).
"""

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent.parent))  # the repository's root: the tests package

import mlsom  # noqa: E402
from mlsom import SOMStreamClassifier  # noqa: E402
from tests.model_file import test_model_file_compat as compat  # noqa: E402

CHANGED = ("Y_probe_loaded", "Y_stream", "Y_probe_after", "digests_after")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    tag, names = argv[0], argv[1:]
    head = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    for name in names:
        out = HERE / f"{name}-expected-{tag}.npz"
        if out.exists():
            sys.exit(f"{out} exists: a record is written once")
        with np.load(HERE / f"{name}-expected.npz", allow_pickle=False) as z:
            first = {k: z[k] for k in z.files}
        path = HERE / f"{name}.npz"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == str(first["model_sha256"])
        attrs = [str(n) for n in first["names"]]
        inputs = {k: first[k] for k in compat.INPUT_KEYS if k in first}
        got = compat.continuation(SOMStreamClassifier.load(path), inputs, attrs)
        loaded = [got["digests_loaded"][n] for n in attrs]
        if loaded != [str(d) for d in first["digests_loaded"]]:
            sys.exit(f"{name}: loading no longer gives the recorded state: not a method change")
        record = {k: got[k] for k in compat.PREDICTION_KEYS}
        record["digests_after"] = np.array([got["digests_after"][n] for n in attrs])
        differ = [
            k for k in CHANGED if not np.array_equal(np.asarray(record[k]), np.asarray(first[k]))
        ]
        if not differ:
            sys.exit(f"{name}: the continuation is the recorded one: nothing to record")
        record.update(
            names=first["names"],
            model_sha256=first["model_sha256"],
            change=np.array(tag),
            parent_commit=np.array(head),
            mlsom_version=np.array(mlsom.__version__),
        )
        np.savez_compressed(out, **record)
        rows = {k: int((record[k] != first[k]).any(axis=1).sum()) for k in compat.PREDICTION_KEYS}
        print(f"{out.name}: {', '.join(differ)} changed; rows that differ {rows}")


if __name__ == "__main__":
    main(sys.argv[1:])
