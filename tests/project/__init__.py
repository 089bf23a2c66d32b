"""Tests of project: the repository's rules: the house rules of the source, this layout, the
docstrings' examples (tests/README.md)."""
