"""Input validation shared by the estimators: every check names the argument and the value."""

import math
import numbers
import os
import time

import numpy as np

from . import _core, _names
from .exceptions import DataTypeError

# Squared Euclidean distances of float64 vectors overflow near 1e154; refuse values that could get
# there instead of returning infinite distances and arbitrary neighbours.
MAX_ABS_VALUE = 1e100
# The same for float32 (overflow near 1.8e19): the limit leaves room for 10^7 features.
MAX_ABS_VALUE_32 = 1e15
# Rows of a test stream: window edges are int64.
MAX_ROWS = 2**63 - 1
#: Smallest significance level: below it SciPy's studentized range quantile is not accurate
#: (at 1e-17, 1 - alpha rounds to 1 and the quantile comes out infinite).
MIN_ALPHA = 1e-10


def describe(value):
    if isinstance(value, int) and value.bit_length() > 10_000:  # (too long for repr)
        return f"{'-' if value < 0 else ''}an integer of {value.bit_length()} bits"
    r = repr(value)
    return r if len(r) <= 80 else r[:77] + "..."


def check_int(name, value, *, low=None, high=None):
    """Return ``value`` as int: TypeError unless an integer, ValueError outside [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer, got {describe(value)} ({type(value).__name__})"
        )
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {describe(value)}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {describe(value)}")
    return value


def check_float(name, value, *, low=None, high=None, low_open=False):
    """Return ``value`` as float; TypeError unless real, ValueError if outside the interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {describe(value)} ({type(value).__name__})"
        )
    try:
        value = float(value)
    except OverflowError:  # an integer or Fraction beyond float's range
        raise ValueError(f"{name} must be finite, got {describe(value)}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def check_distinct_text(what, keys, noun="keys"):
    """Refuse keys that are equal once written as text (1 and "1"), which a mapping keyed by
    their text would merge."""
    names = [str(k) for k in keys]
    if len(set(names)) != len(names):
        seen, dup = set(), set()
        for n in names:
            (dup if n in seen else seen).add(n)
        raise ValueError(f"{what}: {noun} {sorted(dup)} are given twice once written as text")


def check_count(name, value, *, low, high=None):
    """Return ``value`` as int: TypeError unless an integer, ValueError outside [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return int(value)


def check_seed(name, value):
    """A recorded seed: an integer (numpy integers accepted), returned as int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    return int(value)


def check_label_protocol(fraction, delay, seed):
    """(fraction, delay, seed) of the delayed-label protocol, checked, as float, int, int."""
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise TypeError(f"label_fraction must be a number in [0, 1] or None, got {fraction!r}")
    fraction = float(fraction)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"label_fraction must be in [0, 1], got {fraction!r}")
    delay = check_count("label_delay", delay, low=0, high=MAX_ROWS)
    seed = check_seed("label_seed", seed)
    if seed < 0:
        raise ValueError(f"label_seed must be non-negative, got {seed}")
    return fraction, delay, seed


