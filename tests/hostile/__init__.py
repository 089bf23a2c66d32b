"""Tests of hostile: bad input at every public entry, hostile parameters, fuzzing (ARFF reader,
estimator) and its regressions, hostile ARFF files and command lines, the soak test
(tests/README.md)."""
