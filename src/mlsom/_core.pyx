# Private compiled core of mlsom: batch Kohonen training, best-matching-unit search, the
# winner-class ranking, the Bayes decision and the per-instance online update.
#
# The functions here trust their inputs: the Python layer (mlsom._som) validates shapes, dtypes,
# contiguity and values before calling them. Instances and neurons are float64 or float32 (one
# type per call: Cython generates both versions of every function); everything else (averOut,
# probabilities, the batch update's sums) is float64. Neurons are stored transposed (feature-major,
# Wt[i, j] = feature i of neuron j).
#
# Exact distances and screening. A distance mlsom compares is always the "exact" one: the sum of
# (x_i - w_i)^2 in a fixed order (eight interleaved partial sums added pairwise, then the last
# A mod 8 features: NumPy's order for up to 128 values), in the model's type (_sqdist_col,
# _sqdist_row). Most of them are never computed, though: every neuron first gets a cheap
# screening value |x'|^2 + |w'|^2 - 2 x'.w' in float32 from copies centred on a common point (the
# kernels of _kernels.h: one instance, four rows at a time, or for training on the AVX2 (with
# FMA) and AVX-512 paths 64 rows at a time with one row per vector lane), which is within
# a known bound `tol` of the exact value (_tol_scale, _screen_gap). Two neurons whose screening
# values differ by more than 2 tol are in the same order exactly; only the neurons the bound
# leaves in doubt get their exact distance. Every decision (best-matching units, the k nearest
# neurons, ties, the Bayes test) is therefore the one the exact distances give, independent of
# the SIMD path and the thread count.
#
# Notation follows the method description (docs/method.md): L labels, M kept neurons over all maps,
# A features, N instances seen, S = sum of label-set sizes seen (label cardinality z = S/N).

from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.float cimport FLT_EPSILON, FLT_MIN
from libc.math cimport (INFINITY, NAN, ceil, exp, fabs, isfinite, isnan, log, log1p, nextafter,
                        nextafterf, sqrt)
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

# the kernels, their dispatch and the thread cap (_kernels.pxd)
from mlsom._kernels cimport *

import numpy as np

# The phases live in the included files below, in this order (each uses only what comes
# before it); docs/architecture.md maps each step of the method to its function.
include "_core_config.pxi"
include "_core_switches.pxi"
include "_core_distances.pxi"
include "_core_train.pxi"
include "_core_classify.pxi"
include "_core_stream.pxi"
include "_core_online.pxi"
include "_core_persist.pxi"
include "_core_lanes.pxi"
include "_core_predict.pxi"
include "_core_state.pxi"
include "_core_testing.pxi"
