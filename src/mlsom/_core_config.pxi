# Build and machine facts (read by mlsom.show_config and the tests). The test-only switches and
# counters are in _core_switches.pxi.
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


# The best kernel path this processor has; mlsom._testing can select a lower one.
mlsom_set_simd_level(-1)


def max_threads():
    """The most threads the core will start for one call (the processors OpenMP may use; 1
    without OpenMP, and 1 in a child forked after this process used threads), whatever n_jobs
    asks for."""
    return mlsom_thread_cap()


def forked_serial():
    """Whether this process is a child forked after its parent's core used threads, where every
    parallel region runs on one thread (the OpenMP runtime's pool is not usable after fork)."""
    return bool(mlsom_forked_serial)


def _run_serial():
    """Run every parallel region on one thread from now on (mlsom._config, where the OpenMP
    settings would end the process when a thread starts)."""
    global mlsom_settings_serial
    mlsom_settings_serial = 1


def _after_fork_in_child():
    mlsom_after_fork_in_child()


# A child forked after this process used threads runs single-threaded (_kernels.h). The C handler
# covers every fork, also one made by other C code; os.register_at_fork takes over only where
# pthread_atfork could not register it.
if mlsom_register_fork_guard() != 0:
    import os as _os
    _os.register_at_fork(after_in_child=_after_fork_in_child)


# --------------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------------

cdef inline float _limit_f(double limit) noexcept nogil:
    """The largest float32 at most limit: comparing a float32 value with it gives the same
    answer as comparing the value with limit in float64."""
    cdef float limf = <float> limit
    return nextafterf(limf, 0) if <double> limf > limit else limf


cdef inline Py_ssize_t _count_out(const floating *p, Py_ssize_t n,
                                  double limit) noexcept nogil:
    """The number of the n values at p that are NaN or outside [-limit, limit]."""
    if floating is double:
        return mlsom_count_out_d(p, n, limit)
    else:
        return mlsom_count_out_f(p, n, _limit_f(limit))


def count_out_of_range(const floating[:, ::1] X, double limit, long long n_threads_asked):
    """The number of values of X that are NaN or outside [-limit, limit] (infinities included):
    one pass, blocks of rows over the threads (a float32 X is compared with the largest float32
    at most limit, which gives the same answer as comparing its values in float64)."""
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], rb, nb, b, e
    cdef Py_ssize_t bad = 0
    cdef const floating *px
    if n == 0 or A == 0:
        return 0
    px = &X[0, 0]
    rb = max(1, 65536 // A)   # rows per block: about 64k values
    nb = (n + rb - 1) // rb
    if n * A < 1 << 20:
        n_threads = 1   # below a million values, starting threads costs more than it saves
    with nogil:
        for b in prange(nb, schedule="static", num_threads=n_threads):
            e = min(n, (b + 1) * rb)
            bad += _count_out(px + b * rb * A, (e - b * rb) * A, limit)
    return bad


ctypedef fused label_t:
    int8_t
    uint8_t


cdef bint _labels_after_ok(const label_t *Yl, const int64_t *after, Py_ssize_t nl, Py_ssize_t L,
                           Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef int64_t last = 0
    for i in range(nl):
        if after[i] < last or after[i] > n:
            return False
        last = after[i]
        for j in range(i * L, (i + 1) * L):
            if label_t is int8_t:
                if Yl[j] < -1 or Yl[j] > 1:
                    return False
            else:
                if Yl[j] > 1:
                    return False
    return True


def arrivals_ok(const floating[:, ::1] Xl, const label_t[:, ::1] Yl, const int64_t[::1] after,
                Py_ssize_t n, double limit):
    """Whether predict_stream's arrivals, already in the core's layout (Xl, Yl of nl rows,
    after of nl entries), pass every check of the values: each value of Xl within
    [-limit, limit] (not NaN), each label 1, 0 or -1 (int8) or 0 or 1 (uint8), after
    non-decreasing within 0..n. One pass, no allocation; the caller's general checks say what
    is wrong when not."""
    cdef Py_ssize_t nl = Xl.shape[0]
    cdef bint ok
    if Yl.shape[0] != nl or after.shape[0] != nl:
        return False
    if nl == 0 or Xl.shape[1] == 0 or Yl.shape[1] == 0:
        return False  # (the general checks take these)
    with nogil:
        ok = (_count_out(&Xl[0, 0], nl * Xl.shape[1], limit) == 0
              and _labels_after_ok(&Yl[0, 0], &after[0], nl, Yl.shape[1], n))
    return bool(ok)
