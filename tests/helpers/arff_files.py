"""ARFF files in tests: write one, expect the error naming its line, and what both readers make
of a file (the options the fuzzing regressions read each input with)."""

from pathlib import Path

import numpy as np
import pytest

from mlsom.datasets import ArffError, iter_arff, load_arff


def write(tmp_path: Path, text: str, name: str = "t.arff") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def raises_at(line: int, match: str | None = None):
    """pytest.raises(ArffError) whose message names the line."""
    pattern = rf", line {line}: "
    if match is not None:
        pattern += rf".*{match}"
    return pytest.raises(ArffError, match=pattern)


OPTIONS = [
    {},
    {"label_location": ("last", 1), "nominal": "onehot", "missing": "zero"},
    {"label_location": ("first", 1), "nominal": "onehot", "missing": "mean"},
]


def outcomes(path, options, xml=None):
    """What load_arff and iter_arff (chunks of 3) make of a file: arrays or an ArffError."""
    if xml is not None:
        options = {**options, "xml": xml}
    out = []
    for read in (lambda: load_arff(path, **options), lambda: list(iter_arff(path, 3, **options))):
        try:
            result = read()
        except ArffError as exc:
            out.append(str(exc))
            continue
        if isinstance(result, list):
            out.append(np.vstack([x for x, _ in result]) if result else None)
        else:
            out.append(result.X if len(result.X) else None)
    return out
