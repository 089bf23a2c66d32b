"""Memory estimates checked before large allocations.

A parameter that sizes an allocation (a number of instances, features, labels, windows,
neighbours, clusters, ...) is checked with :func:`check_allocation` *before* anything is
allocated: the caller estimates the bytes the parameter will need and the check refuses the value
with a :class:`ValueError` that names the parameter, its value and the estimate, when the estimate
exceeds what this process can ever get (:func:`memory_limit`). The check is a guard against
mistaken or hostile values (``n_instances=10**12``), not an accounting of free memory: a value
that passes may still fail later if the machine is busy.

Readers of files do the same with :func:`check_memory`: before a file's contents are expanded
(rows of a data file, the one-hot columns of a nominal attribute, the labels of an XML file), the
bytes are estimated from the header or the file's size, and a :class:`MemoryError` names the
file, what would be made, the estimate and the limit, less what this process already holds.

Examples
--------
>>> from mlsom._memory import check_allocation, format_bytes
>>> format_bytes(16 * 10**12)
'16 TB'
>>> check_allocation("n_instances", 10**12, 16 * 10**12, "X", limit=8 * 10**9)
Traceback (most recent call last):
...
ValueError: n_instances=1000000000000 would need about 16 TB for X; this process can use at most...
"""

import math
import numbers
import os

__all__ = [
    "check_allocation",
    "check_memory",
    "format_bytes",
    "memory_budget",
    "memory_limit",
    "nbytes_of",
]

# A 64-bit process has 2**47 bytes (128 TiB) of user address space on x86-64 and arm64 Linux,
# Windows and macOS: no allocation can be larger, whatever the machine.
ADDRESS_SPACE = 2**47

# where a limit comes from (memory_limit's second value)
_PHYSICAL = "the machine's physical memory"
_RLIMIT_AS = "the process's address-space limit (RLIMIT_AS)"
_CGROUP = "the memory limit of the process's control group"

_UNITS = ("bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")


def format_bytes(nbytes):
    """``nbytes`` in decimal units with at most three significant digits: ``'16 TB'``."""
    if isinstance(nbytes, float) and not math.isfinite(nbytes):
        return "an unbounded amount"
    nbytes = max(0, int(nbytes))
    if nbytes < 1000:
        return f"{nbytes} bytes"
    exp = (len(str(nbytes)) - 1) // 3
    if exp >= len(_UNITS):
        return f"{float(nbytes):.3g} bytes"
    text = f"{nbytes / 1000**exp:.3g}"
    if float(text) >= 1000:  # 999.9 kB rounds to 1000: the next unit
        exp += 1
        if exp >= len(_UNITS):
            return f"{float(nbytes):.3g} bytes"
        text = f"{nbytes / 1000**exp:.3g}"
    return f"{text} {_UNITS[exp]}"


def _physical_memory():
    """(bytes of physical memory, how it was found) or (None, reason)."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        pages = size = -1
    if pages > 0 and size > 0:
        return pages * size, _PHYSICAL
    try:  # Windows
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [
                ("dwLength", ctypes.c_ulong),
                ("dwMemoryLoad", ctypes.c_ulong),
                ("ullTotalPhys", ctypes.c_ulonglong),
                ("ullAvailPhys", ctypes.c_ulonglong),
                ("ullTotalPageFile", ctypes.c_ulonglong),
                ("ullAvailPageFile", ctypes.c_ulonglong),
                ("ullTotalVirtual", ctypes.c_ulonglong),
                ("ullAvailVirtual", ctypes.c_ulonglong),
                ("ullAvailExtendedVirtual", ctypes.c_ulonglong),
            ]

        status = _Status()
        status.dwLength = ctypes.sizeof(_Status)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore
            return int(status.ullTotalPhys), _PHYSICAL
    except Exception:  # noqa: BLE001 - not Windows, or no ctypes: no figure
        pass
    return None, None


def _address_space_limit():
    """RLIMIT_AS of this process in bytes, or None when unlimited or unknown."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (AttributeError, ValueError, OSError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    return int(soft)


