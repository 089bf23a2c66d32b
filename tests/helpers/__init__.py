"""What more than one test module uses: the NumPy reference of the method (``reference``), the
comparisons against it (``compare``), synthetic streams (``streams``) and streams whose labels
arrive (``labelled``), model files and ARFF files written by hand (``model_files``,
``arff_files``), the test data's paths (``paths``), and the fixed cases that
``.ci/platform_hashes.py`` digests (``platform_fixtures``). No test module imports another test
module: what two of them share lives here."""
