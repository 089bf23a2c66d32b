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


# ----------------------------------------------------------------------------- SIMD paths run
# Every test runs on the best path the processor has; the kernel tests also switch to each lower
# one (mlsom._testing.switches(simd=...), which records them). The summary says which paths the
# session ran, and says so in one line when the processor has no AVX-512, whose kernels then
# went untested.


def pytest_terminal_summary(terminalreporter):
    from mlsom import _core, _testing

    best = _core.simd_info()[1]
    levels = _testing.levels_run()
    ran = ", ".join(_testing.SIMD_NAMES[level] for level in levels) or "none"
    terminalreporter.write_line(
        f"SIMD paths exercised: {ran} (the best this processor has: {best})"
    )
    if "avx512" not in best and 2 not in levels:
        terminalreporter.write_line(
            "NOTE: this processor has no AVX-512: the AVX-512 kernels (training's 64-row screen, "
            "the 16-row predict path's AVX-512 versions) were NOT tested in this run"
        )
