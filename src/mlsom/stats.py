"""Statistical comparison of several methods over several data sets (Demšar, 2006).

The methods are ranked on every data set (rank 1 = best, ties share the average of the ranks they
span), and the average ranks are compared with

* the Friedman test, a chi-square statistic with ``k - 1`` degrees of freedom;
* the Iman--Davenport correction of it, an F statistic with ``(k - 1, (k - 1)(N - 1))`` degrees of
  freedom, which is less conservative;
* the Nemenyi post-hoc test: two methods differ when their average ranks differ by at least the
  critical difference ``CD = q_alpha * sqrt(k (k + 1) / (6 N))``, where ``q_alpha`` is the upper
  ``alpha`` quantile of the studentized range of ``k`` groups with infinite degrees of freedom,
  divided by ``sqrt(2)``. The pairwise p-values come from the same distribution.

:func:`friedman_nemenyi` runs all of it and returns a :class:`FriedmanNemenyiResult`; the other
functions compute one formula each. Only NumPy is needed to import this module; SciPy is imported
when a p-value or quantile is computed.

Limits: at most :data:`MAX_METHODS` (1,000) methods and :data:`MAX_DATASETS` (2**31 - 1) data
sets, and a significance level of at least :data:`MIN_ALPHA` (1e-10); the functions refuse
larger counts and smaller levels with a ``ValueError`` rather than running for hours or
returning an infinite quantile.

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", Journal of Machine
Learning Research 7 (2006) 1--30.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._validation import MIN_ALPHA as MIN_ALPHA  # documented here (the levels the tests accept)
from ._validation import check_alpha, describe

__all__ = [
    "FriedmanNemenyiResult",
    "average_ranks",
    "critical_difference",
    "friedman_chi2",
    "friedman_nemenyi",
    "iman_davenport",
    "nemenyi_pvalues",
    "nemenyi_q",
    "rank_data",
]


#: Most methods the tests take: the Nemenyi test needs k (k - 1) / 2 p-values, each a numerical
#: integration of the studentized range (about 50 us), so 1,000 methods take up to half a minute.
MAX_METHODS = 1000
#: Most data sets: keeps N, k N and the degrees of freedom (k - 1)(N - 1) exact in float64.
MAX_DATASETS = 2**31 - 1
#: Relative tolerance of the checks that mean ranks sum as ranks do (rounding of the averages).
_RANK_SUM_RTOL = 1e-9


# ------------------------------------------------------------------------------ input checks


def _check_count(name, value, minimum, maximum=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {describe(value)}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {describe(value)}")
    return value


def _check_methods(n_methods):
    return _check_count("n_methods", n_methods, 2, MAX_METHODS)


def _check_datasets(n_datasets):
    return _check_count("n_datasets", n_datasets, 2, MAX_DATASETS)


def _check_n_compared(what, k):
    """The pairwise tests compare at most MAX_METHODS methods."""
    if k > MAX_METHODS:
        raise ValueError(
            f"{what} holds {k} methods; the Nemenyi test takes at most {MAX_METHODS} (its "
            f"{k * (k - 1) // 2} pairwise p-values would each need a numerical integration)"
        )


def _check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def _check_names(name, names, expected):
    if isinstance(names, str) or not hasattr(names, "__len__"):
        raise TypeError(f"{name} must be a sequence of names, got {describe(names)}")
    names = tuple(str(n) for n in names)
    if len(names) != expected:
        raise ValueError(f"{name} must hold {expected} names, got {len(names)}: {describe(names)}")
    return names


#: Integers above this magnitude may round to the same float64: they are ranked as integers.
_EXACT_INT = 2**53


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _read_array(values):
    """``np.asarray(values)``, or an object array where NumPy would round integers to float.

    NumPy reads a list that mixes large integers with floats, or integers beyond the range of one
    integer dtype, as float64: distinct integers above 2**53 could then tie.
    """
    arr = np.asarray(values)
    if arr.dtype.kind == "f" and not isinstance(values, np.ndarray):
        try:
            obj = np.array(values, dtype=object)
        except Exception:  # NumPy read it as floats, so this is not expected to fail
            return arr
        if obj.shape == arr.shape and any(
            _is_int(v) and abs(int(v)) > _EXACT_INT for v in obj.flat
        ):
            return obj
    return arr


def _numeric_2d(name, values):
    """Return ``(scores as float64, exact)``: ``exact`` holds the scores to rank when float64
    would round some of them (integers beyond 2**53), None when the float64 table ranks right."""
    try:
        arr = _read_array(values)
    except Exception as exc:  # ragged lists and objects NumPy cannot read
        raise TypeError(f"{name} cannot be read as an array: {exc}") from None
    exact = None
    if arr.dtype == object:
        try:
            table = arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must hold real numbers in a rectangular table, got {describe(values)}"
            ) from None
        except OverflowError:
            for v in arr.flat:
                try:
                    float(v)
                except OverflowError:
                    raise ValueError(
                        f"{name} holds a number beyond the range of float64: {describe(v)}"
                    ) from None
            raise
        if any(_is_int(v) and abs(int(v)) > _EXACT_INT for v in arr.flat):
            # Python ints and floats compare exactly; NumPy scalars would round ints to float
            exact = np.empty(arr.shape, dtype=object)
            exact.flat = [int(v) if _is_int(v) else float(v) for v in arr.flat]
    else:
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        table = arr.astype(float)
        if (
            arr.dtype.kind in "iu"
            and arr.size
            and (arr.max() > _EXACT_INT or (arr.dtype.kind == "i" and arr.min() < -_EXACT_INT))
        ):
            exact = arr
    if table.ndim != 2:
        raise ValueError(f"{name} must be 2-D (data sets x methods), got shape {table.shape}")
    return table, exact


def _stack_columns(columns):
    """The columns side by side; as objects when a common dtype would round integers."""
    stacked = np.column_stack(columns)
    if stacked.dtype.kind == "f" and any(c.dtype.kind in "iu" for c in columns):
        stacked = np.empty(stacked.shape, dtype=object)
        for j, c in enumerate(columns):
            stacked[:, j] = c.astype(object)
    return stacked


def _from_mapping(scores):
    methods = tuple(str(m) for m in scores)
    values = list(scores.values())
    if not values:
        raise ValueError("scores must hold at least 2 methods, got an empty mapping")
    if all(isinstance(v, Mapping) for v in values):
        datasets = list(values[0])
        wanted = set(datasets)
        for method, column in zip(methods, values, strict=True):
            if set(column) != wanted:
                missing = sorted(map(str, wanted - set(column)))
                extra = sorted(map(str, set(column) - wanted))
                raise ValueError(
                    f"scores[{method!r}] must score the same data sets as scores[{methods[0]!r}]; "
                    f"missing {missing}, extra {extra}"
                )
        table, exact = _numeric_2d("scores", [[column[d] for column in values] for d in datasets])
        return table, exact, methods, tuple(str(d) for d in datasets)
    columns = []
    for method, column in zip(methods, values, strict=True):
        if isinstance(column, Mapping):
            raise TypeError(
                "scores must map every method to a sequence, or every method to a mapping "
                f"data set -> score; scores[{method!r}] is a mapping and others are not"
            )
        try:
            col = _read_array(column)
        except Exception as exc:  # ragged lists and objects NumPy cannot read
            raise TypeError(f"scores[{method!r}] cannot be read as an array: {exc}") from None
        if col.ndim != 1:
            raise ValueError(
                f"scores[{method!r}] must be a 1-D sequence of scores, one per data set, "
                f"got shape {col.shape}"
            )
        if columns and len(col) != len(columns[0]):
            raise ValueError(
                f"scores[{method!r}] has {len(col)} scores but scores[{methods[0]!r}] has "
                f"{len(columns[0])}; every method needs one score per data set"
            )
        columns.append(col)
    table, exact = _numeric_2d("scores", _stack_columns(columns))
    return table, exact, methods, None


def _score_table(scores, methods=None, datasets=None):
    """Return (scores as float (N, k), exact scores or None, method names, data set names).

    ``exact`` holds the scores to rank where float64 would round some of them (integers beyond
    2**53); see :func:`_numeric_2d`.
    """
    names_m = names_d = None
    if hasattr(scores, "columns") and hasattr(scores, "to_numpy"):  # a DataFrame
        names_m = tuple(str(c) for c in scores.columns)
        index = getattr(scores, "index", None)
        if index is not None:
            names_d = tuple(str(i) for i in index)
        values = scores.to_numpy()
        dtypes = list(getattr(scores, "dtypes", ()))
        if len(set(map(str, dtypes))) > 1 and any(getattr(t, "kind", "") in "iu" for t in dtypes):
            values = scores.to_numpy(dtype=object)  # integer columns beside others: no rounding
        table, exact = _numeric_2d("scores", values)
    elif isinstance(scores, Mapping):
        table, exact, names_m, names_d = _from_mapping(scores)
    else:
        table, exact = _numeric_2d("scores", scores)
    n, k = table.shape
    if k < 2:
        raise ValueError(f"scores must hold at least 2 methods (columns), got shape {table.shape}")
    if n < 2:
        raise ValueError(f"scores must hold at least 2 data sets (rows), got shape {table.shape}")
    if methods is not None:
        names_m = _check_names("methods", methods, k)
    elif names_m is None:
        names_m = tuple(f"method {j}" for j in range(k))
    if datasets is not None:
        names_d = _check_names("datasets", datasets, n)
    elif names_d is None:
        names_d = tuple(str(i) for i in range(n))
    if len(set(names_m)) != k:
        dup = sorted(m for m, count in Counter(names_m).items() if count > 1)
        raise ValueError(f"method names must be unique, got duplicates {dup}")
    if len(set(names_d)) != n:
        dup = sorted(d for d, count in Counter(names_d).items() if count > 1)
        raise ValueError(f"data set names must be unique, got duplicates {dup}")
    bad = ~np.isfinite(table)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"scores holds NaN or infinity (first at data set {names_d[i]!r} (row {i}), "
            f"method {names_m[j]!r} (column {j}): {table[i, j]}); "
            f"{int(bad.sum())} value(s) in all"
        )
    return table, exact, names_m, names_d


# ------------------------------------------------------------------------------ formulas


def _rank_rows(table, higher_is_better, exact=None):
    """Ranks of every row (1 = best, ties averaged); ``exact`` (if given) is ranked instead of
    the float64 ``table``."""
    from scipy.stats import rankdata

    if exact is None:
        return rankdata(-table if higher_is_better else table, method="average", axis=1)
    if exact.dtype == object:
        ranks = _rank_rows_objects(exact)
    else:  # integers: ranked in their own dtype (negating a uint64 would wrap around)
        ranks = rankdata(exact, method="average", axis=1)
    k = table.shape[1]
    # reversing the order maps the average rank r of a tie group to k + 1 - r
    return (k + 1.0) - ranks if higher_is_better else ranks


def _rank_rows_objects(values):
    """Ascending average ranks of every row of an object array of Python ints and floats
    (Python compares them exactly)."""
    n, k = values.shape
    ranks = np.empty((n, k))
    for i in range(n):
        row = values[i].tolist()
        order = sorted(range(k), key=row.__getitem__)
        start = 0
        while start < k:
            stop = start + 1
            while stop < k and row[order[stop]] == row[order[start]]:
                stop += 1
            ranks[i, order[start:stop]] = (start + 1 + stop) / 2.0  # positions start+1 .. stop
            start = stop
    return ranks


def rank_data(scores, *, higher_is_better=True):
    """Rank the methods on every data set, 1 being the best; ties get their average rank.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods), mapping or DataFrame
        One score per data set and method. A mapping goes from method name to the sequence of its
        scores (one per data set) or to a mapping data set -> score; a DataFrame has one row per
        data set and one column per method. Integers are ranked exactly, also beyond 2**53 where
        float64 would round distinct integers to one value.
    higher_is_better : bool, default=True
        Whether a higher score is better (macro F, accuracy, AUC). Set to False for errors and
        losses.

    Returns
    -------
    ranks : ndarray of shape (n_datasets, n_methods)
        ``ranks[i, j]`` is the rank of method ``j`` on data set ``i``.

    Examples
    --------
    >>> rank_data([[0.9, 0.8, 0.8], [0.1, 0.3, 0.2]])
    array([[1. , 2.5, 2.5],
           [3. , 1. , 2. ]])
    """
    higher_is_better = _check_bool("higher_is_better", higher_is_better)
    table, exact, _, _ = _score_table(scores)
    return _rank_rows(table, higher_is_better, exact)


def average_ranks(scores, *, higher_is_better=True):
    """Average rank of every method over the data sets (1 = always the best).

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods), mapping or DataFrame
        See :func:`rank_data`.
    higher_is_better : bool, default=True
        Whether a higher score is better.

    Returns
    -------
    mean_ranks : ndarray of shape (n_methods,)
    """
    return rank_data(scores, higher_is_better=higher_is_better).mean(axis=0)


def friedman_chi2(mean_ranks, n_datasets):
    """Friedman's chi-square statistic from the average ranks, and its p-value.

    ``chi2_F = 12 N / (k (k + 1)) * (sum_j R_j**2 - k (k + 1)**2 / 4)``, chi-square distributed
    with ``k - 1`` degrees of freedom under the null hypothesis that all methods are equivalent.
    This is Demšar's formula, without correction for ties.

    Parameters
    ----------
    mean_ranks : array-like of shape (n_methods,)
        Average ranks ``R_j``: each in ``[1, k]``, summing to ``k (k + 1) / 2``, and any ``m``
        of them summing to at least ``m (m + 1) / 2``, as average ranks do (up to a relative
        1e-9); others raise a ``ValueError``.
    n_datasets : int
        Number of data sets ``N`` the ranks were averaged over.

    Returns
    -------
    chi2 : float
    pvalue : float
    """
    from scipy.stats import chi2 as chi2_dist

    r = _check_mean_ranks(mean_ranks)
    n = _check_datasets(n_datasets)
    k = r.size
    stat = 12.0 * n / (k * (k + 1)) * (np.sum(r**2) - k * (k + 1) ** 2 / 4.0)
    stat = max(float(stat), 0.0)  # rounding can leave -1e-15 for equal ranks
    return stat, float(chi2_dist.sf(stat, k - 1))


def iman_davenport(chi2, n_methods, n_datasets):
    """Iman and Davenport's F statistic from Friedman's chi-square, and its p-value.

    ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)``, F distributed with ``k - 1`` and
    ``(k - 1)(N - 1)`` degrees of freedom. When every data set ranks the methods the same way
    (``chi2_F = N (k - 1)``) the statistic is infinite and the p-value 0.

    Parameters
    ----------
    chi2 : float
        Friedman's statistic.
    n_methods, n_datasets : int
        ``k`` and ``N``.

    Returns
    -------
    F : float
    pvalue : float
    """
    from scipy.stats import f as f_dist

    k = _check_methods(n_methods)
    n = _check_datasets(n_datasets)
    if isinstance(chi2, bool) or not isinstance(chi2, (int, float, np.integer, np.floating)):
        raise TypeError(f"chi2 must be a real number, got {describe(chi2)}")
    chi2 = float(chi2)
    if not np.isfinite(chi2) or chi2 < 0:
        raise ValueError(f"chi2 must be a finite number >= 0, got {chi2}")
    if chi2 > n * (k - 1) * (1 + 1e-9):
        raise ValueError(
            f"chi2 must be <= n_datasets * (n_methods - 1) = {n * (k - 1)} (its value when every "
            f"data set ranks the methods the same way), got {chi2}"
        )
    denom = n * (k - 1) - chi2
    if denom <= 1e-12 * n * k:
        return float("inf"), 0.0
    stat = (n - 1) * chi2 / denom
    return float(stat), float(f_dist.sf(stat, k - 1, (k - 1) * (n - 1)))


def nemenyi_q(n_methods, alpha=0.05):
    """Critical value ``q_alpha`` of the Nemenyi test.

    The upper ``alpha`` quantile of the studentized range of ``k`` groups with infinite degrees of
    freedom, divided by ``sqrt(2)`` (Demšar, 2006, Table 5: 1.960, 2.343, 2.569, ... for
    ``alpha = 0.05`` and ``k = 2, 3, 4, ...``).

    Parameters
    ----------
    n_methods : int
        Number of methods ``k`` (at least 2).
    alpha : float, default=0.05
        Significance level, in (0, 1).

    Returns
    -------
    q : float
    """
    from scipy.stats import studentized_range

    k = _check_methods(n_methods)
    alpha = check_alpha(alpha)
    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def critical_difference(n_methods, n_datasets, alpha=0.05):
    """Nemenyi critical difference ``CD = q_alpha * sqrt(k (k + 1) / (6 N))``.

    Two methods whose average ranks differ by at least ``CD`` differ significantly at level
    ``alpha``.

    Parameters
    ----------
    n_methods : int
        Number of methods ``k``.
    n_datasets : int
        Number of data sets ``N``.
    alpha : float, default=0.05
        Significance level.

    Returns
    -------
    cd : float

    Examples
    --------
    >>> round(critical_difference(4, 14, alpha=0.05), 2)  # Demšar (2006), section 3.2.4
    1.25
    """
    k = _check_methods(n_methods)
    n = _check_datasets(n_datasets)
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


def nemenyi_pvalues(mean_ranks, n_datasets):
    """Pairwise p-values of the Nemenyi test.

    For methods ``a`` and ``b``, ``z = |R_a - R_b| / sqrt(k (k + 1) / (6 N))`` and ``p`` is the
    probability that the studentized range of ``k`` groups (infinite degrees of freedom) reaches
    ``sqrt(2) z``. These are the p-values of scikit-posthocs' ``posthoc_nemenyi_friedman``.

    Parameters
    ----------
    mean_ranks : array-like of shape (n_methods,)
        Average ranks, checked as in :func:`friedman_chi2`.
    n_datasets : int
        Number of data sets the ranks were averaged over.

    Returns
    -------
    pvalues : ndarray of shape (n_methods, n_methods)
        Symmetric, with ones on the diagonal.
    """
    from scipy.stats import studentized_range

    r = _check_mean_ranks(mean_ranks)
    _check_n_compared("mean_ranks", r.size)
    n = _check_datasets(n_datasets)
    k = r.size
    z = np.abs(r[:, None] - r[None, :]) / np.sqrt(k * (k + 1) / (6.0 * n))
    iu = np.triu_indices(k, 1)
    p = np.ones((k, k))
    # one integration per distinct statistic (average ranks over N data sets repeat differences)
    stat, inverse = np.unique(z[iu] * np.sqrt(2.0), return_inverse=True)
    p[iu] = studentized_range.sf(stat, k, np.inf)[inverse.ravel()]
    p = np.clip(p, 0.0, 1.0)
    p.T[iu] = p[iu]
    return p


def _check_mean_ranks(mean_ranks):
    r = np.asarray(mean_ranks)
    if r.dtype.kind not in "iuf":
        raise TypeError(f"mean_ranks must hold real numbers, got {describe(mean_ranks)}")
    r = r.astype(float)
    if r.ndim != 1 or r.size < 2:
        raise ValueError(f"mean_ranks must be 1-D with at least 2 methods, got shape {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError(f"mean_ranks must be finite, got {describe(r.tolist())}")
    k = r.size
    if np.any(r < 1 - 1e-9) or np.any(r > k + 1e-9):
        raise ValueError(
            f"mean_ranks must lie between 1 and the number of methods ({k}), got "
            f"{describe(r.tolist())}"
        )
    # The ranks of every data set are 1 .. k (ties share their average): any m methods take at
    # least 1 + ... + m on each data set, all k exactly k (k + 1) / 2, and so do the averages.
    total = k * (k + 1) / 2.0
    tol = _RANK_SUM_RTOL * total
    got = float(np.sum(r))
    if abs(got - total) > tol:
        raise ValueError(
            f"mean_ranks must sum to n_methods * (n_methods + 1) / 2 = {total:g}, as the ranks "
            f"1 .. {k} of every data set do; got {describe(r.tolist())} (sum {got!r})"
        )
    prefix = np.cumsum(np.sort(r))
    m = np.arange(1, k + 1, dtype=float)
    short = np.flatnonzero(prefix < m * (m + 1) / 2.0 - tol)
    if short.size:
        j = int(short[0]) + 1
        raise ValueError(
            f"mean_ranks cannot be average ranks of {k} methods: its {j} smallest sum to "
            f"{float(prefix[j - 1])!r}, below 1 + ... + {j} = {j * (j + 1) // 2}; got "
            f"{describe(r.tolist())}"
        )
    return r


def _tie_factor(ranks):
    """Friedman's tie correction ``1 - sum(t**3 - t) / (N k (k**2 - 1))``."""
    n, k = ranks.shape
    # runs of equal values in every sorted row (a row always starts a run)
    s = np.sort(ranks, axis=1)
    starts = np.ones((n, k), dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    first = np.flatnonzero(starts.ravel())
    t = np.diff(np.append(first, n * k)).astype(np.int64)
    total = float(np.sum(t**3 - t))  # exact: integers far below 2**53
    return 1.0 - total / (n * k * (k * k - 1.0))


# ------------------------------------------------------------------------------ result


def _frozen(a):
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class FriedmanNemenyiResult:
    """Friedman, Iman--Davenport and Nemenyi tests of ``k`` methods over ``N`` data sets.

    Made by :func:`friedman_nemenyi`. Method ``j`` is ``methods[j]`` in every array.

    Attributes
    ----------
    methods : tuple of str
        Method names, in the input order.
    datasets : tuple of str
        Data set names (``"0"``, ``"1"``, ... when none were given).
    scores : ndarray of shape (n_datasets, n_methods)
        The scores that were ranked, as float64 (integers beyond 2**53 were ranked exactly
        before this rounding).
    ranks : ndarray of shape (n_datasets, n_methods)
        Rank of every method on every data set (1 = best).
    mean_ranks : ndarray of shape (n_methods,)
        Average ranks.
    chi2, chi2_pvalue : float
        Friedman's statistic and its p-value (``k - 1`` degrees of freedom).
    f_statistic, f_pvalue : float
        Iman and Davenport's statistic and its p-value.
    f_df : tuple of int
        Degrees of freedom of the F statistic, ``(k - 1, (k - 1)(N - 1))``.
    pvalues : ndarray of shape (n_methods, n_methods)
        Pairwise Nemenyi p-values (ones on the diagonal).
    alpha : float
        Significance level of ``q_alpha``, ``cd``, :meth:`significant` and :meth:`groups`.
    q_alpha : float
        Nemenyi critical value (studentized range quantile over ``sqrt(2)``).
    cd : float
        Nemenyi critical difference of the average ranks.
    higher_is_better : bool
        Whether higher scores were ranked better.
    tie_correction : bool
        Whether ``chi2`` was divided by Friedman's tie correction factor.
    """

    methods: tuple
    datasets: tuple
    scores: np.ndarray = field(repr=False)
    ranks: np.ndarray = field(repr=False)
    mean_ranks: np.ndarray
    chi2: float
    chi2_pvalue: float
    f_statistic: float
    f_pvalue: float
    f_df: tuple
    pvalues: np.ndarray = field(repr=False)
    alpha: float
    q_alpha: float
    cd: float
    higher_is_better: bool = True
    tie_correction: bool = False

    @property
    def n_methods(self):
        """Number of methods ``k``."""
        return len(self.methods)

    @property
    def n_datasets(self):
        """Number of data sets ``N``."""
        return len(self.datasets)

    @property
    def chi2_df(self):
        """Degrees of freedom of Friedman's statistic, ``k - 1``."""
        return self.n_methods - 1

    @property
    def order(self):
        """Method indices from the best average rank to the worst (input order breaks ties)."""
        return np.argsort(self.mean_ranks, kind="stable")

    def ranking(self):
        """Methods from the best average rank to the worst.

        Returns
        -------
        list of (str, float)
            ``(method, mean rank)`` pairs.
        """
        return [(self.methods[j], float(self.mean_ranks[j])) for j in self.order]

    def _index(self, method):
        try:
            return self.methods.index(str(method))
        except ValueError:
            raise KeyError(
                f"unknown method {method!r}; the methods are {list(self.methods)}"
            ) from None

    def pvalue(self, a, b):
        """Nemenyi p-value of the comparison of methods ``a`` and ``b`` (given by name)."""
        return float(self.pvalues[self._index(a), self._index(b)])

    def significant(self, alpha=None):
        """Which pairs of methods differ significantly (``p < alpha``).

        Parameters
        ----------
        alpha : float, optional
            Level; defaults to the result's ``alpha``.

        Returns
        -------
        ndarray of bool, shape (n_methods, n_methods)
            Symmetric; the diagonal is False.
        """
        alpha = self.alpha if alpha is None else check_alpha(alpha)
        sig = self.pvalues < alpha
        np.fill_diagonal(sig, False)
        return sig

    def groups(self):
        """Maximal groups of methods whose average ranks lie within less than ``cd``.

        These are the groups that a critical difference diagram joins with a bar: no two methods
        of a group differ significantly. Groups of a single method are left out.

        Returns
        -------
        list of tuple of str
            Each group lists its methods from the best average rank to the worst; the groups are
            sorted by their best method.
        """
        order = self.order
        r = self.mean_ranks[order]
        k = r.size
        found = []
        last_end = -1
        for i in range(k):
            j = i
            while j + 1 < k and r[j + 1] - r[i] < self.cd:
                j += 1
            if j > i and j > last_end:  # not inside the previous group
                found.append(tuple(self.methods[m] for m in order[i : j + 1]))
                last_end = j
        return found

    def pvalues_frame(self):
        """The Nemenyi p-values as a pandas DataFrame indexed by method name (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is optional
            raise ImportError("pvalues_frame needs pandas: pip install pandas") from None
        return pd.DataFrame(
            np.array(self.pvalues), index=list(self.methods), columns=list(self.methods)
        )

    def summary(self):
        """A plain-text report: the tests, then the methods from the best average rank."""
        k, n = self.n_methods, self.n_datasets
        lines = [
            f"{k} methods over {n} data sets",
            f"Friedman chi2 = {self.chi2:.4g} (df = {k - 1}), p = {self.chi2_pvalue:.4g}",
            f"Iman-Davenport F = {self.f_statistic:.4g} (df = {self.f_df[0]}, {self.f_df[1]}), "
            f"p = {self.f_pvalue:.4g}",
            f"Nemenyi alpha = {self.alpha:g}: q = {self.q_alpha:.4g}, CD = {self.cd:.4g}",
            "mean rank  method",
        ]
        lines += [f"{rank:9.3f}  {name}" for name, rank in self.ranking()]
        return "\n".join(lines)


def friedman_nemenyi(
    scores,
    *,
    methods=None,
    datasets=None,
    alpha=0.05,
    higher_is_better=True,
    tie_correction=False,
):
    """Compare methods over data sets: Friedman and Iman--Davenport tests, Nemenyi post-hoc test.

    Parameters
    ----------
    scores : array-like of shape (n_datasets, n_methods), mapping or DataFrame
        One score per data set and method (for example the mean macro F of every method on every
        stream). A mapping goes from method name to the sequence of its scores, one per data set,
        or to a mapping data set -> score (every method must score the same data sets). A pandas
        DataFrame has one row per data set and one column per method; its columns and index give
        the names.
    methods : sequence of str, optional
        Method names; they override the names taken from ``scores``.
    datasets : sequence of str, optional
        Data set names; they override the names taken from ``scores``.
    alpha : float, default=0.05
        Significance level of the critical difference, of :meth:`FriedmanNemenyiResult.significant`
        and of :meth:`FriedmanNemenyiResult.groups`.
    higher_is_better : bool, default=True
        Whether a higher score is better. Set to False for errors and losses.
    tie_correction : bool, default=False
        Divide Friedman's statistic by ``1 - sum(t**3 - t) / (N k (k**2 - 1))``, where ``t`` runs
        over the sizes of the groups of tied scores, as ``scipy.stats.friedmanchisquare`` does.
        The default is Demšar's formula; both agree when no scores are tied.

    Returns
    -------
    FriedmanNemenyiResult

    Raises
    ------
    TypeError
        If ``scores`` does not hold real numbers.
    ValueError
        If ``scores`` is not a table of at least 2 data sets and 2 methods, holds NaN or infinity,
        if the names do not match its shape or repeat a method or a data set (also once turned
        into strings: ``1`` and ``"1"``), or if ``alpha`` is not in (0, 1).

    Examples
    --------
    >>> result = friedman_nemenyi({"A": [0.9, 0.8, 0.7], "B": [0.6, 0.7, 0.5],
    ...                            "C": [0.5, 0.4, 0.6]})
    >>> [(method, round(rank, 3)) for method, rank in result.ranking()]
    [('A', 1.0), ('B', 2.333), ('C', 2.667)]
    >>> result.groups()  # three data sets are too few to tell A from C
    [('A', 'B', 'C')]
    """
    table, exact, names_m, names_d = _score_table(scores, methods, datasets)
    alpha = check_alpha(alpha)
    higher_is_better = _check_bool("higher_is_better", higher_is_better)
    tie_correction = _check_bool("tie_correction", tie_correction)
    n, k = table.shape
    _check_n_compared("scores", k)
    _check_datasets(n)
    ranks = _rank_rows(table, higher_is_better, exact)
    mean_ranks = ranks.mean(axis=0)
    chi2, chi2_p = friedman_chi2(mean_ranks, n)
    if tie_correction:
        factor = _tie_factor(ranks)
        if factor > 0:
            from scipy.stats import chi2 as chi2_dist

            chi2 = chi2 / factor
            chi2_p = float(chi2_dist.sf(chi2, k - 1))
    f_stat, f_p = iman_davenport(min(chi2, n * (k - 1.0)), k, n)
    q = nemenyi_q(k, alpha)
    return FriedmanNemenyiResult(
        methods=names_m,
        datasets=names_d,
        scores=_frozen(table),
        ranks=_frozen(ranks),
        mean_ranks=_frozen(mean_ranks),
        chi2=float(chi2),
        chi2_pvalue=float(chi2_p),
        f_statistic=f_stat,
        f_pvalue=f_p,
        f_df=(k - 1, (k - 1) * (n - 1)),
        pvalues=_frozen(nemenyi_pvalues(mean_ranks, n)),
        alpha=alpha,
        q_alpha=q,
        cd=q * float(np.sqrt(k * (k + 1) / (6.0 * n))),
        higher_is_better=higher_is_better,
        tie_correction=bool(tie_correction),
    )
