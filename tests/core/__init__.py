"""Tests of core: the compiled core: the NumPy reference comparisons (random and real streams),
distance screening and BLAS, the 16-row lanes, determinism across threads and SIMD paths, fork
safety, the test-only switches (tests/README.md)."""
