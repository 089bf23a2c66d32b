"""Tests of datasets: ARFF and Mulan/MEKA readers, generators, the Table 1 registry and the real
data, preprocessing, file errors, parsers in linear time (tests/README.md)."""
