"""scikit-learn's estimator protocol, spoken without importing scikit-learn.

mlsom's core needs only NumPy: ``import mlsom`` and scoring never import scikit-learn. Yet
scikit-learn's tools (``clone``, ``Pipeline``, ``GridSearchCV``, ``check_is_fitted``,
``is_classifier``, ``parametrize_with_checks``) must see a classifier. They ask through
``__sklearn_tags__`` (scikit-learn >= 1.6) or ``_get_tags`` / ``_estimator_type`` (1.4 and 1.5),
and ``__sklearn_is_fitted__``: this module answers both, importing scikit-learn only when
scikit-learn itself asks (it is then imported already).

``NotFittedError``: mlsom's own error subclasses ``ValueError`` and ``AttributeError``, like
scikit-learn's. Where scikit-learn is imported, a model that is not fitted raises a subclass of
both (``not_fitted``), so ``except sklearn.exceptions.NotFittedError`` catches it; code that can
name scikit-learn's class has imported it, so checking ``sys.modules`` is exact.
"""

import sys

from .exceptions import NotFittedError

# The checks of scikit-learn's parametrize_with_checks that the method cannot pass, each with the
# property of the method that makes it fail. Targets are 2-D 0/1 indicator matrices (n_samples,
# n_labels); these checks train on 1-D targets, class names or multi-class columns, or refuse
# object arrays.
_MULTI_CLASS = "targets are 0/1 indicator matrices: the check trains on a multi-class column"
_PARTIAL_FIT = (
    "partial_fit learns labels that arrive after fit: it needs a fitted model, takes no classes="
)
EXPECTED_FAILED_CHECKS = {
    "check_classifiers_train": (
        "predictions are (n_samples, n_labels) indicator matrices, also for one label: the check "
        "wants 1-D predictions"
    ),
    "check_classifiers_one_label": "a 1-D target is refused: targets are 2-D indicator matrices",
    "check_classifiers_classes": "targets are 0/1 indicator matrices: the check trains on names",
    "check_estimators_dtypes": _MULTI_CLASS,
    "check_classifier_data_not_an_array": _MULTI_CLASS,
    "check_fit2d_1feature": _MULTI_CLASS,
    "check_dtype_object": (
        "object arrays are refused, not converted: an object where a number belongs is an error"
    ),
    # partial_fit learns the labels that arrive after fit (Y in {1, 0, -1}); the maps are
    # trained once, by fit, so it neither trains from scratch nor takes classes=
    "check_estimators_partial_fit_n_features": _PARTIAL_FIT,
    "check_n_features_in_after_fitting": _PARTIAL_FIT,
}
# scikit-learn 1.4 and 1.5 train most checks of a multi-output-only classifier on a multi-class
# column (1.6 uses binary ones): the same property, more checks
_LEGACY_EXPECTED_FAILED_CHECKS = {
    name: _MULTI_CLASS
    for name in (
        "check_fit_score_takes_y",
        "check_estimators_fit_returns_self",
        "check_estimators_overwrite_params",
        "check_dont_overwrite_parameters",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_fit2d_predict1d",
    )
}

_combined = None


def not_fitted(message):
    """A NotFittedError that is also scikit-learn's when scikit-learn is imported."""
    global _combined
    exceptions = sys.modules.get("sklearn.exceptions")
    if exceptions is None:
        return NotFittedError(message)
    if _combined is None or _combined.__bases__[1] is not exceptions.NotFittedError:
        _combined = type(
            "NotFittedError",
            (NotFittedError, exceptions.NotFittedError),
            {"__module__": "mlsom.exceptions", "__doc__": NotFittedError.__doc__},
        )
    return _combined(message)


def sklearn_tags():
    """The estimator's tags as scikit-learn >= 1.6 defines them."""
    from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

    return Tags(
        estimator_type="classifier",
        target_tags=TargetTags(
            required=True,
            one_d_labels=False,
            two_d_labels=True,
            multi_output=True,
            single_output=False,
        ),
        classifier_tags=ClassifierTags(poor_score=True, multi_class=False, multi_label=True),
        input_tags=InputTags(two_d_array=True, allow_nan=False, sparse=False),
        requires_fit=True,
    )


def expected_failed_checks():
    """The checks of the installed scikit-learn the method fails, with the reason of each."""
    import sklearn

    version = tuple(int(p) for p in sklearn.__version__.split(".")[:2] if p.isdigit())
    if version < (1, 6):
        return {**EXPECTED_FAILED_CHECKS, **_LEGACY_EXPECTED_FAILED_CHECKS}
    return dict(EXPECTED_FAILED_CHECKS)


def legacy_tags():
    """The same for scikit-learn 1.4 and 1.5 (``_get_tags``)."""
    return {
        "allow_nan": False,
        "array_api_support": False,
        "binary_only": False,
        "multilabel": True,
        "multioutput": True,
        "multioutput_only": True,
        "no_validation": False,
        "non_deterministic": False,
        "pairwise": False,
        "poor_score": True,
        "preserves_dtype": ["float64"],
        "requires_fit": True,
        "requires_positive_X": False,
        "requires_positive_y": False,
        "requires_y": True,
        "stateless": False,
        "X_types": ["2darray"],
        "_skip_test": False,
        "_xfail_checks": expected_failed_checks(),
    }