def check_alpha(alpha):
    """A significance level in [MIN_ALPHA, 1), as float."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise TypeError(f"alpha must be a real number, got {describe(alpha)}")
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if alpha < MIN_ALPHA:
        raise ValueError(
            f"alpha must be >= {MIN_ALPHA:g} (smaller levels are beyond the precision of the "
            f"studentized range quantile), got {alpha}"
        )
    return alpha


def check_option(name, value, options):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {describe(value)}")
    return value


def as_numeric(name, values, what="real numbers"):
    """``values`` as an array of booleans, integers or reals; TypeError naming ``name`` if not."""
    arr = as_array(name, values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold {what}, got an array of dtype {arr.dtype}")
    return arr


def as_array(name, values):
    """``np.asarray(values)``; a TypeError naming ``name`` where NumPy cannot read them."""
    try:
        return np.asarray(values)
    except Exception as exc:  # ragged lists and other objects numpy cannot read
        raise TypeError(f"{name} cannot be read as an array: {exc}") from None


def _to_dense(name, X):
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise TypeError(
            f"{name} is a sparse matrix ({type(X).__name__}); mlsom needs dense arrays: "
            f"pass {name}.toarray()"
        )
    if isinstance(X, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(X)
        if mask.any():
            first = tuple(int(i) for i in np.argwhere(mask)[0])
            raise ValueError(
                f"{name} is a masked array with {int(mask.sum())} masked values (first at "
                f"{first}); mlsom does not read masks: fill them or drop those rows"
            )
        X = np.ma.getdata(X)
    return as_array(name, _from_pandas(X))


def _from_pandas(X):
    """A DataFrame or Series of pandas' nullable numeric types (Float64, Int64, boolean) as a
    NumPy float array with NaN for missing values (which the checks then refuse by position);
    anything else as it is."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or isinstance(X, np.ndarray) or not hasattr(X, "to_numpy"):
        return X
    dtypes = list(dtypes) if hasattr(dtypes, "tolist") else [dtypes]
    if all(isinstance(d, np.dtype) for d in dtypes):
        return X  # plain NumPy columns: NumPy reads them as they are
    if not all(getattr(d, "kind", "O") in "biuf" for d in dtypes):
        return X  # strings, categories, objects: refused by dtype afterwards
    f32 = all(np.dtype(getattr(d, "numpy_dtype", d)) == np.float32 for d in dtypes)
    return X.to_numpy(dtype=np.float32 if f32 else np.float64, na_value=np.nan)


def value_limit(dtype):
    """The largest absolute value a feature, and so a neuron, may take in ``dtype``."""
    return MAX_ABS_VALUE_32 if np.dtype(dtype) == np.float32 else MAX_ABS_VALUE


def check_features(
    name, X, *, n_features=None, allow_empty=False, dtype=np.float64, estimator=None, n_threads=1
):
    """Validate a feature matrix and return it as a C-contiguous array of ``dtype``.

    ``dtype=None`` keeps float32 input in float32 and makes anything else float64.
    Rules: 2-D; numeric or boolean; finite; |value| <= 1e100 (1e15 in float32); n_features
    columns when given (``estimator``, a class name, then words the message as scikit-learn
    does). A wrong dtype raises DataTypeError (a TypeError and a ValueError). The values are
    checked in one compiled pass over ``n_threads`` threads.
    """
    arr = _to_dense(name, X)
    if arr.dtype.kind not in "biuf":
        extra = " (Complex data not supported)" if arr.dtype.kind == "c" else ""
        raise DataTypeError(
            f"{name} must hold real numbers, got an array of dtype {arr.dtype}{extra}"
        )
    if arr.ndim != 2:
        hint = " (Reshape your data: x.reshape(1, -1) for one instance)" if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}{hint}")
    if arr.shape[1] == 0:
        raise ValueError(
            f"{name} has no feature column: 0 feature(s) (shape={arr.shape}) while a minimum "
            f"of 1 is required."
        )
    if arr.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} has no row: shape {arr.shape}")
    if n_features is not None and arr.shape[1] != n_features:
        if estimator is None:
            raise ValueError(
                f"{name} has {arr.shape[1]} features, but the model was fitted with {n_features}"
            )
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but {estimator} is expecting {n_features} "
            f"features as input (it was fitted with {n_features})"
        )
    if dtype is None:
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    dtype = np.dtype(dtype)
    limit = value_limit(dtype)
    # checked in the input's own precision (float64 for anything but float32), then converted
    arr = np.ascontiguousarray(arr, dtype=np.float32 if arr.dtype == np.float32 else np.float64)
    # one compiled pass (no temporary array, in parallel) settles the common case; only a
    # failing check looks for the first bad value
    if arr.size and _core.count_out_of_range(arr, limit, n_threads):
        bad = ~np.isfinite(arr)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"{name} contains NaN or infinity (first at row {i}, column {j}: {arr[i, j]})"
            )
        big = np.abs(arr.astype(np.float64)) > limit
        if big.any():
            i, j = np.argwhere(big)[0]
            # the value's shortest exact text in its own type: never shown equal to the limit
            raise ValueError(
                f"{name} has a value too large for Euclidean distances in {dtype} (row {i}, "
                f"column {j}: {arr[i, j]!s}; the limit is {limit:g} in absolute value); scale "
                f"the features"
            )
    return np.ascontiguousarray(arr, dtype=dtype)


