"""Tests of model file: the model file: every parameter saved and loaded, the state's table, files
of format 1, hostile and tampered files (labelled members among them) (tests/README.md)."""
