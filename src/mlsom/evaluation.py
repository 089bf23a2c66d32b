"""Multi-label evaluation measures, evaluation windows and the stored result of a stream run.

Measures (``docs/protocol.md`` 3.1), for true and predicted 0/1 label matrices Y, Ŷ of shape
(n, L):

* label-based, from the per-label confusion counts TP, FP, FN, TN (:func:`confusion_counts`):
  macro F (the mean of the per-label F values, the paper's measure), macro precision and recall
  (means of the per-label values), micro F, precision and recall (one value from the counts pooled
  over labels), Hamming loss, MINAS-BR's F1M (the F of the macro precision and the macro recall,
  :func:`f1m`), the predicted and the true cardinality (labels per instance) and the cardinality
  error (their absolute difference);
* example-based, averaged over instances: F, precision, recall and accuracy (Jaccard index) of the
  true and predicted label sets, and subset accuracy (exact match).

**Zero division** (``docs/protocol.md`` 3.2). A ratio whose denominator is 0 (a label absent from
a window and never predicted; an instance with no true and no predicted label; precision when
nothing is predicted) takes a value set by ``zero_division``:

* ``1`` (default): the value 1, as Mulan does for F and Jaccard and as scikit-learn's
  ``zero_division=1.0`` does for every ratio;
* ``0``: the value 0 (scikit-learn ``zero_division=0.0``, MEKA's macro F, River);
* ``"exclude"`` (``numpy.nan`` is accepted as a synonym): the label (macro measures) or instance
  (example-based measures) is left out of the mean, as scikit-learn's ``zero_division=np.nan``;
  NaN when nothing is left;
* ``"mulan"``: Mulan's exact rule: 1 when *both* sets are empty (TP = FP = FN = 0, or an instance
  with no true and no predicted label), 0 when only one of them is.

For F and Jaccard the denominator is 0 only when both sets are empty, so ``1`` and ``"mulan"``
coincide there: macro F with the default is Mulan's macro F. They differ only for precision and
recall, when exactly one set is empty (nothing predicted for a label that occurs, or a label
predicted that does not occur): ``1`` gives 1 there, like scikit-learn, ``"mulan"`` gives 0.
Hamming loss, subset accuracy and the cardinalities have no 0/0 case (NaN for zero instances);
F1M takes the convention for the per-label precision and recall it averages.

**What is stored per window.** Every measure and every convention is a function of two small
integer tables, which :class:`StreamEvaluation` keeps for each evaluation window:

* the per-label confusion counts, shape (L, 4) (:func:`confusion_counts`);
* the *example counts* (:func:`example_counts`): a histogram of the per-instance triples
  (|Y_i ∩ Ŷ_i|, |Y_i|, |Ŷ_i|), one row (intersection, true size, predicted size, number of
  instances) per distinct triple, at most (L + 1)³ rows and in practice a few dozen. Every
  example-based measure (any F-beta included) depends on an instance only through its triple, and
  the instance is an exact match iff the three numbers are equal.

Both are exact integers and add up over windows, so cumulative and per-window curves of any
measure under any convention are recomputed from them without re-running a method. The
predictions themselves (bit-packed, n × ⌈L/8⌉ bytes) can be kept as well, for new window layouts.

**Windows** (``docs/protocol.md`` 3.3): W windows over a test stream T of n rows; window w
(0-based) is T[⌊wn/W⌋ : ⌊(w+1)n/W⌋] (:func:`window_edges`); sizes differ by at most one.
Alternatively, windows of a fixed number of rows, the last one possibly shorter. Curves are
cumulative by default (the value at window w uses every test row from the start of the stream to the
end of window w, as in the paper) or per window.

**Novelty streams** (``docs/protocol.md`` 3.5): :func:`evaluate_novelty` evaluates predictions
whose further columns are novelty patterns as MINAS-BR's evaluator does: at the end of each
window every pattern not yet associated is associated with the new true label it matches best
(:func:`association_scores`), rows left unknown are left out and counted apart, and F1M (the F
of the macro precision and recall) is reported over the labels the model knows or over every
label from its first appearance (:class:`NoveltyEvaluation`).
"""

from ._measures import (
    DESCRIPTIVE,
    LOWER_IS_BETTER,
    MEASURES,
    compute_measure,
    confusion_counts,
    example_accuracy,
    example_counts,
    example_f1,
    example_precision,
    example_recall,
    f1m,
    hamming_loss,
    macro_f1,
    macro_precision,
    macro_recall,
    merge_example_counts,
    micro_f1,
    micro_precision,
    micro_recall,
    multilabel_scores,
    subset_accuracy,
)
from ._novelty import (
    NOVELTY_ASSOCIATIONS,
    NOVELTY_CONVENTIONS,
    NOVELTY_MEASURES,
    NoveltyEvaluation,
    association_scores,
    evaluate_novelty,
)
from ._results import StreamEvaluation, average_curves, evaluate_predictions
from ._windows import window_edges

__all__ = [
    "DESCRIPTIVE",
    "LOWER_IS_BETTER",
    "MEASURES",
    "NOVELTY_ASSOCIATIONS",
    "NOVELTY_CONVENTIONS",
    "NOVELTY_MEASURES",
    "NoveltyEvaluation",
    "StreamEvaluation",
    "association_scores",
    "average_curves",
    "compute_measure",
    "confusion_counts",
    "evaluate_novelty",
    "evaluate_predictions",
    "example_accuracy",
    "example_counts",
    "example_f1",
    "example_precision",
    "example_recall",
    "f1m",
    "hamming_loss",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "merge_example_counts",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "multilabel_scores",
    "subset_accuracy",
    "window_edges",
]
