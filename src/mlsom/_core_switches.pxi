# The compiled core's test-only switches and counters: the one place they live.
#
# The phases read the switches through `_sw` (once per call) and count through `_counts`;
# Python reaches both only through `_switches` and `_counters` below, which mlsom._testing
# wraps (docs/architecture.md). The Python layer never calls them
# (tests/core/test_testing_interface.py checks that). No switch changes a result: tests flip them
# and compare outputs bit for bit.
#
# Part of the _core extension: included by _core.pyx.

cdef enum:
    # decisions the screening bound left in doubt, so exact distances settled them
    CNT_BMU = 0         # a best-matching unit
    CNT_KNN             # the k nearest neurons
    CNT_WIDE            # k-th smallest search out of distinct values (more than WIN equal ones)
    CNT_TIE             # tied votes
    CNT_BAYES           # the Bayes test
    # what predict's 16-row path did
    CNT_LANES_ROWS      # rows it classified
    CNT_LANES_FALLBACK  # rows it left to the row-by-row path (_classify)
    CNT_LANES_EXACT     # rounds whose k nearest it settled from exact distances
    CNT_LANES_SCAN      # ... of which with a pass over the row's values
    CNT_LANES_SMALL     # rounds in which the whole pool voted
    # the paired test of the corrections (corrections="tested"): its re-classifications
    CNT_PAIR_BAYES      # that reused the instance's ranking (the Bayes tests alone)
    CNT_PAIR_WHOLE      # that classified again from the start
    # labels beyond the ranking ruled out from the screening values (their map out of reach)
    CNT_REACH
    CNT_GUARD           # guards: instances compared with a label's guards (_vetoed)
    N_COUNTERS


cdef struct Switches:
    bint screening      # screening values first (default), or every distance exact
    bint lanes          # predict's 16-row path where its kernels are selected (default)


# the hand-written kernels that `plain` can replace by the plain-C body of their path, by name
# (the bits are _kernels.h's MLSOM_K_ constants)
PLAIN_KERNELS = {"screen4": MLSOM_K_SCREEN4, "max": MLSOM_K_MAX, "gather": MLSOM_K_GATHER,
                 "screen64": MLSOM_K_SCREEN64}
cdef long _ALL_PLAIN = sum(PLAIN_KERNELS.values())


cdef Switches _sw
_sw.screening = True
_sw.lanes = True
# Counts since the last reset; a thread adds its own counts (Work.cnt) when it finishes, or
# counts here directly. Not exact under threads.
cdef int64_t _counts[N_COUNTERS]


def _switches(int screening=-1, int lanes=-1, int simd=-2, long plain=-1):
    """For tests and benchmarks (use mlsom._testing): set the switches given and return the
    previous (screening, lanes, SIMD level, plain).

    screening, lanes: 1 on, 0 off, -1 unchanged; simd: 0 baseline, 1 AVX2, 2 AVX-512F, -1 the
    best this processor has, -2 unchanged (a level above the processor's is lowered to it);
    plain: a mask of PLAIN_KERNELS' bits, the kernels to replace by the plain-C body of the same
    path (for the kernel benchmark), -1 unchanged.
    """
    global mlsom_plain
    old = (bool(_sw.screening), bool(_sw.lanes), mlsom_simd_level, <long> mlsom_plain)
    if (screening not in (-1, 0, 1) or lanes not in (-1, 0, 1) or simd < -2 or simd > 2
            or plain < -1 or (plain >= 0 and plain & ~_ALL_PLAIN)):
        raise ValueError(f"bad switch: screening={screening}, lanes={lanes}, simd={simd}, "
                         f"plain={plain}")
    if screening >= 0:
        _sw.screening = screening
    if lanes >= 0:
        _sw.lanes = lanes
    if plain >= 0:
        mlsom_plain = <unsigned> plain
    if simd >= -1 or plain >= 0:
        mlsom_set_simd_level(simd if simd >= -1 else mlsom_simd_level)
    return old


def _counters(bint reset=False):
    """For tests (use mlsom._testing.counters): the counts since the last reset, in the order of
    the CNT_ constants."""
    out = tuple(_counts[j] for j in range(N_COUNTERS))
    if reset:
        for j in range(N_COUNTERS):
            _counts[j] = 0
    return out


def _lanes_kernels():
    """For tests: whether the selected SIMD path has predict's 16-row kernels (AVX2 with FMA,
    AVX-512F)."""
    return mlsom_screen64maps_f != NULL
