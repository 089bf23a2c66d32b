"""Fitted attributes, saves and copies are snapshots of the model between two calls that learn.

One thread adapts a model (predict_stream in chunks, with and without arriving labels, and
partial_fit) while others read every public fitted attribute, save it and copy it. Every value
read must be the attribute of the model after some whole number of those calls: the same calls
run first on a twin model, one after another, give the values allowed.
"""

import copy
import threading
import time

import numpy as np

from mlsom import SOMStreamClassifier

#: every public fitted attribute (the properties of the class)
ATTRIBUTES = sorted(
    name
    for name, value in vars(SOMStreamClassifier).items()
    if isinstance(value, property) and not name.startswith("_")
)


def _key(value):
    """A hashable fingerprint of an attribute's value (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _key(v)) for k, v in sorted(value.items())))
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, value)


def _read(model, name):
    try:
        return _key(getattr(model, name))
    except AttributeError:  # feature_names_in_ without named features
        return ("absent",)


def _fingerprints(model):
    return {name: _read(model, name) for name in ATTRIBUTES}


def _stream(seed=0, n=26_200, n_labels=8, n_features=12):
    """Multi-label rows (each label with probability 0.35, at least one): the sum of their labels'
    centres plus noise, all moving by 1 after half the stream."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_labels, n_features))
    Y = (rng.random((n, n_labels)) < 0.35).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, n_labels, size=n)] = 1
    X = Y @ centres + rng.normal(size=(n, n_features))
    X[n // 2 :] += 1.0
    return X, Y


def _calls(X, Y, chunk=2000):
    """The calls that adapt the model, in order: stream chunks, every third with labels that
    arrive meanwhile (partly known), and partial_fit of some earlier rows between chunks."""
    rng = np.random.default_rng(1)
    calls = []
    for i, start in enumerate(range(200, X.shape[0], chunk)):
        Xc = X[start : start + chunk]
        if i % 3 == 1:  # the labels of some of its rows, each as soon as it is classified
            rows = np.sort(rng.choice(Xc.shape[0], size=Xc.shape[0] // 10, replace=False))
            Yl = Y[start + rows].astype(np.int8)
            Yl[rng.random(Yl.shape) < 0.2] = -1
            after = (rows + 1).astype(np.int64)
            calls.append(("predict_stream", (Xc,), {"arrivals": (Xc[rows], Yl, after)}))
        else:
            calls.append(("predict_stream", (Xc,), {}))
        if i % 3 == 2:
            rows = rng.choice(start + Xc.shape[0], size=100, replace=False)
            calls.append(("partial_fit", (X[rows], Y[rows]), {}))
    return calls


def _fitted(variant):
    X, Y = _stream()
    model = SOMStreamClassifier(
        grid_size=3,
        variant=variant,
        corrections="tested",
        random_state=0,
        n_epochs=10,
        max_epochs=50,
        n_jobs=1,
    ).fit(X[:200], Y[:200])
    return model, _calls(X, Y)


def _allowed(model, calls):
    """For each attribute, its value after each whole number of calls -> those numbers."""
    twin = copy.deepcopy(model)
    allowed = {name: {} for name in ATTRIBUTES}
    for i in range(len(calls) + 1):
        if i:
            method, args, kwargs = calls[i - 1]
            getattr(twin, method)(*args, **kwargs)
        for name, key in _fingerprints(twin).items():
            allowed[name].setdefault(key, set()).add(i)
    return allowed


def _check_invariants(name, value):
    """What holds within one attribute of any model between two calls."""
    if name == "T_":
        np.testing.assert_array_equal(value, value.T)
        diag = np.diag(value)
        assert (value >= 0).all() and (value <= np.minimum.outer(diag, diag)).all()
    elif name == "P_":
        assert ((value >= 0) & (value <= 1)).all()
        # P[j, k] P[k, k] = T[j, k] / N is symmetric
        joint = value * np.diag(value)[None, :]
        np.testing.assert_allclose(joint, joint.T, rtol=1e-12, atol=0)


def test_attributes_saves_and_copies_are_snapshots_while_the_model_adapts(tmp_path):
    # the robust variant: the attributes of the paper's, and its acceptance offsets as well
    model, calls = _fitted("robust")
    allowed = _allowed(model, calls)
    # the calls change the attributes the test is about (else it could not fail)
    for name in ("T_", "P_", "weights_", "neuron_counts_", "n_seen_", "cardinality_"):
        assert len(allowed[name]) > len(calls) // 2, name
    for name in (
        "label_offsets_",
        "guards_",
        "correction_pairs_",
        "persistence_pairs_",
        "acceptance_offset_",
        "label_acceptance_offsets_",
    ):
        assert len(allowed[name]) >= 2, name  # changed by some call

    done = threading.Event()
    errors, reads, saved = [], [0], []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)
                done.set()

        return run

    @guarded
    def adapt():
        try:
            for method, args, kwargs in calls:
                getattr(model, method)(*args, **kwargs)
        finally:
            done.set()

    @guarded
    def read():
        while not done.is_set():
            for name in ATTRIBUTES:
                value = getattr(model, name, None)
                if value is None and name == "feature_names_in_":
                    key = ("absent",)
                else:
                    key = _key(value)
                    _check_invariants(name, value)
                assert key in allowed[name], f"{name} read half way through a call"
                reads[0] += 1

    @guarded
    def save_and_copy():
        i = 0
        while not done.is_set():
            path = tmp_path / f"m{i % 2}.npz"
            model.save(path)
            saved.append(_fingerprints(SOMStreamClassifier.load(path)))
            saved.append(_fingerprints(copy.deepcopy(model)))
            i += 1

    threads = [threading.Thread(target=f) for f in (adapt, read, save_and_copy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    assert reads[0] > len(ATTRIBUTES) and saved
    # a saved file and a copy are each one state: every attribute from the same calls
    for prints in saved:
        common = set.intersection(*(allowed[n].get(k, set()) for n, k in prints.items()))
        assert common, "a save or copy mixed the model before and after a call"
    # and the adapted model is the twin's
    final = len(calls)
    assert all(final in allowed[n][k] for n, k in _fingerprints(model).items())


def test_attributes_are_copies_not_views_of_the_model():
    model, calls = _fitted("robust")
    for method, args, kwargs in calls[:6]:
        getattr(model, method)(*args, **kwargs)
    before = _fingerprints(model)
    for name in ATTRIBUTES:
        value = getattr(model, name, None)
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, np.ndarray) and part.size and part.dtype.kind in "biuf":
                part[...] = ~part if part.dtype == bool else part + 1
    assert _fingerprints(model) == before


def test_a_waiting_writer_goes_before_readers_that_come_after_it():
    """Readers in a loop (a thread polling T_) never starve a stream: a reader that comes while
    a writer waits waits behind it."""
    lock = SOMStreamClassifier()._lock
    order = []

    def write():
        lock.acquire_write()
        order.append("write")
        lock.release_write()

    def read():
        lock.acquire_read()
        order.append("read")
        lock.release_read()

    lock.acquire_read()  # a reader at work
    writer = threading.Thread(target=write, daemon=True)
    reader = threading.Thread(target=read, daemon=True)
    try:
        writer.start()
        deadline = time.monotonic() + 10
        while getattr(lock, "_writers_waiting", 1) == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        reader.start()
        reader.join(0.1)
        assert order == []  # the later reader waits behind the waiting writer
    finally:
        lock.release_read()
    writer.join(10)
    reader.join(10)
    assert order == ["write", "read"]
