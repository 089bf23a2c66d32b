"""The parameter handling every mlsom method shares (scikit-learn's estimator conventions)."""

import inspect

__all__ = ["ParamsMixin"]


class ParamsMixin:
    """``get_params``, ``set_params`` and a ``repr`` showing the non-default parameters.

    The parameters are the arguments of ``__init__``, stored under the same names.
    """

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            name
            for name, p in sig.parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep=True):
        """Constructor parameters as a dict (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor parameters; they take effect at the next ``fit``."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"invalid parameter {key!r} for {type(self).__name__}; valid: {valid}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self):
        defaults = {
            name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()
        }
        args = []
        for name in self._get_param_names():
            value, default = getattr(self, name), defaults.get(name, inspect.Parameter.empty)
            try:
                same = value is default or bool(value == default)
            except (TypeError, ValueError):  # arrays and other values without a plain ==
                same = False
            if not same:
                args.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(args)})"
