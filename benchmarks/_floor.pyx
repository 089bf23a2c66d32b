# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled floor of the online phase: one BLAS matrix-vector product per instance.

``gemv_loop(W, X, out)`` computes ``out = W @ X[i]`` for every row ``i`` of ``X`` in a C loop
(no Python between calls): the work a per-instance classifier over the neuron matrix ``W``
cannot avoid. ``W`` is (M, A) C-contiguous, one row per neuron; BLAS sees it as the column-major
(A, M) matrix W^T and is asked for its transpose. Built at run time by benchmarks/suite.py
(``cythonize -i`` in a folder under the temporary directory); BLAS is SciPy's, through
``scipy.linalg.cython_blas``.
"""

from scipy.linalg.cython_blas cimport dgemv, sgemv


def gemv_loop_f64(const double[:, ::1] W, const double[:, ::1] X, double[::1] out):
    cdef int a = W.shape[1], m = W.shape[0], inc = 1
    cdef double one = 1.0, zero = 0.0
    cdef char trans = b"T"
    cdef Py_ssize_t i, n = X.shape[0]
    if X.shape[1] != a or out.shape[0] != m:
        raise ValueError("shape mismatch")
    with nogil:
        for i in range(n):
            dgemv(&trans, &a, &m, &one, <double *>&W[0, 0], &a, <double *>&X[i, 0], &inc,
                  &zero, &out[0], &inc)


def gemv_loop_f32(const float[:, ::1] W, const float[:, ::1] X, float[::1] out):
    cdef int a = W.shape[1], m = W.shape[0], inc = 1
    cdef float one = 1.0, zero = 0.0
    cdef char trans = b"T"
    cdef Py_ssize_t i, n = X.shape[0]
    if X.shape[1] != a or out.shape[0] != m:
        raise ValueError("shape mismatch")
    with nogil:
        for i in range(n):
            sgemv(&trans, &a, &m, &one, <float *>&W[0, 0], &a, <float *>&X[i, 0], &inc,
                  &zero, &out[0], &inc)
