"""The paper's baselines, behind the ``experiments`` extra (scikit-learn, river).

Every method follows one of the interfaces of ``docs/methods.md``:

* lower bounds (``kind = "batch"``, scikit-learn): ``fit(X_train, Y_train)`` once, then
  ``predict(X_chunk)``; registry :data:`LOWER_BOUNDS` (Mulan's problem transformations over
  J48/SVM/kNN stand-ins, and ML-kNN);
* upper bounds (``kind = "incremental"``, river): ``fit`` learns the training set in order, then
  ``predict_learn(X_chunk, Y_chunk)`` predicts each row before learning it; registry
  :data:`UPPER_BOUNDS` (MOA/MEKA Hoeffding-tree learners and their ADWIN-bagging ensembles);
* MINAS-BR (``kind = "online"``): :class:`MINASBR`, the delayed-label competitor.

Registries map the paper's method names to factories: ``LOWER_BOUNDS["ECC-J48"](random_state=0)``
returns an unfitted method with the original software's default parameters.
"""

import importlib

from ._minas import MINASBR

# The lower and upper bounds need scikit-learn and river (the ``experiments`` extra); they are
# imported on first use, so MINAS-BR (NumPy only) works without them.
_LAZY = {
    **dict.fromkeys(
        [
            "HOMER",
            "BinaryRelevance",
            "ClassifierChain",
            "EnsembleOfClassifierChains",
            "EnsembleOfPrunedSets",
            "J48Tree",
            "LabelPowerset",
            "LinearSVM",
            "PrunedSets",
            "RAkEL",
            "make_base_learner",
        ],
        "._batch",
    ),
    **dict.fromkeys(
        [
            "UPPER_BOUNDS",
            "ADWINBaggingML",
            "BRHoeffdingTree",
            "CCHoeffdingTree",
            "ISOUPTree",
            "MLHoeffdingTree",
            "PSHoeffdingTree",
        ],
        "._incremental",
    ),
    "MLkNN": "._mlknn",
    "LOWER_BOUNDS": "._lower_bounds",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "HOMER",
    "LOWER_BOUNDS",
    "MINASBR",
    "UPPER_BOUNDS",
    "ADWINBaggingML",
    "BRHoeffdingTree",
    "BinaryRelevance",
    "CCHoeffdingTree",
    "ClassifierChain",
    "EnsembleOfClassifierChains",
    "EnsembleOfPrunedSets",
    "ISOUPTree",
    "J48Tree",
    "LabelPowerset",
    "LinearSVM",
    "MLHoeffdingTree",
    "MLkNN",
    "PSHoeffdingTree",
    "PrunedSets",
    "RAkEL",
    "make_base_learner",
]
