"""What more than one study uses: the repository's files the studies read as modules, a run's
scores, the labels experiment's streams and checks, and the package's own labelled update under
the delayed-label protocol.

The studies run as modules from the repository's root (``python -m studies.NAME``, see
studies/README.md): Python puts the current folder first on its module path, so the studies import
this file as ``studies._shared`` and the tests' exact NumPy reference of the method (NumPy only)
as ``tests.helpers.reference``, as the tests do; nothing is added to the path.
``benchmark_streams()`` reads ``benchmarks/streams.py``, the benchmarks' synthetic data (NumPy
only), as a module by file name, under a name of its own.
"""

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np

from mlsom.evaluation import StreamEvaluation

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


def _module_from_file(path, name):
    """The module of the file ``path``, imported once as ``name``."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def benchmark_streams():
    """``benchmarks/streams.py``: the benchmarks' synthetic stream and its label arrivals."""
    return _module_from_file(ROOT / "benchmarks" / "streams.py", "mlsom_benchmark_streams")


# --------------------------------------------------------------------------- the robust variant


def scores(res):
    """A run's mean over the windows of the cumulative macro F, and the predicted and true
    cardinality of its whole test stream."""
    curve = StreamEvaluation.from_dict(res).curve("macro_f1", cumulative=True)
    total = np.asarray(res["label_counts"], dtype=np.int64).sum(axis=0)  # (L, 4)
    n_test = res["n_test"]
    return {
        "macro_f": float(np.mean(curve)),
        "card_pred": float((total[:, 0] + total[:, 1]).sum() / n_test),
        "card_true": float((total[:, 0] + total[:, 2]).sum() / n_test),
    }


# --------------------------------------------------------------------------- labels that arrive

# the streams of docs/results.md's "Labels that arrive" (labels_corrections.py, labels_auto.py)
STREAMS = [
    "MOA-Spher-2C-2A",
    "Scene",
    "Yeast",
    "MOA-Spher-5C-2A",
    "MOA-Spher-5C-3A",
    "MOA-Spher-3C-2A",
    "Mult-Non-Spher-HP",
    "Mult-Non-Spher-RT",
    "Mult-Non-Spher-WF",
    "Mult-Spher-RB",
]
GENERATED = [s for s in STREAMS if s.startswith(("MOA-Spher-5", "MOA-Spher-3", "Mult-"))]
UPPER = ["BR-HT", "CC-HT", "MLHT", "ISOUPTree"]

# the experiment's summary: a method's score with labels is named METHOD-fFRACTION-lDELAY
LABEL = re.compile(r"^(?P<method>.+?)-f(?P<fraction>[0-9.e+-]+)-l(?P<delay>[0-9]+)$")


def parse(summary):
    """{stream: {method: {(fraction, delay): score}}} and {stream: {method: score}} (no labels)."""
    with_labels, without = {}, {}
    for stream, scores in summary["mean_macro_f1"].items():
        for label, value in scores.items():
            m = LABEL.match(label)
            if m:
                key = (float(m["fraction"]), int(m["delay"]))
                with_labels.setdefault(stream, {}).setdefault(m["method"], {})[key] = value
            else:
                without.setdefault(stream, {})[label] = value
    return with_labels, without


def arguments_and_bounds(description):
    """The command line of labels_corrections.py and labels_auto.py (--seeds, --n-jobs,
    --data-home, --json)
    and the labels experiment's scores, {stream: {method: {(fraction, delay): score}}}."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--data-home", default=str(ROOT / "tests" / "data"))
    ap.add_argument("--json", help="write every run's result here, one JSON object a line")
    summary = json.loads((RESULTS / "labels-experiment-summary.json").read_text())
    return ap.parse_args(), parse(summary)[0]


def upper_bounds(with_labels, stream, f, delay):
    """The River upper bounds' scores on a stream at a fraction and delay, by name."""
    return {m: v[(f, delay)] for m, v in with_labels[stream].items() if m in UPPER}


def checks(name, score, base, with_labels):
    """The issue's checks for one method, as a line: score(stream, fraction, delay) its mean
    macro F with labels, base(stream) without."""

    def ub(s, f, delay):
        return upper_bounds(with_labels, s, f, delay)

    half = []
    for s in GENERATED:
        top = max(ub(s, 1.0, 0).values())
        # (no gap to close, where mlsom without labels is above the best upper bound with every
        # label: then the labels must not lower its score)
        if score(s, 0.1, 1000) - base(s) >= 0.5 * max(top - base(s), 0.0):
            half.append(s)
    beats = {
        f: [s for s in STREAMS if all(score(s, f, 1000) > v for v in ub(s, f, 1000).values())]
        for f in (0.01, 0.1)
    }
    near = [s for s in STREAMS if score(s, 1.0, 0) >= max(ub(s, 1.0, 0).values()) - 0.05]
    return (
        f"{name}: half the gap closed (10 %, D = 1,000) on {len(half)} of {len(GENERATED)} "
        f"generated streams (not: {', '.join(s for s in GENERATED if s not in half) or 'none'}); "
        f"every River upper bound beaten on {len(beats[0.01])} of {len(STREAMS)} streams at 1 %, "
        f"{len(beats[0.1])} at 10 %; within 0.05 of the best with every label on {len(near)} of "
        f"{len(STREAMS)} (not: {', '.join(s for s in STREAMS if s not in near) or 'none'})"
    )


# the package itself, run by the compiled core, as labels_variants.py's rows of these names and
# labels_corrections.py's runs: name: (what it is, {"native": its parameters})
NATIVE = {
    "native": (
        "the package itself, corrections='strong' (its default), run by the compiled core, "
        "without label persistence (which came later, and acts on prompt labels only)",
        {"native": {"label_persistence": "off"}},
    ),
    "native-tested": (
        "the package itself with corrections='tested' (the paired test, with each other choice "
        "kept as a place rather than a difference), run by the compiled core, without label "
        "persistence",
        {"native": {"corrections": "tested", "label_persistence": "off"}},
    ),
    "native-persist": (
        "the package's defaults: corrections='strong', label_persistence='tested'",
        {"native": {}},
    ),
    "native-tested-persist": (
        "corrections='tested', label_persistence='tested'",
        {"native": {"corrections": "tested"}},
    ),
}


def native_method(variant, d, seed):
    """The package with the parameters of ``NATIVE[variant]``."""
    from mlsom.experiment import make_method

    return make_method("mlsom", grid_size=d, seed=seed, params=NATIVE[variant][1]["native"])


def evaluate_labels(job, method_for):
    """One run of the delayed-label protocol: job = (variant, stream, d, seed, fraction, delay,
    data_home, generator), the stream at 20,000 instances (the MOA-Spher streams from
    ``generator``), label seed 0, the method ``method_for(variant, d, seed)``. Returns the job's
    settings and the mean over the windows of the cumulative macro F."""
    from mlsom.experiment import _load_stream, _stream_source
    from mlsom.protocol import evaluate

    variant, stream, d, seed, fraction, delay, data_home, generator = job
    source = _stream_source(stream, generator if stream.startswith("MOA-Spher") else None)
    ds = _load_stream(stream, 20000, data_home, source)
    method = method_for(variant, d, seed)
    res = evaluate(method, ds, label_fraction=fraction, label_delay=delay, label_seed=0, seed=seed)
    return dict(variant=variant, stream=stream, d=d, seed=seed, fraction=fraction, delay=delay,
                macro_f1=res.mean("macro_f1"))  # fmt: skip


def run_native(job):
    """``evaluate_labels`` of a variant of ``NATIVE``."""
    return evaluate_labels(job, native_method)
