"""mlsom: multi-label stream classification with self-organizing maps, labels never arriving.

The public API:

* :class:`SOMStreamClassifier` -- the SOM-Stream-ML method (fit once, then ``predict_stream``).
* :func:`show_config` -- version, build and machine information.
"""

from ._config import show_config
from ._som import SOMStreamClassifier
from ._version import __version__
from .exceptions import ConvergenceWarning, NotFittedError

__all__ = [
    "ConvergenceWarning",
    "NotFittedError",
    "SOMStreamClassifier",
    "__version__",
    "show_config",
]
