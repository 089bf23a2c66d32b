"""A fixed set of models and predictions whose hashes are compared across platforms.

``.ci/platform_hashes.py`` runs every case below natively (at every SIMD level the processor
has) and under emulation (aarch64, and an x86-64 processor without AVX), and compares the SHA-256
digests: the compiled core promises the same bits on every platform, so a model fitted on one
machine and the predictions it makes are those of any other.

Each case fits a model on the first part of a stream and records four digests:

* ``fit``: every fitted attribute after ``fit``;
* ``predict``: frozen ``predict`` on the rest of the stream;
* ``stream``: ``predict_stream`` on the rest of the stream (the model adapts after each row);
* ``after``: every fitted attribute after that stream, and frozen ``predict`` from it; in the
  cases marked ``labels``, after ``partial_fit`` of the rest of the stream's true labels too
  (one in seven unknown), which moves neurons and sets the labels' acceptance offsets.

The cases cover float64 and float32 input, both neighbourhoods, both averOut distances, both zero
co-occurrence rules, both variants, few and many features (short and long vector loops, with
remainders), and three kinds of stream: clustered instances drawn with NumPy's ``default_rng``
here, the same with many labels, and ``mlsom.datasets.moa_spherical`` (drifting kernels). The
sizes are kept small: under emulation every floating-point instruction is slow.

This module is no test file (pytest does not collect it); it needs NumPy and mlsom only.
"""

import hashlib
import warnings

import numpy as np

# the fitted attributes of SOMStreamClassifier that a digest covers (tests/core/test_determinism.py
# compares these and averout_ bit for bit on one machine). Not averout_: it is exp of the
# state's log_averout_ (covered) by the C library, whose exp glibc picks by processor (an FMA
# variant where there is FMA), and the variants may round differently in the last bit
# (docs/platforms.md)
FITTED_ATTRIBUTES = (
    "weights_",
    "neuron_counts_",
    "log_averout_",
    "grid_positions_",
    "T_",
    "P_",
    "n_seen_",
    "cardinality_",
    "k_nn_",
    "n_iter_",
    "n_features_in_",
    "n_labels_",
    "acceptance_offset_",
    "label_acceptance_offsets_",
    "label_offsets_",
    "labelled_cardinality_",
    "guards_",
    "supports_",
    "guards_on_",
)
PARTS = ("fit", "predict", "stream", "after")


