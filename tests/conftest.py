"""Shared test configuration: the Hypothesis profiles of the property-based tests.

The default profile, ``mlsom``, is derandomized: every run draws the same examples, so a failure in
CI reproduces locally. ``HYPOTHESIS_PROFILE=explore`` draws new random examples (ten times as many)
for a longer search; a failure it finds prints the ``@reproduce_failure`` blob to add to the test.
"""

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property-based tests skip themselves without Hypothesis
    settings = None

if settings is not None:
    settings.register_profile(
        "mlsom",
        derandomize=True,
        database=None,
        # timing varies with the machine and its load: the tests bound their inputs instead
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "explore",
        parent=settings.get_profile("mlsom"),
        derandomize=False,
        max_examples=1000,
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "mlsom"))