def _target_kind(values):
    """What a target that is not 0/1 looks like, for error messages ('' when it is 0/1)."""
    bad = values[(values != 0) & (values != 1)]
    if bad.size == 0:
        return ""
    if bad.dtype.kind == "f" and not np.all(np.isfinite(bad) & (bad == np.round(bad))):
        return "Unknown label type: continuous; labels are 0/1 indicators"
    if np.all(bad == -1):
        return (
            "-1 marks a label as unknown, which partial_fit takes for the labels that arrive "
            "after fit; here every label must be known, 0 or 1"
        )
    return (
        "a multi-class target? Only binary classification is supported for each label: "
        "one-hot encode it, one column per class"
    )


def check_partial_labels(name, Y, n_samples, n_labels):
    """Validate a label matrix of n_samples rows and n_labels columns whose entries are 1, 0 or
    -1 (unknown, scikit-learn's marker for unlabelled targets); return it as C-contiguous int8."""
    if Y is None:
        raise DataTypeError(f"{name} must hold 1, 0 or -1 values, got None")
    arr = _to_dense(name, Y)
    if arr.dtype.kind not in "biuf":
        raise DataTypeError(
            f"{name} must hold 1, 0 or -1 values, got an array of dtype {arr.dtype}"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_labels), got shape {arr.shape}")
    if arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} rows but X has {n_samples}")
    if arr.shape[1] != n_labels:
        raise ValueError(
            f"{name} has {arr.shape[1]} label columns, the model has {n_labels} labels"
        )
    bad = (arr != 0) & (arr != 1) & (arr != -1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must contain only 1, 0 or -1 (label unknown), found {arr[i, j].item()!r} "
            f"at row {i}, column {j}"
        )
    return np.ascontiguousarray(arr, dtype=np.int8)


