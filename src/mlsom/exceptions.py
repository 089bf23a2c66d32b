"""Exceptions and warnings raised by mlsom."""

__all__ = ["ConvergenceWarning", "DataTypeError", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit``.

    It subclasses both ``ValueError`` and ``AttributeError``, as scikit-learn's error of the same
    name does, so ``hasattr(model, "weights_")`` is ``False`` on an unfitted model.
    """


class DataTypeError(TypeError, ValueError):
    """An input array of the wrong kind (text, objects, complex numbers, None where numbers or
    0/1 labels belong).

    It subclasses ``TypeError`` (what it is) and ``ValueError`` (what scikit-learn raises for the
    same inputs), so code written for either catches it.
    """


class ConvergenceWarning(UserWarning):
    """A self-organizing map stopped at ``max_epochs`` before its assignments settled."""
