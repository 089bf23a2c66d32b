"""The protocol on a novelty stream: a method runs on a stream whose labelled set lacks some labels,
and MINAS-BR's evaluation scores it (:func:`mlsom.evaluation.evaluate_novelty`).

Public through :mod:`mlsom.protocol` (:func:`evaluate_novelty_stream`).
"""

import inspect

import numpy as np

from ._novelty import evaluate_novelty
from ._validation import check_count, check_option, describe

__all__ = ["evaluate_novelty_stream"]

_KINDS = ("online", "batch", "incremental")


def _takes(method, name):
    try:
        return name in inspect.signature(method.predict_stream).parameters
    except (TypeError, ValueError, AttributeError):
        return False


def _check_dataset(dataset):
    for name in ("X_train", "Y_train", "X_stream", "Y_stream", "known_labels"):
        if not hasattr(dataset, name):
            raise TypeError(
                f"dataset must be a novelty stream (mlsom.datasets.load_novelty) with X_train, "
                f"Y_train, X_stream, Y_stream and known_labels, got {describe(dataset)}"
            )
    return [int(c) for c in dataset.known_labels]


def evaluate_novelty_stream(
    method,
    dataset,
    *,
    kind=None,
    fit_labels=None,
    n_windows=50,
    chunk_size=1000,
    association="jaccard",
    associate_with="new",
    zero_division=0,
):
    """Run a method on a novelty stream and evaluate it as MINAS-BR's evaluator does.

    ``online`` and ``batch`` methods are fitted on the labelled set's known labels only (the
    columns ``dataset.known_labels``: a new label is not a column they know) and then classify
    the stream chunk by chunk, never seeing a label; a method whose ``predict_stream`` takes
    ``return_patterns`` (MINAS-BR) also gives its novelty patterns and the rows it left unknown.
    ``incremental`` methods (the supervised upper bounds) are fitted on every column and learn
    every true label after predicting it: they know every label, so their predictions are scored
    with every label known and no pattern (``fit_labels``).

    Parameters
    ----------
    method : estimator
        A method of :mod:`mlsom.baselines`, :class:`mlsom.SOMStreamClassifier` or any object of a
        ``kind`` of :data:`mlsom.protocol.KINDS`.
    dataset : NoveltyDataset
        A stream of :func:`mlsom.datasets.load_novelty`.
    kind : {"online", "batch", "incremental"}, optional
        Run the method under this protocol instead of its own ``kind``.
    fit_labels : {"known", "all"}, optional
        The columns the method is fitted on and predicts: the known labels, or every label of
        the stream (scored then with every label known). Default: "all" for incremental methods,
        "known" for the others. "all" for a reference predictor that is told how many labels the
        stream will have (the every-label predictor then predicts the new labels too).
    n_windows : int, default=50
    chunk_size : int, default=1000
        Rows given to the method at a time.
    association, associate_with, zero_division : optional
        As :func:`mlsom.evaluation.evaluate_novelty`.

    Returns
    -------
    NoveltyEvaluation
    """
    known = _check_dataset(dataset)
    kind = check_option("kind", getattr(method, "kind", None) if kind is None else kind, _KINDS)
    chunk_size = check_count("chunk_size", chunk_size, low=1)
    Y = np.asarray(dataset.Y_stream)
    L = Y.shape[1]
    if fit_labels is None:
        fit_labels = "all" if kind == "incremental" else "known"
    fit_labels = check_option("fit_labels", fit_labels, ("known", "all"))
    cols = list(range(L)) if fit_labels == "all" else known
    method.fit(dataset.X_train, np.asarray(dataset.Y_train)[:, cols])
    patterns = kind == "online" and _takes(method, "return_patterns")
    preds, unknown, votes = [], [], []
    for start in range(0, len(Y), chunk_size):
        X_c = np.array(dataset.X_stream[start : start + chunk_size])
        if kind == "incremental":
            out = method.predict_learn(X_c, Y[start : start + chunk_size].copy())
        elif kind == "batch":
            out = method.predict(X_c)
        elif patterns:
            out, unk, P = method.predict_stream(X_c, return_unknown=True, return_patterns=True)
            unknown.append(unk)
            votes.append(P)
        else:
            out = method.predict_stream(X_c)
        preds.append(np.asarray(out, dtype=np.uint8).reshape(len(X_c), len(cols)))
    P_all = np.concatenate(preds) if preds else np.zeros((0, len(cols)), np.uint8)
    if votes:
        n_p = max(v.shape[1] for v in votes)
        P_all = np.concatenate(
            [P_all, np.concatenate([np.pad(v, ((0, 0), (0, n_p - v.shape[1]))) for v in votes])],
            axis=1,
        )
    return evaluate_novelty(
        Y,
        P_all,
        cols,
        unknown=np.concatenate(unknown) if unknown else None,
        n_windows=n_windows,
        association=association,
        associate_with=associate_with,
        zero_division=zero_division,
        label_names=[str(n) for n in dataset.label_names],
    )
