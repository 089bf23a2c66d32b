"""Tests of interop: scikit-learn's estimator checks, River, dask (tests/README.md)."""
