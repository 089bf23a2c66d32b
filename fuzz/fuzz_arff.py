"""Coverage-guided fuzzing of the ARFF reader (mlsom.datasets.load_arff / iter_arff) with atheris.

Each input is the content of an ARFF file, optionally followed by the separator ``\\0XML\\0`` and
the content of a Mulan XML file naming the labels. For each input the harness:

* writes the file(s) to a private temporary folder;
* reads the ARFF with ``load_arff`` in three configurations (labels from the file itself: MEKA
  ``-C n`` or the XML; the last attribute as the label with one-hot nominal features and
  ``missing="zero"``; the first attribute as the label with ``missing="mean"``);
* reads it again with ``iter_arff`` in small chunks, with the same options, and checks that the
  chunks are exactly ``load_arff``'s arrays, or that both raise the same error;
* checks the shapes and dtypes of what was read, and that every label is 0 or 1.

:class:`mlsom.datasets.ArffError` is the documented outcome for a malformed file; a ``ValueError``
is documented only for options that do not fit the file (``label_location`` with fewer
attributes than it asks for), a ``MemoryError`` only for rows that would outgrow the
memory budget (held to 512 MiB here). Any other exception propagates, and atheris reports it
as a crash with the input that caused it.

Run: see fuzz/README.md.
"""

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["mlsom.datasets"]):
    from mlsom.datasets import ArffError, iter_arff, load_arff

import numpy as np

from mlsom import _memory

XML_SEPARATOR = b"\0XML\0"
CHUNK = 3

_DIR = tempfile.mkdtemp(prefix="mlsom-fuzz-arff-")
ARFF = os.path.join(_DIR, "input.arff")
XML = os.path.join(_DIR, "labels.xml")

# the readers raise MemoryError before rows would outgrow the memory budget (a mutated compressed
# or sparse input can stand for millions of rows): held to 512 MiB here, below -rss_limit_mb
_memory.memory_limit = lambda: (512 << 20, "the fuzzer's limit")

CONFIGS = [
    {},
    {"label_location": ("last", 1), "nominal": "onehot", "missing": "zero"},
    {"label_location": ("first", 1), "nominal": "onehot", "missing": "mean"},
]


def _documented(exc, options):
    """Whether ``exc`` is a documented outcome of reading a malformed file with ``options``."""
    if isinstance(exc, (ArffError, MemoryError)):
        return True
    # label_location names more attributes than the file declares
    return "label_location" in options and type(exc) is ValueError and "label_location" in str(exc)


def _load(options):
    try:
        return load_arff(ARFF, **options), None
    except Exception as exc:
        if not _documented(exc, options):
            raise
        return None, exc


def _iterate(options):
    try:
        parts = list(iter_arff(ARFF, CHUNK, **options))
    except Exception as exc:
        if not _documented(exc, options):
            raise
        return None, exc
    return parts, None


def _check_dataset(d):
    n = d.X.shape[0]
    assert d.X.ndim == 2 and d.Y.ndim == 2, (d.X.shape, d.Y.shape)
    assert d.Y.shape[0] == n and d.X.dtype == np.float64 and d.Y.dtype == np.uint8
    assert d.X.shape[1] == len(d.feature_names) >= 1
    assert d.Y.shape[1] == len(d.label_names) >= 1
    assert ((d.Y == 0) | (d.Y == 1)).all()


def _check_same(options):
    d, load_error = _load(options)
    if isinstance(load_error, MemoryError):
        return  # iter_arff holds one chunk at a time: it may read what load_arff cannot hold
    parts, iter_error = _iterate(options)
    if isinstance(iter_error, MemoryError):
        return  # the chunks' estimate, made before reading, may refuse what load_arff held
    if d is None or parts is None:
        # a header error raises from both; an error in the data raises from both, same line
        assert d is None and parts is None, (options, load_error, iter_error)
        if not any("cannot decompress" in str(e) for e in (load_error, iter_error)):
            assert str(load_error) == str(iter_error), (options, load_error, iter_error)
        # else: load_arff reads larger blocks than iter_arff before it parses them, so with a
        # damaged compressed file either may see the damage or a faulty line first
        return
    _check_dataset(d)
    assert all(0 < x.shape[0] <= CHUNK for x, _ in parts)
    X = np.vstack([x for x, _ in parts]) if parts else np.empty((0, d.X.shape[1]))
    Y = np.vstack([y for _, y in parts]) if parts else np.empty((0, d.Y.shape[1]), np.uint8)
    np.testing.assert_array_equal(X, d.X)
    np.testing.assert_array_equal(Y, d.Y)
    if options.get("missing") in ("zero", "mean"):
        assert not np.isnan(d.X).any(), options


def TestOneInput(data: bytes) -> None:
    arff, sep, xml = data.partition(XML_SEPARATOR)
    with open(ARFF, "wb") as fh:
        fh.write(arff)
    if sep:
        with open(XML, "wb") as fh:
            fh.write(xml)
        _check_same({"xml": XML})
    for options in CONFIGS:
        _check_same(options)


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
