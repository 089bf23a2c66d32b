# Build and machine facts (read by mlsom.show_config and the tests). The test-only switches and
# counters are in _core_switches.pxi.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

# --------------------------------------------------------------------------------------------------
# build and machine information
# --------------------------------------------------------------------------------------------------

def openmp_enabled():
    """Whether this build of the extension was compiled with OpenMP."""
    return bool(mlsom_have_openmp())


def simd_info():
    """Return (name of the distance path in use, name of the widest path this CPU supports)."""
    return (mlsom_simd_name(mlsom_simd_level).decode(),
            mlsom_simd_name(mlsom_simd_max_level()).decode())


# The best kernel path this processor has; mlsom._testing can select a lower one.
mlsom_set_simd_level(-1)


def max_threads():
    """The most threads the core will start for one call (the processors OpenMP may use; 1
    without OpenMP), whatever n_jobs asks for."""
    return mlsom_cap_threads(1 << 62)
