"""Where the tests find their files: the test data (tests/data) and the repository's root.

In a copy of tests/ and pyproject.toml run against an installed wheel (.ci/run), ``ROOT`` is that
copy's folder: it has no src/ nor docs/, and the tests that read them skip or use the package."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DATA = TESTS / "data"
