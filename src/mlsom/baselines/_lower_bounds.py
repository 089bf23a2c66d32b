"""The registry of the paper's lower bounds: Mulan's problem transformations over the three base
learners (``_batch``), and ML-kNN (``_mlknn``). It imports both, so neither imports the other
back."""

import functools

from ._batch import (
    BASE_LEARNERS,
    HOMER,
    BinaryRelevance,
    ClassifierChain,
    EnsembleOfClassifierChains,
    EnsembleOfPrunedSets,
    LabelPowerset,
    PrunedSets,
    RAkEL,
)
from ._mlknn import MLkNN

_BASE_NAMES = {"j48": "J48", "svm": "SVM", "knn": "kNN"}
_FAMILIES = [
    ("BR", BinaryRelevance),
    ("LP", LabelPowerset),
    ("RAkEL", RAkEL),
    ("CC", ClassifierChain),
    ("PS", PrunedSets),
    ("EPS", EnsembleOfPrunedSets),
    ("ECC", EnsembleOfClassifierChains),
    ("HOMER", HOMER),
]

#: The paper's lower bounds: name -> factory; ``factory(random_state=...)`` returns an unfitted
#: method with Mulan's default parameters (problem transformations x {J48, SVM, kNN}, ML-kNN).
LOWER_BOUNDS = {
    f"{family}-{_BASE_NAMES[base]}": functools.partial(cls, base=base)
    for family, cls in _FAMILIES
    for base in BASE_LEARNERS
}
LOWER_BOUNDS["ML-kNN"] = MLkNN

__all__ = ["LOWER_BOUNDS"]