def check_labels(name, Y, n_samples, *, require_positive=True):
    """Validate a 0/1 label matrix of n_samples rows; return it as a C-contiguous uint8 array.

    With ``require_positive`` (training sets of methods that need one label to occur) an
    all-zero matrix is refused.
    """
    if Y is None:
        raise DataTypeError(
            f"{name} must hold 0/1 values, got None: fit requires y to be passed, but the "
            f"target y is None"
        )
    arr = _to_dense(name, Y)
    if arr.dtype.kind not in "biuf":
        raise DataTypeError(f"{name} must hold 0/1 values, got an array of dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = ""
        if arr.ndim == 1:
            kind = _target_kind(arr)
            hint = (
                f" ({kind}; for a single 0/1 label use y.reshape(-1, 1))"
                if kind
                else (" (for a single label use y.reshape(-1, 1))")
            )
        raise ValueError(f"{name} must be 2-D (n_samples, n_labels), got shape {arr.shape}{hint}")
    if arr.shape[0] != n_samples:
        raise ValueError(f"{name} has {arr.shape[0]} rows but X has {n_samples}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no label column: shape {arr.shape}")
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        value = arr[i, j].item()
        raise ValueError(
            f"{name} must contain only 0 and 1, found {value!r} at row {i}, column {j} "
            f"({_target_kind(np.array([value]))})"
        )
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    if require_positive and not arr.any():
        raise ValueError(
            f"{name} has no positive label: at least one label must occur in the training set"
        )
    return arr


#: how long a read of the cgroup's CPU quota is reused (seconds): every call that may use threads
#: asks for the cores it may use, and reading the files cost a one-row predict about a tenth of
#: its time; a quota changed while the process runs takes effect within this time
CPU_QUOTA_TTL = 1.0
_cpu_quota_cache = {}


def _cgroup_cpu_limit():
    """The CPU quota of this process's cgroup, read at most once per CPU_QUOTA_TTL seconds in a
    process (a forked child reads its own)."""
    key, now = os.getpid(), time.monotonic()
    cached = _cpu_quota_cache.get(key)
    if cached is not None and now - cached[0] < CPU_QUOTA_TTL:
        return cached[1]
    quota = read_cgroup_cpu_limit()
    _cpu_quota_cache.clear()
    _cpu_quota_cache[key] = (now, quota)
    return quota


def read_cgroup_cpu_limit():
    """The CPU quota of this process's cgroup (cgroup v2 cpu.max, else v1 cfs), rounded up; None
    where no quota is set or it cannot be read."""
    for path, parse in (
        ("/sys/fs/cgroup/cpu.max", lambda t: t.split()[:2]),
        ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", None),
    ):
        try:
            with open(path, "rb") as f:
                text = f.read(256).decode("ascii", "replace")
            if parse is not None:
                quota, period = parse(text)
            else:
                with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "rb") as f:
                    quota, period = text.strip(), f.read(64).decode("ascii", "replace").strip()
            quota, period = int(quota), int(period)
        except (OSError, ValueError):
            continue
        if quota > 0 and period > 0:
            return max(1, -(-quota // period))
    return None


def available_cpus():
    """The cores this process may use: its CPU affinity, capped by a cgroup CPU quota if any."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_cpu_limit()
    if quota is not None:
        n = min(n, quota)
    return max(1, n)


def effective_n_threads(n_jobs):
    """Resolve n_jobs as scikit-learn does (None -> all cores, -1 -> all, -2 -> all but one, ...),
    then cap it at the cores this process may use (``available_cpus``).

    Whatever a caller or a model file asks for, no more threads than cores are started: results
    never depend on the thread count, and thousands of threads would only cost memory (or abort
    the OpenMP runtime).
    """
    n_cpus = available_cpus()
    if n_jobs is None:
        return n_cpus
    n_jobs = check_int("n_jobs", n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs must be a non-zero integer or None, got 0")
    if n_jobs < 0:
        return max(1, n_cpus + 1 + n_jobs)
    return min(n_jobs, n_cpus)


#: the dtypes a model gives its predictions in (those of Y at fit), by name in model files
LABEL_DTYPES = {
    np.dtype(t).name: np.dtype(t)
    for t in (
        bool,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float32,
        np.float64,
    )
}


def labels_dtype(Y):
    """The dtype predictions are given in: Y's own (a pandas nullable column: its NumPy type),
    uint8 for anything else."""
    dtypes = getattr(Y, "dtypes", None)
    if dtypes is not None and not isinstance(Y, np.ndarray):  # pandas
        found = {
            np.dtype(getattr(d, "numpy_dtype", d)) if getattr(d, "kind", "O") in "biuf" else None
            for d in (dtypes.tolist() if hasattr(dtypes, "tolist") else [dtypes])
        }
        dtype = found.pop() if len(found) == 1 else None
    else:
        dtype = getattr(Y, "dtype", None)
        if not isinstance(dtype, np.dtype):
            try:
                dtype = np.asarray(Y).dtype
            except Exception:  # check_labels says what is wrong
                dtype = None
    if dtype is None or dtype.newbyteorder("=").name not in LABEL_DTYPES:
        return np.dtype(np.uint8)
    return LABEL_DTYPES[dtype.newbyteorder("=").name]


def feature_names(X):
    """Column names of a DataFrame-like X (all strings), else None; names of mixed types are
    refused, as scikit-learn refuses them (the order of such columns could not be checked)."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    names = list(cols)
    strings = [isinstance(c, str) for c in names]
    if all(strings):
        return names
    if any(strings):
        kinds = sorted({type(c).__name__ for c in names})
        raise TypeError(
            f"X has column names of mixed types ({', '.join(kinds)}): feature names are used "
            "only when all of them are strings; convert them with X.columns = "
            "X.columns.astype(str)"
        )
    return None


def check_training_set(X, Y, n_threads=1):
    """``fit``'s X and Y, checked: (X as float64 or float32, Y as uint8 0/1, the feature names
    of a DataFrame X or None, the dtype predictions are given in). Feature names must be unique
    and not empty: the model joins later data to its features by name."""
    names = feature_names(X)
    if names is not None and (problem := _names.bad_names(names)) is not None:
        raise ValueError(
            f"X has the column names {_names.show(names)}, but {problem}: the model joins "
            "later data to its features by name, so they must be unique and not empty "
            "(rename the columns)"
        )
    X = check_features("X", X, dtype=None, n_threads=n_threads)
    dtype = labels_dtype(Y)
    Y = check_labels("Y", Y, X.shape[0])
    return X, Y, names, dtype
