# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled floor of the online phase: one BLAS matrix-vector product per instance.

``gemv_loop(W, X, out)`` computes ``out = W @ X[i]`` for every row ``i`` of ``X`` in a C loop
(no Python between calls): the work a per-instance classifier over the neuron matrix ``W``
cannot avoid. ``W`` is (M, A) C-contiguous, one row per neuron; BLAS sees it as the column-major
(A, M) matrix W^T and is asked for its transpose. Built at run time by benchmarks/suite.py
(``cythonize -i`` in a folder under the temporary directory); BLAS is SciPy's, through
``scipy.linalg.cython_blas``.
"""

from cython cimport floating
from scipy.linalg.cython_blas cimport dgemv, sgemv


def gemv_loop(const floating[:, ::1] W, const floating[:, ::1] X, floating[::1] out):
    """out = W x for every row x of X, one BLAS gemv call per row (dgemv or sgemv)."""
    cdef int a = W.shape[1], m = W.shape[0], inc = 1
    cdef floating one = 1.0, zero = 0.0
    cdef char trans = b"T"
    cdef Py_ssize_t i, n = X.shape[0]
    if X.shape[1] != a or out.shape[0] != m:
        raise ValueError("shape mismatch")
    with nogil:
        for i in range(n):
            if floating is double:
                dgemv(&trans, &a, &m, &one, <double *>&W[0, 0], &a, <double *>&X[i, 0], &inc,
                      &zero, &out[0], &inc)
            else:
                sgemv(&trans, &a, &m, &one, <float *>&W[0, 0], &a, <float *>&X[i, 0], &inc,
                      &zero, &out[0], &inc)