def _cgroup_limit():
    """The memory limit of this process's control group (containers), or None."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as f:
                text = f.read(64).strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isascii() and text.isdigit() and len(text) <= 20:
            value = int(text)
            # cgroup v1 writes a page-rounded 2**63 - 1 for "no limit"
            if 0 < value < 2**60:
                return value
        return None
    return None


def memory_limit():
    """The most bytes this process can ever hold, and where that figure comes from.

    The smallest of: the machine's physical memory (``os.sysconf``, or ``GlobalMemoryStatusEx``
    on Windows), the process's address-space limit ``RLIMIT_AS`` when one is set, and the memory
    limit of its control group (containers) when one is set. When none of them is known, the
    128 TiB of user address space of a 64-bit process.

    Returns
    -------
    limit : int
        Bytes.
    source : str
        A few words saying which limit it is, for error messages.
    """
    candidates = [(ADDRESS_SPACE, "the address space of a 64-bit process")]
    phys, what = _physical_memory()
    if phys is not None:
        candidates.append((phys, what))
    rlimit = _address_space_limit()
    if rlimit is not None:
        candidates.append((rlimit, _RLIMIT_AS))
    cgroup = _cgroup_limit()
    if cgroup is not None:
        candidates.append((cgroup, _CGROUP))
    return min(candidates, key=lambda c: c[0])


def nbytes_of(*factors, itemsize=1):
    """The exact product of ``factors`` and ``itemsize`` (Python integers: never overflows).

    Floats are accepted (an infinite factor gives ``inf``); a negative factor counts as 0.
    """
    total = itemsize
    for f in factors:
        if isinstance(f, float):
            if math.isnan(f):
                return math.inf
            if math.isinf(f):
                return math.inf if f > 0 and total else 0
            f = math.ceil(f)
        total *= max(0, int(f))
    return total


def _describe(value):
    r = repr(value)
    return r if len(r) <= 80 else r[:77] + "..."


def check_allocation(name, value, nbytes, what, *, limit=None):
    """Refuse a parameter value whose allocation cannot fit in this process's memory.

    Call it before allocating, with an estimate of the bytes the value will need (arrays it sizes,
    temporaries included when they live at the same time).

    Parameters
    ----------
    name : str or sequence of str
        The parameter (or parameters) that size the allocation, as the caller spells them.
    value : object or sequence of objects
        Its value (one per name when ``name`` is a sequence).
    nbytes : int or float
        Estimated bytes; ``float('inf')`` for a size too large to compute.
    what : str
        What would be allocated, e.g. ``"X (n_instances x n_features float64)"``.
    limit : int, optional
        Bytes allowed; by default :func:`memory_limit` (physical memory, ``RLIMIT_AS``, control
        group limit).

    Returns
    -------
    nbytes : int or float
        The estimate, unchanged, when it fits.

    Raises
    ------
    ValueError
        When ``nbytes`` exceeds the limit. The message names the parameter(s), the value(s), the
        estimate and the limit in human units.
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Real):
        raise TypeError(f"nbytes must be a number, got {_describe(nbytes)}")
    if nbytes != nbytes or nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
    if limit is None:
        limit, source = memory_limit()
    else:
        source = "the limit given"
    if nbytes <= limit:
        return nbytes
    if isinstance(name, str):
        label = f"{name}={_describe(value)}"
    else:
        label = ", ".join(f"{n}={_describe(v)}" for n, v in zip(name, value, strict=True))
    amount = (
        f"about {format_bytes(nbytes)}"
        if math.isfinite(nbytes)
        else "an unbounded amount of memory"
    )
    raise ValueError(
        f"{label} would need {amount} for {what}; this process can use at "
        f"most {format_bytes(limit)} ({source})"
    )


def _in_use(source):
    """Bytes this process holds now, as the limit named ``source`` counts them: its address space
    for RLIMIT_AS, its resident memory for the physical memory and the control group (Linux's
    ``/proc/self/statm``); 0 where unknown."""
    if source not in (_PHYSICAL, _RLIMIT_AS, _CGROUP):
        return 0
    try:
        with open("/proc/self/statm", "rb") as f:
            fields = f.read(256).split()
        pages = int(fields[0] if source == _RLIMIT_AS else fields[1])
        return max(0, pages * os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def memory_budget():
    """The bytes this process can still get: :func:`memory_limit` less what it holds now.

    Returns
    -------
    budget : int
        Bytes, at least 0.
    describe : str
        The limit, where it comes from and what is in use, for error messages:
        ``'at most 6.44 GB (...), of which 170 MB are in use'``.
    """
    limit, source = memory_limit()
    used = min(_in_use(source), limit)
    text = f"at most {format_bytes(limit)} ({source})"
    if used:
        text += f", of which {format_bytes(used)} are in use"
    return limit - used, text


def check_memory(source, nbytes, what, advice=None, *, budget=None):
    """Refuse to expand a file's contents when they cannot fit in this process's memory.

    Call it before allocating, with an estimate of the bytes ``what`` will take (from the
    header, the file's size or the parameters), temporaries included.

    Parameters
    ----------
    source : str or os.PathLike
        The file (or the argument) the allocation comes from; the message starts with it.
    nbytes : int or float
        Estimated bytes; ``float('inf')`` for a size too large to compute.
    what : str
        What would be allocated, e.g. ``"the 2000 rows read so far (20001 features)"``.
    advice : str, optional
        What to do instead, appended to the message.
    budget : (int, str), optional
        A :func:`memory_budget` taken earlier (a reader checks each block against the budget it
        had when it started); by default the budget now.

    Returns
    -------
    nbytes : int or float
        The estimate, unchanged, when it fits.

    Raises
    ------
    MemoryError
        With the estimate as its attribute ``nbytes``, and the message
        ``"<source>: <what> would need about 160 GB; this process can use at most 6.44 GB
        (...), of which 170 MB are in use; <advice>"``.
    """
    room, describe = memory_budget() if budget is None else budget
    if nbytes <= room:
        return nbytes
    amount = f"about {format_bytes(nbytes)}" if math.isfinite(nbytes) else "an unbounded amount"
    text = f"{os.fspath(source)}: {what} would need {amount}; this process can use {describe}"
    error = MemoryError(text + (f"; {advice}" if advice else ""))
    error.nbytes = nbytes  # (tells this refusal from an allocation that failed)
    raise error
