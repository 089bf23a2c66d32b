"""Tests of experiment: ``mlsom experiment`` as a library: runs, summaries, the cache
(tests/README.md)."""
