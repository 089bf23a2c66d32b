"""Exceptions and warnings raised by mlsom."""

__all__ = ["ConvergenceWarning", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit``.

    It subclasses both ``ValueError`` and ``AttributeError``, as scikit-learn's error of the same
    name does, so ``hasattr(model, "weights_")`` is ``False`` on an unfitted model.
    """


class ConvergenceWarning(UserWarning):
    """A self-organizing map stopped at ``max_epochs`` before its assignments settled."""
