"""Studies of the method's results, run from the repository's root as ``python -m studies.NAME``."""
