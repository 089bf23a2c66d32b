"""mlsom: multi-label stream classification with self-organizing maps, labels never arriving.

The public API:

* :class:`SOMStreamClassifier` -- the SOM-Stream-ML method (fit once, then ``predict_stream``).
* :func:`show_config` -- version, build and machine information.

Subpackages and modules (the runtime core needs only NumPy; those marked * need the
``experiments`` extra):

* :mod:`mlsom.datasets` -- the paper's streams, generators, ARFF loading, preprocessing.
* :mod:`mlsom.evaluation` -- multi-label measures, windows, stored results.
* :mod:`mlsom.protocol` -- the evaluation protocol for online, batch and incremental methods.
* :mod:`mlsom.baselines` -- MINAS-BR; lower* (scikit-learn) and upper* (river) bounds.
* :mod:`mlsom.references` -- reference predictors: every label, label rates, top z, mlsom frozen.
* :mod:`mlsom.stats` * -- Friedman, Iman-Davenport and Nemenyi tests (SciPy).
* :mod:`mlsom.plotting` * -- curves, p-value heat map, critical difference diagram (matplotlib).
* :mod:`mlsom.experiment` * -- streams x methods x grid sizes x seeds, in parallel, resumable.
* :mod:`mlsom.river` * -- ``SOMStreamML``, the method as a River multi-label classifier.
"""

from ._config import show_config
from ._som import AUTO_GRID_SIZES, SOMStreamClassifier
from ._version import __version__
from .exceptions import ConvergenceWarning, NotFittedError

__all__ = [
    "AUTO_GRID_SIZES",
    "ConvergenceWarning",
    "NotFittedError",
    "SOMStreamClassifier",
    "__version__",
    "show_config",
]