def clustered_stream(n, n_features, n_labels, seed):
    """Clustered instances with correlated labels: label j pulls x towards centre j."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_labels, n_features))
    Y = (rng.random((n, n_labels)) < 0.3).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, n_labels, n)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(scale=0.7, size=(n, n_features))
    # a slow drift over the stream, so that predict_stream moves the neurons
    X += np.linspace(0.0, 1.5, n)[:, None] * rng.normal(size=n_features)
    return X, Y


def moa_stream(n, n_features, n_labels, seed):
    """mlsom.datasets.moa_spherical: moving hyperspherical kernels, label cardinality ~1.4."""
    from mlsom.datasets import moa_spherical

    X, Y, _ = moa_spherical(
        n_labels, n_features, n, shift_every=20, seed=seed, target_cardinality=1.4
    )
    return X, Y


STREAMS = {
    # name: (generator, n instances, n features, n labels, seed, n training rows)
    "clusters": (clustered_stream, 500, 6, 4, 11, 200),
    "wide": (clustered_stream, 300, 37, 5, 12, 150),
    "moa": (moa_stream, 500, 5, 4, 13, 200),
}


def _cases():
    cases = []
    i = 0
    for stream in STREAMS:
        for dtype in ("float64", "float32"):
            for neighborhood in ("bubble", "gaussian"):
                cases.append(
                    {
                        "name": f"{stream}-{dtype}-{neighborhood}",
                        "stream": stream,
                        "dtype": dtype,
                        "labels": stream != "wide",
                        "params": {
                            "grid_size": 4 if stream == "wide" else 3 + i % 2,
                            "neighborhood": neighborhood,
                            "averout_distance": ("euclidean", "sqeuclidean")[i // 2 % 2],
                            "zero_cooccurrence": ("reject", "skip")[i % 3 == 2],
                            "n_epochs": 30,
                            "max_epochs": 200,
                            "random_state": 100 + i,
                        },
                    }
                )
                i += 1
    # the robust variant (stale neurons dropped at fit, the acceptance offset online) on the
    # drifting stream, in both types
    for dtype in ("float64", "float32"):
        cases.append(
            {
                "name": f"moa-{dtype}-robust",
                "stream": "moa",
                "dtype": dtype,
                "labels": True,
                "params": {
                    "grid_size": 3,
                    "variant": "robust",
                    "n_epochs": 30,
                    "max_epochs": 200,
                    "random_state": 200 + i,
                },
            }
        )
        i += 1
    return cases


CASES = _cases()


def _feed(h, value):
    """Add one value to a hash, with its type, dtype and shape: equal digests mean equal bits."""
    if value is None:
        h.update(b"N")
    elif isinstance(value, list | tuple):
        h.update(b"L%d:" % len(value))
        for v in value:
            _feed(h, v)
    elif isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        h.update(b"A%s%s:" % (a.dtype.str.encode(), str(a.shape).encode()))
        h.update(a.tobytes())
    elif isinstance(value, bool | int | float | np.integer | np.floating):
        # repr of a Python float is exact (it reads back to the same bits)
        h.update(b"S%s:%s;" % (type(value).__name__.encode(), repr(value).encode()))
    else:
        raise TypeError(f"cannot hash a {type(value).__name__}")


def _digest(named_values):
    """The digest of (name, value) pairs, and the digest of each value alone by its name."""
    h = hashlib.sha256()
    each = {}
    for name, value in named_values:
        h.update(name.encode() + b"=")
        _feed(h, value)
        one = hashlib.sha256()
        _feed(one, value)
        each[name] = one.hexdigest()
    return h.hexdigest(), each


def _fitted(model):
    return [(name, getattr(model, name)) for name in FITTED_ATTRIBUTES]


def run_case(case):
    """Fit and run one case. Returns ({part: digest}, {part: {name: digest of that value}}) for
    the four PARTS; the second tells which attributes differ when a part does."""
    from mlsom import SOMStreamClassifier

    make, n, n_features, n_labels, seed, n_train = STREAMS[case["stream"]]
    X, Y = make(n, n_features, n_labels, seed)
    X = np.ascontiguousarray(X, dtype=case["dtype"])
    model = SOMStreamClassifier(**case["params"])
    with warnings.catch_warnings():
        # a map that has not settled within max_epochs is a result like any other here
        warnings.simplefilter("ignore")
        model.fit(X[:n_train], Y[:n_train])
    rest = X[n_train:]
    digests, detail = {}, {}
    # each part is hashed at once: some attributes are views that predict_stream changes
    digests["fit"], detail["fit"] = _digest(_fitted(model))
    digests["predict"], detail["predict"] = _digest([("predict", model.predict(rest))])
    Y_stream = model.predict_stream(rest)
    digests["stream"], detail["stream"] = _digest([("predict_stream", Y_stream)])
    if case.get("labels"):
        Y_known = np.asarray(Y[n_train:], dtype=np.int8)
        Y_known.flat[::7] = -1
        model.partial_fit(rest, Y_known)
    after = _fitted(model) + [("predict", model.predict(rest))]
    digests["after"], detail["after"] = _digest(after)
    return digests, detail


def run_all(cases=CASES):
    """({case name: {part: digest}}, {case name: {part: {name: digest}}}) for every case."""
    digests, detail = {}, {}
    for case in cases:
        digests[case["name"]], detail[case["name"]] = run_case(case)
    return digests, detail
