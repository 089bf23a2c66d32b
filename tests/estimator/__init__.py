"""Tests of estimator: ``SOMStreamClassifier``'s API and behaviour: parameters, fit and predict,
labels that arrive, guards, label persistence, the robust variant, ``grid_size="auto"``,
snapshots while adapting, feature names (tests/README.md)."""
