# Build and machine facts, and the test-only switches and counters (see
# docs/architecture.md): module-wide settings the phases read once per call; none changes a
# result.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

# --------------------------------------------------------------------------------------------------
# build and machine information
# --------------------------------------------------------------------------------------------------

def openmp_enabled():
    """Whether this build of the extension was compiled with OpenMP."""
    return bool(mlsom_have_openmp())


def simd_info():
    """Return (name of the distance path in use, name of the widest path this CPU supports)."""
    return (mlsom_simd_name(mlsom_simd_level).decode(),
            mlsom_simd_name(mlsom_simd_max_level()).decode())


def set_simd_level(int level):
    """Select the kernel path (0 baseline, 1 AVX2, 2 AVX-512F, -1 best); returns the level used.

    For tests and benchmarks: all paths give the same results.
    """
    return mlsom_set_simd_level(level)


mlsom_set_simd_level(-1)

# Screening on (default) or off: off computes every distance exactly. For tests and benchmarks;
# both give identical results.
cdef bint _screening = True


# How often the screening bound left an order in doubt, per kind of decision (best-matching unit,
# k nearest, tied votes, Bayes test), and how often the search for the k-th smallest screening
# value ran out of distinct values to split ("wide": equal values). For tests; not exact under
# threads.
cdef int64_t _n_doubt_bmu = 0, _n_doubt_knn = 0, _n_wide = 0, _n_doubt_tie = 0
cdef int64_t _n_doubt_bayes = 0


def screening_stats(bint reset=False):
    """Counts of decisions that needed exact distances, (best-matching unit, k nearest, wide
    window, tied votes, Bayes test); "wide window" counts k-nearest searches left with more than
    WIN equal screening values at the boundary."""
    global _n_doubt_bmu, _n_doubt_knn, _n_wide, _n_doubt_tie, _n_doubt_bayes
    out = (_n_doubt_bmu, _n_doubt_knn, _n_wide, _n_doubt_tie, _n_doubt_bayes)
    if reset:
        _n_doubt_bmu = _n_doubt_knn = _n_wide = _n_doubt_tie = _n_doubt_bayes = 0
    return out


# Frozen scoring 16 rows at a time where the AVX-512 kernels are selected (default) or one row
# at a time with _classify. For tests and benchmarks; both give identical results.
cdef bint _lanes_on = True
# What the 16-row path did: rows it classified, rows it left to _classify, rounds settled from
# exact distances (from the window's values, from a pass over the row), rounds where the whole
# pool voted. For tests; not exact under threads.
cdef int64_t _n_lanes_rows = 0, _n_lanes_fallback = 0, _n_lanes_exact = 0, _n_lanes_scan = 0
cdef int64_t _n_lanes_small = 0


def set_lanes(bint on):
    """Switch predict's 16-rows-at-a-time path on or off (returns the previous setting)."""
    global _lanes_on
    cdef bint old = _lanes_on
    _lanes_on = on
    return old


def lanes_available():
    """Whether the selected SIMD path has predict's 16-rows-at-a-time kernels (AVX-512)."""
    return mlsom_screen64maps_f != NULL


def lanes_stats(bint reset=False):
    """What predict's 16-rows-at-a-time path did: (rows it classified, rows it left to the
    row-by-row path, rounds whose k nearest it settled from exact distances, of which with a pass
    over the row's values, rounds in which the whole pool voted)."""
    global _n_lanes_rows, _n_lanes_fallback, _n_lanes_exact, _n_lanes_scan, _n_lanes_small
    out = (_n_lanes_rows, _n_lanes_fallback, _n_lanes_exact, _n_lanes_scan, _n_lanes_small)
    if reset:
        _n_lanes_rows = _n_lanes_fallback = _n_lanes_exact = _n_lanes_scan = _n_lanes_small = 0
    return out


def set_screening(bint on):
    """Switch distance screening on or off (returns the previous setting); results are identical."""
    global _screening
    cdef bint old = _screening
    _screening = on
    return old


def max_threads():
    """The most threads the core will start for one call (the processors OpenMP may use; 1
    without OpenMP), whatever n_jobs asks for."""
    return mlsom_cap_threads(1 << 62)
