"""Synthetic multi-label streams of the paper (numpy only).

Two families of synthetic multi-label streams:

* :func:`moa_spherical` (section 1.3): hyperspherical kernels that move in straight legs, as MOA's
  ``RandomRBFGeneratorEvents``; an instance carries every label whose sphere contains it, so
  overlapping clusters make multi-label instances. The sphere radius is calibrated so that the first
  10 % of the stream has the wanted label cardinality. The kernels start uniform in the cube, or in
  pairs of near-coincident spheres (``placement="pairs"``, as in the paper's streams). A rotating
  two-kernel variant gives the paper's MOA-Spher-2C-2A.
* :func:`read_multilabel` (sections 2.1-2.3): Read et al.'s meta multi-label generator (MOA's
  ``MetaMultilabelGenerator``) over a binary base stream -- :class:`WaveformGenerator` restricted to
  two classes, :class:`RandomTreeGenerator`, :class:`HyperplaneGenerator`,
  :class:`RandomRBFGenerator` -- with the paper's drift protocol: the stream is cut into four
  sub-streams and a fraction of the conditional probabilities p(y_k | y_j) is redrawn from
  N(p(y_k), 1) in each of them.

The generators reproduce the *distributions* of the MOA ones, not their bit streams: MOA's meta
generator used an unseeded shuffle until 2022, so bit-level replay of the paper's streams is
impossible anyway (protocol section 0).

Random numbers: every generator takes a ``seed`` (int, :class:`numpy.random.SeedSequence`,
:class:`numpy.random.Generator` or None) and derives independent child streams from it with
:meth:`numpy.random.SeedSequence.spawn`, one per stage, so that changing one stage (the number of
instances, a drift fraction, the calibration) never shifts the random numbers of another. Each
function documents its draw order.

Sizes: before drawing anything, every generator estimates the memory its sizes (instances,
features, labels, kernels, sub-streams, tree depth, ...) need and refuses them with a
``ValueError`` naming them and the estimate when it exceeds what the process can hold
(:func:`mlsom._memory.check_allocation`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from .._memory import check_allocation, nbytes_of
from .._validation import check_float, check_int, check_option

__all__ = [
    "BinaryStreamGenerator",
    "HyperplaneGenerator",
    "RandomRBFGenerator",
    "RandomTreeGenerator",
    "WaveformGenerator",
    "moa_spherical",
    "read_multilabel",
]

SeedLike = int | np.random.SeedSequence | np.random.Generator | None

# MOA RandomRBFGeneratorEvents: the kernels take one movement step every 10 instances, and travel a
# distance of 0.01 every `speed` (our shift_every) instances, i.e. 0.1 / speed per step.
_STEP_EVERY = 10
_DISTANCE_PER_PERIOD = 0.01

# Read et al.'s sampler visits every label of every instance against every label switched on:
# n L**2 operations, so the number of labels is bounded (the paper's streams have at most 22).
_MAX_READ_LABELS = 1000
# Calibration sub-seeds: each one draws the whole stream again.
_MAX_ATTEMPTS = 100
# MOA draws the RBF centroids one at a time (a Python loop): at most a million.
_MAX_CENTROIDS = 10**6
# Bytes per node of a random tree while it is built (five Python lists) and kept (five arrays).
_TREE_NODE_BYTES = 250
# Largest int64 (class counts, numpy's integer draws).
_MAX_INT64 = 2**63 - 1


# --------------------------------------------------------------------------------------- helpers


def seed_sequence(seed: SeedLike, name: str = "seed") -> np.random.SeedSequence:
    """A SeedSequence from an int >= 0, a SeedSequence, a Generator (consumes 4 draws) or None."""
    if isinstance(seed, np.random.SeedSequence):
        # a fresh copy: spawning children must not change the caller's object, so that the same
        # SeedSequence always gives the same stream
        return np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"{name} must be an int, a numpy SeedSequence or Generator, or None; got {seed!r}"
        )
    if seed < 0:
        raise ValueError(f"{name} must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed))


def _class_dtype(n_classes):
    """The smallest signed integer type that holds the class indices 0 .. n_classes - 1 (int8
    for up to 127 classes: a cast to int8 wrapped larger indices round)."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_classes - 1 <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _rng(seed: SeedLike, name: str = "random_state") -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed_sequence(seed, name))


def _attempt_sequence(root: np.random.SeedSequence, attempt: int) -> np.random.SeedSequence:
    """Sub-seed number ``attempt`` of a root sequence (attempt 0 is the root itself)."""
    if attempt == 0:
        return seed_sequence(root)
    words = [root.entropy] if isinstance(root.entropy, int) else list(root.entropy)
    return np.random.SeedSequence([*words, *root.spawn_key, 0x5EED, attempt])


def _round_half_up(x: float) -> int:
    """Java's Math.round: floor(x + 1/2)."""
    return int(math.floor(x + 0.5))


def _prefix_size(fraction: float, n: int) -> int:
    """floor(fraction * n + 1/2) in exact decimal arithmetic (as the prefix split rounds)."""
    return int(math.floor(Fraction(repr(float(fraction))) * n + Fraction(1, 2)))


def _cardinality(Y: np.ndarray) -> float:
    return float(Y.sum(axis=1).mean()) if len(Y) else float("nan")


# ================================================================================ spherical streams


def _sphere_directions(angles: np.ndarray) -> np.ndarray:
    """Unit vectors from d - 1 hyperspherical angles (MOA's coordinates): (n, d - 1) -> (n, d).

    u_1 = cos a_1, u_i = sin a_1 ... sin a_(i-1) cos a_i, u_d = sin a_1 ... sin a_(d-1).
    """
    n, m = angles.shape
    out = np.empty((n, m + 1))
    running = np.ones(n)
    for i in range(m):
        out[:, i] = running * np.cos(angles[:, i])
        running = running * np.sin(angles[:, i])
    out[:, m] = running
    return out


def _straight_leg_path(
    start: np.ndarray, radius: float, n_steps: int, step_length: float, rng: np.random.Generator
) -> np.ndarray:
    """Positions of one kernel after 0..n_steps movement steps (MOA RandomRBFGeneratorEvents).

    The kernel walks towards a destination drawn from U[0, 1)^d, ``step_length`` per step, in
    T = floor(distance / step_length) steps. When the leg is complete the next step draws a new
    destination without moving. A step that would leave the feasible box [r, 1 - r]^d (the sphere
    must stay inside the unit cube) draws new destinations from the current centre until the first
    step of the new leg is feasible, and takes it. Destinations are the only random draws.
    """
    d = start.shape[0]
    lo, hi = radius, 1.0 - radius
    path = np.empty((n_steps + 1, d))
    path[0] = start
    c = start.copy()

    def new_leg():
        dest = rng.random(d)
        dist = float(np.linalg.norm(dest - c))
        steps = dist / step_length
        if not math.isfinite(steps):
            # a step below 1e-308 of the distance: the kernel cannot move in float64 (c + delta
            # rounds to c), and the leg never ends within the stream
            return np.zeros(d), n_steps + 1
        n_leg = int(math.floor(steps))
        return ((dest - c) / n_leg if n_leg > 0 else np.zeros(d)), n_leg

    delta, n_leg = new_leg()
    done = 0  # steps taken in the current leg
    q = 0  # steps taken in total
    while q < n_steps:
        if done >= n_leg:  # leg complete (or a zero-length leg): new destination, no move
            delta, n_leg = new_leg()
            done = 0
            q += 1
            path[q] = c
            continue
        m = min(n_leg - done, n_steps - q)
        pos = c + np.arange(1, m + 1)[:, None] * delta
        ok = np.all((pos >= lo) & (pos <= hi), axis=1)
        n_ok = m if ok.all() else int(np.argmin(ok))
        if n_ok:
            path[q + 1 : q + 1 + n_ok] = pos[:n_ok]
            c = pos[n_ok - 1].copy()
            q += n_ok
            done += n_ok
        if n_ok < m:  # the next step leaves the box: redirect from the current centre
            for _ in range(10_000):
                delta, n_leg = new_leg()
                proposal = c + delta
                if n_leg > 0 and np.all((proposal >= lo) & (proposal <= hi)):
                    break
            else:  # pragma: no cover - needs 10,000 infeasible destinations in a row
                delta, n_leg = np.zeros(d), 0
                proposal = c
            c = proposal
            q += 1
            done = 1
            path[q] = c
    return path


def _rotating_centers(n_steps: int, orbit_radius: float, shift_every: float) -> np.ndarray:
    """Two kernels counter-rotating about (0.5, 0.5): positions after 0..n_steps steps."""
    omega = _DISTANCE_PER_PERIOD / (orbit_radius * shift_every)  # rad per instance
    angle = omega * _STEP_EVERY * np.arange(n_steps + 1)
    cos, sin = np.cos(angle), np.sin(angle)
    centers = np.empty((n_steps + 1, 2, 2))
    centers[:, 0, 0] = 0.5 + orbit_radius * cos
    centers[:, 0, 1] = 0.5 + orbit_radius * sin
    centers[:, 1, 0] = 0.5 - orbit_radius * cos  # cos(pi - a) = -cos a
    centers[:, 1, 1] = 0.5 + orbit_radius * sin  # sin(pi - a) = sin a
    return centers


class _SphericalDraws:
    """All random numbers of a spherical stream except the trajectories; independent of r."""

    def __init__(self, root, n_classes, n_features, n_instances, noise_level, placement="uniform"):
        # a fourth child stream (the pairs placement) does not change the first three
        init_ss, inst_ss, traj_ss, *pair_ss = root.spawn(4 if placement == "pairs" else 3)
        self.placement = placement
        if placement == "pairs":
            # draw order: which label each kernel slot carries; the pairs' offset fractions; the
            # pairs' offset directions (normalised Gaussian vectors); the strata, feature by
            # feature
            rng = np.random.default_rng(pair_ss[0])
            n_pairs = n_classes // 2
            self.slot_label = rng.permutation(n_classes)
            self.pair_u = rng.random(n_pairs)
            g = rng.standard_normal((n_pairs, n_features))
            norm = np.linalg.norm(g, axis=1, keepdims=True)
            norm[norm == 0] = 1.0
            self.pair_direction = g / norm
            # groups (the pairs, then the single kernel of an odd K) are stratified per feature:
            # group g takes stratum strata[g, j] of the G equal strata of feature j
            n_groups = n_pairs + n_classes % 2
            self.strata = np.stack([rng.permutation(n_groups) for _ in range(n_features)], axis=1)
        # draw order (each line one child stream): kernel placement; per-instance numbers;
        # one trajectory stream per kernel (destinations, drawn lazily)
        self.center_u = np.random.default_rng(init_ss).random((n_classes, n_features))
        # one row of uniforms per instance, drawn row by row, so that a longer stream extends a
        # shorter one: kernel choice, radius fraction, d - 1 angles[, noise flag, noise point]
        d = n_features
        width = 1 + d + (1 + d if noise_level > 0 else 0)
        U = np.random.default_rng(inst_ss).random((n_instances, width))
        self.u_kernel = U[:, 0]
        self.kernel = np.minimum((U[:, 0] * n_classes).astype(np.intp), n_classes - 1)
        self.appear_at = None  # kernels that appear later (moa_spherical's appear_at)
        self.frac = U[:, 1]
        self.angles = 2.0 * np.pi * U[:, 2 : d + 1]
        if noise_level > 0:
            self.noise = U[:, d + 1] < noise_level
            self.noise_points = U[:, d + 2 :]
        else:
            self.noise = np.zeros(n_instances, dtype=bool)
            self.noise_points = None
        self.trajectory_seeds = traj_ss.spawn(n_classes)
        self.directions = _sphere_directions(self.angles)


def _paired_starts(draws, radius, pair_offset):
    """Start positions of the "pairs" placement (smooth in r, for the radius bisection).

    Kernel slots 2i and 2i + 1 form pair i, the last slot of an odd K is single. A pair's two
    centres lie 2 h apart, h = min(a / 2, 1/2 - r) with a = lo + (hi - lo) U (lo, hi =
    ``pair_offset``), symmetric about a midpoint m along a random direction u: m +- h u, with m in
    [r + h, 1 - r - h]^d, so both spheres start inside the unit cube (a single kernel: h = 0).
    Group g's coordinate j is uniform in stratum ``strata[g, j]`` of the G equal strata of that
    interval. Slot s carries label ``slot_label[s]``.
    """
    K, d = draws.center_u.shape
    lo, hi = pair_offset
    n_groups = draws.strata.shape[0]
    slots = np.empty((K, d))
    for i in range(K // 2):
        h = min(0.5 * (lo + (hi - lo) * draws.pair_u[i]), 0.5 - radius)
        u = (draws.strata[i] + draws.center_u[2 * i]) / n_groups
        m = (radius + h) + (1.0 - 2.0 * (radius + h)) * u
        slots[2 * i] = m + h * draws.pair_direction[i]
        slots[2 * i + 1] = m - h * draws.pair_direction[i]
    if K % 2:
        u = (draws.strata[-1] + draws.center_u[K - 1]) / n_groups
        slots[K - 1] = radius + (1.0 - 2.0 * radius) * u
    start = np.empty((K, d))
    start[draws.slot_label] = slots
    return start


def _spherical_centers(
    draws, radius, n_steps, shift_every, rotate, orbit_radius, pair_offset=(0.0, 0.0)
):
    K, d = draws.center_u.shape
    if rotate:
        return _rotating_centers(n_steps, orbit_radius, shift_every)
    if draws.placement == "pairs":
        start = _paired_starts(draws, radius, pair_offset)
    else:
        start = radius + (1.0 - 2.0 * radius) * draws.center_u
    if not np.isfinite(shift_every):
        return np.broadcast_to(start, (n_steps + 1, K, d))
    step = _DISTANCE_PER_PERIOD * _STEP_EVERY / shift_every
    centers = np.empty((n_steps + 1, K, d))
    for k in range(K):
        rng = np.random.default_rng(draws.trajectory_seeds[k])
        centers[:, k] = _straight_leg_path(start[k], radius, n_steps, step, rng)
    return centers


def _spherical_sample(draws, radius, centers, n):
    """X, Y (bool) and the kernel each was drawn from, of the first n instances given the kernel
    positions."""
    step_of = np.arange(1, n + 1) // _STEP_EVERY  # instance t = 1, 2, ...: steps taken before it
    C = centers[step_of]  # (n, K, d)
    rows = np.arange(n)
    kernel, active = _kernels_drawn(draws, n)
    X = C[rows, kernel] + (radius * draws.frac[:n])[:, None] * draws.directions[:n]
    noise = draws.noise[:n]
    if draws.noise_points is not None:
        X[noise] = draws.noise_points[:n][noise]
    sq = ((X[:, None, :] - C) ** 2).sum(axis=2)
    Y = sq <= radius * radius
    if active is not None:  # a kernel that has not appeared yet labels nothing
        Y &= active
    # the generating kernel always contains its sample (guards against a last-ulp rounding)
    Y[rows[~noise], kernel[~noise]] = True
    return X, Y, kernel


def _kernels_drawn(draws, n):
    """(the kernel each of the first n instances is drawn from, the (n, K) kernels that exist at
    each instance or None when all always do). With kernels that appear later, instance t draws
    among the kernels that exist at t, in label order, with the same uniform."""
    if draws.appear_at is None:
        return draws.kernel[:n], None
    active = np.arange(n)[:, None] >= draws.appear_at[None, :]
    n_active = active.sum(axis=1)
    pick = np.minimum((draws.u_kernel[:n] * n_active).astype(np.intp), n_active - 1)
    kernel = (np.cumsum(active, axis=1) > pick[:, None]).argmax(axis=1)
    return kernel, active


def moa_spherical(
    n_classes: int,
    n_features: int,
    n_instances: int,
    shift_every: float | None,
    seed: SeedLike = 0,
    radius: float | None = None,
    target_cardinality: float | None = None,
    calib_fraction: float = 0.1,
    rotate: bool = False,
    orbit_radius: float = 0.2,
    noise_level: float = 0.0,
    drop_unlabeled: bool = True,
    placement: str = "uniform",
    pair_offset: tuple[float, float] = (0.1, 0.2),
    appear_at: Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Spherical multi-label stream with moving kernels (MOA ``RandomRBFGeneratorEvents`` style).

    ``n_classes`` kernels of common radius r, one per label, moving in straight legs: an instance
    is drawn inside a kernel chosen uniformly and carries every label whose sphere contains it at
    its time. The model, its calibration and its variants: docs/datasets.md ("moa_spherical").

    Parameters
    ----------
    n_classes, n_features : int
        K, the number of kernels and labels (>= 1), and d, the dimension (>= 2); 2 with ``rotate``.
    n_instances : int
        Instances generated (before dropping unlabelled noise points, if any).
    shift_every : float or None
        V, instances per 0.01 of kernel travel (MOA's ``speed``). None or ``inf``: static kernels.
    seed : int, SeedSequence, Generator or None, default=0
        Root of three child streams: kernel placement; one row of uniforms per instance (so that
        a longer stream extends a shorter one with the same radius); one of destinations per kernel.
    radius, target_cardinality : float, optional
        The common kernel radius; or, when it is None, the label cardinality wanted on the first
        ``calib_fraction`` of the stream (the paper's z on D_tr): r is bisected on [0.02, 0.45]
        ([0.01, 0.5 - orbit_radius] with ``rotate``) until within 0.005 of it, else ValueError.
    calib_fraction : float, default=0.1
        The calibration prefix: round(calib_fraction * n) instances.
    rotate : bool, default=False
        MOA-Spher-2C-2A variant (our design): two kernels counter-rotating on a circle of radius
        ``orbit_radius`` about (0.5, 0.5), at an arc speed of 0.01 per ``shift_every`` instances.
    orbit_radius : float, default=0.2
        rho of the rotating variant; ``orbit_radius + radius <= 0.5``.
    noise_level : float, default=0.0
        Probability that an instance is a uniform noise point in [0, 1)^d (MOA's default is 0.1),
        labelled by the spheres that contain it.
    drop_unlabeled : bool, default=True
        Drop noise points in no sphere (the only instances that can have no label).
    placement : {"uniform", "pairs"}, default="uniform"
        Each centre uniform in [r, 1 - r]^d, or pairs of near-coincident spheres stratified over
        the cube (the registry's streams), drawn from a fourth child stream. Not with ``rotate``.
    pair_offset : (float, float), default=(0.1, 0.2)
        "pairs": the range [lo, hi] of the distance between a pair's centres (at most 1 - 2r).
    appear_at : sequence of int, optional
        Per kernel, the instance from which it exists (0 for one at least; docs/datasets.md).

    Returns
    -------
    X : ndarray of shape (n, n_features), float64
        The stream, in order (n = ``n_instances`` minus dropped noise points).
    Y : ndarray of shape (n, n_classes), uint8
        Label k is 1 iff the instance lies within r of kernel k at its time.
    info : dict
        ``radius``; ``calibration`` (target, achieved, n_calibration, iterations, bracket; None if
        the radius was given); ``centers`` ((n_instances // 10 + 1, K, d): instance t = 1, 2, ...
        uses ``centers[t // 10]``); per instance ``step_of`` (that index), ``kernel`` (-1: noise)
        and ``source_index``; ``shift_every``, ``rotate``, ``placement``; ``pair_offset`` and
        ``pairs`` ("pairs"); ``orbit_radius``, ``omega`` (rad per instance) and
        ``meeting_times`` (rotating); ``appear_at`` (a list, or None).

    Examples
    --------
    >>> from mlsom.datasets._generators import moa_spherical
    >>> X, Y, info = moa_spherical(5, 2, 20_000, 1500, seed=0, target_cardinality=1.54)
    >>> X.shape, Y.shape, Y.dtype
    ((20000, 2), (20000, 5), dtype('uint8'))
    >>> bool(abs(Y[:2000].sum(axis=1).mean() - 1.54) <= 0.005), bool(Y.sum(axis=1).min() >= 1)
    (True, True)
    """
    K, d, n, V = _check_spherical_sizes(n_classes, n_features, n_instances, shift_every)
    calib_fraction = check_float("calib_fraction", calib_fraction, low=0.0, high=1.0, low_open=True)
    noise_level = check_float("noise_level", noise_level, low=0.0, high=1.0)
    rotate = bool(rotate)
    pair_offset = _check_placement(placement, pair_offset, rotate)
    orbit_radius, bounds = _check_rotation(K, d, V, rotate, orbit_radius)
    radius, target_cardinality = _check_spherical_radius(
        radius, target_cardinality, K, orbit_radius if rotate else None
    )
    omega = _rotation_speed(orbit_radius, V, n) if rotate else None
    _check_spherical_memory(n, K, d, appear_at is not None)
    draws = _spherical_draws(seed, K, d, n, noise_level, placement, appear_at, rotate)
    motion = (V, rotate, orbit_radius, pair_offset)
    calibration = None
    if radius is None:
        radius, calibration = _calibrate_radius(
            draws, motion, n, calib_fraction, target_cardinality, bounds, drop_unlabeled
        )
    return _spherical_stream(draws, radius, motion, n, omega, calibration, drop_unlabeled)


def _spherical_draws(seed, K, d, n, noise_level, placement, appear_at, rotate):
    """The draws of moa_spherical, with its kernels that appear later (``appear_at`` checked)."""
    appear_at = _check_appear_at(appear_at, K, n, rotate)
    draws = _SphericalDraws(seed_sequence(seed), K, d, n, noise_level, placement)
    if appear_at is not None:
        draws.appear_at = appear_at
        if placement == "pairs":
            draws.slot_label = _late_kernels_paired(draws.slot_label, appear_at)
    return draws


def _late_kernels_paired(slot_label, appear_at):
    """The drawn slot order with the kernels that appear later moved to the last pairs (in the
    drawn order), so that a new label pairs with another new one, not with a label of the start;
    the others keep their drawn order in the remaining slots."""
    K = len(slot_label)
    late = [k for k in slot_label if appear_at[k] > 0]
    early = [k for k in slot_label if appear_at[k] == 0]
    pair_slots = [s for p in reversed(range(K // 2)) for s in (2 * p, 2 * p + 1)]
    late_slots = sorted(pair_slots[: len(late)])
    out = np.empty(K, dtype=slot_label.dtype)
    out[late_slots] = late
    out[[s for s in range(K) if s not in late_slots]] = early
    return out


def _check_appear_at(appear_at, K, n, rotate):
    """``appear_at`` as an int array of K instances in [0, n), one of them 0; or None."""
    if appear_at is None:
        return None
    if rotate:
        raise ValueError("appear_at does not apply to rotate=True (two fixed orbits)")
    if isinstance(appear_at, str | bytes) or not hasattr(appear_at, "__len__"):
        raise TypeError(f"appear_at must be a sequence of {K} ints, got {appear_at!r}")
    if len(appear_at) != K:
        raise ValueError(
            f"appear_at must have one instance per kernel (n_classes={K}), got {len(appear_at)}"
        )
    times = np.array(
        [check_int(f"appear_at[{k}]", t, low=0, high=n - 1) for k, t in enumerate(appear_at)],
        dtype=np.intp,
    )
    if times.min() != 0:
        raise ValueError(
            f"appear_at must have a kernel from the start (a 0), got {list(map(int, times))}"
        )
    return times


def _check_spherical_sizes(n_classes, n_features, n_instances, shift_every):
    """(K, d, n, V) of moa_spherical, checked; V is ``inf`` for static kernels."""
    K = check_int("n_classes", n_classes, low=1)
    d = check_int("n_features", n_features, low=2)
    n = check_int("n_instances", n_instances, low=1)
    if shift_every is None or (
        isinstance(shift_every, numbers.Real) and float(shift_every) == math.inf
    ):
        V = math.inf
    else:
        V = check_float("shift_every", shift_every, low=0.0, low_open=True)
    return K, d, n, V


def _check_placement(placement, pair_offset, rotate):
    """``pair_offset``, checked when ``placement`` is "pairs" (else as given)."""
    check_option("placement", placement, {"uniform", "pairs"})
    if placement == "pairs":
        pair_offset = _check_pair_offset(pair_offset, rotate)
    return pair_offset


def _check_rotation(K, d, V, rotate, orbit_radius):
    """(orbit_radius, the radii the calibration searches): the rotating variant's sizes and
    speed checked (``orbit_radius`` is as given when the kernels do not rotate)."""
    if not rotate:
        return orbit_radius, (0.02, 0.45)
    if K != 2 or d != 2:
        raise ValueError(f"rotate=True needs n_classes=2 and n_features=2, got {K} and {d}")
    if not math.isfinite(V):
        raise ValueError("rotate=True needs a finite shift_every (the rotation speed)")
    orbit_radius = check_float("orbit_radius", orbit_radius, low=0.0, high=0.5, low_open=True)
    return orbit_radius, (0.01, 0.5 - orbit_radius)


def _check_spherical_memory(n, K, d, appearing=False):
    """Refuses sizes whose stream, draws and kernel positions exceed what memory holds."""
    check_allocation(
        ("n_instances", "n_classes", "n_features"),
        (n, K, d),
        _spherical_nbytes(n, K, d, appearing),
        "the stream, its per-instance draws and the kernel positions",
    )


def _spherical_stream(draws, radius, motion, n, omega, calibration, drop_unlabeled):
    """(X, Y, info) of moa_spherical once the radius is known."""
    V, rotate, orbit_radius, pair_offset = motion
    n_steps = n // _STEP_EVERY
    centers = _spherical_centers(draws, radius, n_steps, V, rotate, orbit_radius, pair_offset)
    X, Yb, kernel = _spherical_sample(draws, radius, centers, n)
    kernel = np.where(draws.noise[:n], -1, kernel)
    source = np.arange(n)
    if drop_unlabeled and draws.noise.any():
        keep = Yb.any(axis=1)
        X, Yb, kernel, source = X[keep], Yb[keep], kernel[keep], source[keep]
    info: dict[str, Any] = {
        "radius": float(radius),
        "calibration": calibration,
        "centers": np.array(centers),
        "step_of": (source + 1) // _STEP_EVERY,
        "kernel": kernel,
        "source_index": source,
        "shift_every": V,
        "rotate": rotate,
        "placement": draws.placement,
        "appear_at": None if draws.appear_at is None else draws.appear_at.tolist(),
    }
    if draws.placement == "pairs":
        info["pair_offset"] = pair_offset
        sl = draws.slot_label
        info["pairs"] = [(int(sl[2 * i]), int(sl[2 * i + 1])) for i in range(len(sl) // 2)]
    if rotate:
        info["orbit_radius"] = float(orbit_radius)
        info["omega"] = omega
        info["meeting_times"] = _meeting_times(omega, n)
    return np.ascontiguousarray(X), Yb.astype(np.uint8), info


def _check_pair_offset(pair_offset, rotate):
    """``pair_offset`` of ``placement="pairs"`` as a pair of floats (lo, hi), lo <= hi."""
    if rotate:
        raise ValueError("placement='pairs' does not apply to rotate=True (two fixed orbits)")
    if isinstance(pair_offset, str) or not hasattr(pair_offset, "__len__") or len(pair_offset) != 2:
        raise TypeError(f"pair_offset must be a pair of floats (lo, hi), got {pair_offset!r}")
    a_lo = check_float("pair_offset[0]", pair_offset[0], low=0.0)
    a_hi = check_float("pair_offset[1]", pair_offset[1], low=0.0)
    if a_lo > a_hi:
        raise ValueError(f"pair_offset must have lo <= hi, got {pair_offset!r}")
    return (a_lo, a_hi)


def _check_spherical_radius(radius, target_cardinality, K, orbit_radius):
    """(radius, target_cardinality), checked: one of them is given (``orbit_radius``: None
    unless the kernels rotate)."""
    if radius is not None:
        radius = check_float("radius", radius, low=0.0, high=0.5, low_open=True)
        if orbit_radius is not None and radius + orbit_radius > 0.5:
            raise ValueError(
                f"radius + orbit_radius must be <= 0.5 (spheres inside the unit square), got "
                f"{radius} + {orbit_radius}"
            )
        if radius >= 0.5:
            raise ValueError(f"radius must be < 0.5, got {radius}")
    elif target_cardinality is None:
        raise ValueError("give either radius or target_cardinality (to calibrate the radius)")
    else:
        target_cardinality = check_float("target_cardinality", target_cardinality, low=1.0, high=K)
    return radius, target_cardinality


def _rotation_speed(orbit_radius, V, n):
    """The angular speed of the rotating kernels; refuses an infinite one, or more meeting times
    (two per turn) over ``n`` instances than memory holds."""
    denom = orbit_radius * V
    omega = _DISTANCE_PER_PERIOD / denom if denom > 0 else math.inf
    if not math.isfinite(omega):
        raise ValueError(
            f"shift_every={V!r} with orbit_radius={orbit_radius!r} makes the rotation speed "
            "infinite; use a larger shift_every"
        )
    # meeting times: one per half turn
    n_meet = omega * n / np.pi + 2
    check_allocation(
        "shift_every",
        V,
        nbytes_of(n_meet, itemsize=3 * 8),
        f"the meeting times of the rotating kernels (two per turn) over {n} instances",
    )
    return omega


def _meeting_times(omega, n):
    """The times in [0, n] at which the two rotating kernels meet."""
    # distance 2 rho |cos(w t)| is 0 at w t = pi/2 + m pi
    m = np.arange(0, int(omega * n / np.pi) + 2)
    with np.errstate(over="ignore"):
        meet = (np.pi / 2 + m * np.pi) / omega
    return meet[meet <= n]


def _calibrate_radius(draws, motion, n, calib_fraction, target_cardinality, bounds, drop_unlabeled):
    """The radius whose calibration prefix has the target cardinality, and the bisection's record.

    ``motion`` is (shift_every, rotate, orbit_radius, pair_offset); ``bounds`` the radii searched.
    """
    V, rotate, orbit_radius, pair_offset = motion

    def prefix_cardinality(r, n_cal):
        centers = _spherical_centers(
            draws, r, n_cal // _STEP_EVERY, V, rotate, orbit_radius, pair_offset
        )
        _, Yc, _ = _spherical_sample(draws, r, centers, n_cal)
        if drop_unlabeled:
            Yc = Yc[Yc.any(axis=1)]
        return _cardinality(Yc)

    n_cal = max(1, _prefix_size(calib_fraction, n))
    radius, calibration = _bisect(
        lambda r: prefix_cardinality(r, n_cal),
        target_cardinality,
        *bounds,
        tol=_SPHERICAL_TOL,
        what="radius",
    )
    if not calibration["converged"]:
        raise ValueError(
            f"target_cardinality={target_cardinality} is not reached within "
            f"{_SPHERICAL_TOL} on the calibration prefix of {n_cal} instance(s) "
            f"(calib_fraction={calib_fraction!r} of n_instances={n}): the closest radius, "
            f"{radius:.6g}, gives cardinality {calibration['achieved']:.4f}; a prefix of "
            f"{n_cal} instance(s) has cardinalities in steps of 1/{n_cal}, so give a larger "
            "calib_fraction or n_instances, or a radius"
        )
    calibration["n_calibration"] = n_cal
    return radius, calibration


def _spherical_nbytes(n, K, d, appearing=False):
    """Peak bytes of moa_spherical: per-instance draws, directions, the (n, K, d) kernel
    positions of every instance and two temporaries of that shape, the kernel paths (and, with
    kernels that appear later, which exist at each instance and their running count)."""
    per_instance = (
        8 * (4 * d + 3) + 8 * 3 * K * d + 9 * K + 8 * d + 40 + (9 * K if appearing else 0)
    )
    return nbytes_of(n, per_instance) + nbytes_of(n // _STEP_EVERY + 1, K, d, itemsize=2 * 8)


#: How close moa_spherical's calibrated cardinality comes to target_cardinality.
_SPHERICAL_TOL = 0.005


def _bisect(f, target, lo, hi, *, tol, what, max_iter=60):
    """Bisection of a (noisy, increasing) function; returns the best point and a record."""
    f_lo, f_hi = f(lo), f(hi)
    if not (f_lo - tol <= target <= f_hi + tol):
        raise ValueError(
            f"target cardinality {target} is out of reach: {what} in [{lo}, {hi}] gives "
            f"cardinalities {f_lo:.4f} .. {f_hi:.4f}"
        )
    best_x, best_f = (lo, f_lo) if abs(f_lo - target) <= abs(f_hi - target) else (hi, f_hi)
    it = 0
    a, b = lo, hi
    while abs(best_f - target) > tol and it < max_iter:
        it += 1
        mid = 0.5 * (a + b)
        fm = f(mid)
        if abs(fm - target) < abs(best_f - target):
            best_x, best_f = mid, fm
        if fm < target:
            a = mid
        else:
            b = mid
    return best_x, {
        "target": float(target),
        "achieved": float(best_f),
        "iterations": it,
        "bracket": (float(lo), float(hi)),
        "converged": bool(abs(best_f - target) <= tol),
    }


# ========================================================================= binary base generators


class BinaryStreamGenerator:
    """Base class of the binary (two-class) i.i.d. streams used under :func:`read_multilabel`.

    Subclasses set ``n_features`` and implement ``_sample(n, rng) -> (X, y)``. Any object with an
    ``n_features`` attribute and a ``sample(n_samples, random_state)`` method returning ``(X, y)``
    with y in {0, 1} can serve as a base generator.
    """

    n_features: int

    def _sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def sample(
        self, n_samples: int, random_state: SeedLike = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n_samples`` i.i.d. instances.

        Parameters
        ----------
        n_samples : int
            Number of instances.
        random_state : int, SeedSequence, Generator or None
            Instance random numbers (a Generator is used, and advanced, as is).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features), float64
        y : ndarray of shape (n_samples,), int8 (a wider integer type where n_classes > 127)
        """
        n = check_int("n_samples", n_samples, low=0)
        self._check_sample_memory("n_samples", n)
        X, y = self._sample(n, _rng(random_state))
        return X, y.astype(_class_dtype(getattr(self, "n_classes", 2)))

    def _check_sample_memory(self, name, n, copies=3):
        """Refuse n rows whose X (and temporaries) cannot fit in memory."""
        A = getattr(self, "n_features", 1)
        check_allocation(
            name,
            n,
            nbytes_of(n, A + 2, itemsize=copies * 8),
            f"{n} instances of {A} features (float64) and their temporaries",
        )

    def sample_by_class(
        self, n_samples: int, random_state: SeedLike = None, *, batch_size: int = 65_536
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first ``n_samples`` instances of class 0 and of class 1 of one i.i.d. stream.

        Equivalent in distribution to MOA's "next instance of class c" with its per-class queues,
        because the stream is i.i.d. Raises RuntimeError if a class does not occur, or is so rare
        that ``n_samples`` of its instances are not found in max(100,000, 2,000 ``n_samples``)
        draws (MOA aborts after 1000 consecutive misses). ``batch_size`` (>= 1) bounds the
        instances drawn at once.

        Returns
        -------
        X_neg, X_pos : ndarrays of shape (n_samples, n_features)
        """
        n = check_int("n_samples", n_samples, low=0)
        batch_size = check_int("batch_size", batch_size, low=1)
        # the two classes, their parts before concatenation, and one batch
        self._check_sample_memory("n_samples", n, copies=4)
        rng = _rng(random_state)
        need = [n, n]
        parts: list[list[np.ndarray]] = [[], []]
        seen = np.zeros(2, dtype=np.int64)
        drawn = 0
        # a class rarer than 1 in 2,000 draws is refused (MOA aborts after 1,000 misses in a
        # row), which bounds the loop
        max_drawn = max(100_000, 2000 * n)
        batch = min(batch_size, 2 * n + 64)
        while need[0] > 0 or need[1] > 0:
            X, y = self._sample(batch, rng)
            drawn += batch
            for c in (0, 1):
                rows = X[y == c]
                seen[c] += len(rows)
                if need[c] > 0:
                    take = rows[: need[c]]
                    parts[c].append(take)
                    need[c] -= len(take)
            if (seen == 0).any() and drawn >= max(100_000, 1000 * max(n, 1)):
                missing = int(np.argmin(seen))
                raise RuntimeError(
                    f"{type(self).__name__} produced no instance of class {missing} in {drawn} "
                    "draws; the binary stream is too skewed"
                )
            if (need[0] > 0 or need[1] > 0) and drawn >= max_drawn:
                short = 0 if need[0] > 0 else 1
                raise RuntimeError(
                    f"{type(self).__name__} produced only {int(seen[short])} instances of class "
                    f"{short} in {drawn} draws, {n} were needed; the binary stream is too skewed"
                )
            rate = np.maximum(seen, 1) / drawn
            wanted = max(need[c] / rate[c] for c in (0, 1))
            batch = int(min(batch_size, max(64, 1.1 * wanted + 64)))
        empty = np.empty((0, self.n_features))
        neg = np.concatenate(parts[0]) if parts[0] else empty
        pos = np.concatenate(parts[1]) if parts[1] else empty
        return neg, pos

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def _params(self) -> dict[str, Any]:
        return {}


class WaveformGenerator(BinaryStreamGenerator):
    """Breiman's waveform stream (MOA ``WaveformGenerator``), by default restricted to two classes.

    Three base waves h_1, h_2, h_3 are 21-point triangles of height 6 peaking at positions 6, 14
    and 10 (0-based). Class 0 mixes (h_1, h_2), class 1 (h_1, h_3), class 2 (h_2, h_3):
    x_i = m h_A(i) + (1 - m) h_B(i) + N(0, 1) with m ~ U[0, 1).

    MOA's meta multi-label generator needs a two-class base, which the 3-class waveform is not (its
    class index 2 overflows MOA's queues). Our choice (``docs/protocol.md`` 2.1):
    ``n_classes=2`` keeps
    classes 0 and 1 only -- MOA's stream with class-2 instances rejected, i.e. the class uniform on
    {0, 1}; class 0 is the "negative" instance, class 1 the "positive" one.

    Parameters
    ----------
    n_classes : {2, 3}, default=2
        2: the binary restriction used by :func:`read_multilabel`; 3: MOA's original.
    noise_features : bool, default=False
        Append 19 pure N(0, 1) attributes (MOA's ``addNoise``): 40 attributes instead of 21.

    Examples
    --------
    >>> from mlsom.datasets._generators import WaveformGenerator
    >>> X, y = WaveformGenerator().sample(1000, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 21), [0, 1])
    """

    _PAIRS = ((0, 1), (0, 2), (1, 2))

    def __init__(self, n_classes: int = 2, noise_features: bool = False):
        self.n_classes = check_int("n_classes", n_classes, low=2, high=3)
        if not isinstance(noise_features, (bool, np.bool_)):
            raise TypeError(f"noise_features must be True or False, got {noise_features!r}")
        self.noise_features = bool(noise_features)
        self.n_features = 40 if self.noise_features else 21
        i = np.arange(21)
        self.waves_ = np.stack(
            [np.maximum(0.0, 6.0 - np.abs(i - peak)) for peak in (6, 14, 10)]
        )  # (3, 21)

    def _params(self):
        return {"n_classes": self.n_classes, "noise_features": self.noise_features}

    def _sample(self, n, rng):
        # draw order: class, mixing weight, 21 (or 40) Gaussians
        y = rng.integers(0, self.n_classes, size=n)
        m = rng.random(n)
        noise = rng.standard_normal((n, self.n_features))
        pairs = np.asarray(self._PAIRS)[y]
        X = noise
        X[:, :21] += (
            m[:, None] * self.waves_[pairs[:, 0]] + (1.0 - m)[:, None] * self.waves_[pairs[:, 1]]
        )
        return X, y


class RandomTreeGenerator(BinaryStreamGenerator):
    """Random decision-tree concept (MOA ``RandomTreeGenerator``, numeric attributes only).

    Tree construction (one model stream): at depth >= ``max_depth``, or at depth >=
    ``first_leaf_level`` with probability ``leaf_fraction``, a leaf with a uniform class; otherwise
    a split on a uniformly chosen attribute at a threshold uniform within that attribute's current
    interval (intervals start at [0, 1] and narrow along the path); left child "<", right ">=".
    Instances are x ~ U[0, 1)^d labelled by the tree.

    If the tree puts less than ``min_class_fraction`` of the mass on a class (estimated on 10,000
    pilot instances), it is redrawn with the next sub-seed (MOA would abort once used under the meta
    generator); ``n_attempts_`` records how many trees were drawn.

    Parameters
    ----------
    n_features : int, default=30
    max_depth : int, default=5
    first_leaf_level : int, default=3
    leaf_fraction : float, default=0.15
    n_classes : int, default=2
    min_class_fraction : float, default=0.01
    random_state : int, SeedSequence, Generator or None
        Seeds the tree.

    Attributes
    ----------
    feature_, threshold_, left_, right_, value_ : ndarrays
        The tree, one entry per node (node 0 is the root); a leaf has ``value_ >= 0`` (its class)
        and points to itself.
    n_attempts_ : int

    Examples
    --------
    >>> from mlsom.datasets._generators import RandomTreeGenerator
    >>> gen = RandomTreeGenerator(random_state=0)
    >>> X, y = gen.sample(2000, random_state=1)
    >>> X.shape, bool(0.01 < y.mean() < 0.99)
    ((2000, 30), True)
    """

    def __init__(
        self,
        n_features: int = 30,
        max_depth: int = 5,
        first_leaf_level: int = 3,
        leaf_fraction: float = 0.15,
        n_classes: int = 2,
        min_class_fraction: float = 0.01,
        random_state: SeedLike = None,
    ):
        self.n_features = check_int("n_features", n_features, low=1)
        self.max_depth = check_int("max_depth", max_depth, low=0)
        self.first_leaf_level = check_int("first_leaf_level", first_leaf_level, low=0)
        self.leaf_fraction = check_float("leaf_fraction", leaf_fraction, low=0.0, high=1.0)
        self.n_classes = check_int("n_classes", n_classes, low=2, high=_MAX_INT64)
        self.min_class_fraction = check_float(
            "min_class_fraction", min_class_fraction, low=0.0, high=1.0 / self.n_classes
        )
        nodes = _expected_tree_nodes(self.max_depth, self.first_leaf_level, self.leaf_fraction)
        check_allocation(
            ("max_depth", "first_leaf_level", "leaf_fraction"),
            (self.max_depth, self.first_leaf_level, self.leaf_fraction),
            nbytes_of(nodes, itemsize=_TREE_NODE_BYTES),
            f"a random tree of {nodes:.3g} nodes (expected)",
        )
        # the pilot sample and its class counts
        check_allocation(
            ("n_features", "n_classes"),
            (self.n_features, self.n_classes),
            nbytes_of(10_000, self.n_features + 2, itemsize=3 * 8)
            + nbytes_of(self.n_classes, itemsize=2 * 8),
            "the 10,000 pilot instances and their class counts",
        )
        root = seed_sequence(random_state, "random_state")
        for attempt in range(1, 101):
            tree_ss, pilot_ss = _attempt_sequence(root, attempt - 1).spawn(2)
            self._build(np.random.default_rng(tree_ss))
            _, y = self._sample(10_000, np.random.default_rng(pilot_ss))
            freq = np.bincount(y, minlength=self.n_classes) / len(y)
            if freq.min() >= self.min_class_fraction:
                break
        else:  # pragma: no cover - practically unreachable for the defaults
            raise RuntimeError("no balanced enough random tree in 100 attempts")
        self.n_attempts_ = attempt

    def _params(self):
        return {
            "n_features": self.n_features,
            "max_depth": self.max_depth,
            "first_leaf_level": self.first_leaf_level,
            "leaf_fraction": self.leaf_fraction,
            "n_classes": self.n_classes,
        }

    def _build(self, rng):
        feature, threshold, left, right, value = [], [], [], [], []
        # Depth first, the left subtree before the right one (MOA's recursion), with an explicit
        # stack so that a deep tree cannot exhaust Python's recursion limit. Each entry: depth,
        # the cell's lower and upper bounds, the parent and which child of it the node is.
        stack = [(0, np.zeros(self.n_features), np.ones(self.n_features), -1, left)]
        depth_reached = 0
        while stack:
            depth, lo, hi, parent, side = stack.pop()
            idx = len(feature)
            feature.append(0)
            threshold.append(0.0)
            left.append(idx)
            right.append(idx)
            value.append(-1)
            if parent >= 0:
                side[parent] = idx
            depth_reached = max(depth_reached, depth)
            # MOA draws the leaf coin only from first_leaf_level on (short-circuit &&)
            if depth >= self.max_depth or (
                depth >= self.first_leaf_level and self.leaf_fraction >= 1.0 - rng.random()
            ):
                value[idx] = int(rng.integers(0, self.n_classes))
                continue
            a = int(rng.integers(0, self.n_features))
            t = (hi[a] - lo[a]) * rng.random() + lo[a]
            feature[idx], threshold[idx] = a, t
            hi_left = hi.copy()
            hi_left[a] = t
            lo_right = lo.copy()
            lo_right[a] = t
            stack.append((depth + 1, lo_right, hi, idx, right))
            stack.append((depth + 1, lo, hi_left, idx, left))
        self._depth = depth_reached
        self.feature_ = np.asarray(feature, dtype=np.intp)
        self.threshold_ = np.asarray(threshold)
        self.left_ = np.asarray(left, dtype=np.intp)
        self.right_ = np.asarray(right, dtype=np.intp)
        self.value_ = np.asarray(value, dtype=np.intp)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Index of the leaf that each row of X falls in."""
        X = np.asarray(X, dtype=np.float64)
        node = np.zeros(len(X), dtype=np.intp)
        rows = np.arange(len(X))
        # as many steps as the tree is deep (at most max_depth): leaves point to themselves
        for _ in range(getattr(self, "_depth", self.max_depth)):
            go_left = X[rows, self.feature_[node]] < self.threshold_[node]
            node = np.where(go_left, self.left_[node], self.right_[node])
        return node

    def _sample(self, n, rng):
        X = rng.random((n, self.n_features))
        return X, self.value_[self.apply(X)]


def _expected_tree_nodes(max_depth, first_leaf_level, leaf_fraction):
    """Expected number of nodes of a random tree (inf when too large for a float).

    Every node above ``first_leaf_level`` splits; below it a node splits with probability
    ``1 - leaf_fraction``, so level d holds 2**d nodes down to first_leaf_level, then
    2**first_leaf_level * r**(d - first_leaf_level) with r = 2 (1 - leaf_fraction).
    """
    top = min(first_leaf_level, max_depth)
    try:
        total = 2.0 ** (top + 1) - 1.0
        if max_depth > first_leaf_level:
            r = 2.0 * (1.0 - leaf_fraction)
            levels = max_depth - first_leaf_level
            if r == 1.0:
                deeper = float(levels)
            elif r < 1.0:
                deeper = r * (1.0 - r**levels) / (1.0 - r)
            else:
                deeper = r * (r**levels - 1.0) / (r - 1.0)
            total += 2.0**first_leaf_level * deeper
    except OverflowError:
        return math.inf
    return total


class HyperplaneGenerator(BinaryStreamGenerator):
    """Rotating-hyperplane concept (MOA ``HyperplaneGenerator``) without drift.

    Weights w_i ~ U[0, 1) (model stream); x ~ U[0, 1)^d; class 1 iff sum_i w_i x_i >= sum_i w_i / 2,
    then flipped with probability ``noise``. MOA's ``magChange`` is 0 by default and the paper
    mentions no hyperplane drift, so the plane is fixed.

    Parameters
    ----------
    n_features : int, default=10
    noise : float, default=0.05
        Label-flip probability (MOA's ``noisePercentage`` 5).
    random_state : int, SeedSequence, Generator or None
        Seeds the weights.

    Examples
    --------
    >>> from mlsom.datasets._generators import HyperplaneGenerator
    >>> X, y = HyperplaneGenerator(random_state=0).sample(10_000, random_state=1)
    >>> X.shape, bool(0.45 < y.mean() < 0.55)
    ((10000, 10), True)
    """

    def __init__(self, n_features: int = 10, noise: float = 0.05, random_state: SeedLike = None):
        self.n_features = check_int("n_features", n_features, low=1)
        self.noise = check_float("noise", noise, low=0.0, high=1.0)
        check_allocation(
            "n_features", self.n_features, nbytes_of(self.n_features, itemsize=8), "the weights"
        )
        self.weights_ = _rng(random_state).random(self.n_features)

    def _params(self):
        return {"n_features": self.n_features, "noise": self.noise}

    def decision(self, X: np.ndarray) -> np.ndarray:
        """Noise-free class of each row of X."""
        X = np.asarray(X, dtype=np.float64)
        return (X @ self.weights_ >= 0.5 * self.weights_.sum()).astype(np.int8)

    def _sample(self, n, rng):
        # draw order: attributes, flip draws
        X = rng.random((n, self.n_features))
        y = self.decision(X)
        flip = rng.random(n) < self.noise
        return X, np.where(flip, 1 - y, y)


class RandomRBFGenerator(BinaryStreamGenerator):
    """Random radial-basis-function concept (MOA ``RandomRBFGenerator``), stationary.

    Model (one stream), per centroid in turn: centre U[0, 1)^d, class uniform in {0, ..., C - 1},
    spread sigma ~ U[0, 1), weight ~ U[0, 1). Instance: centroid j with probability w_j / sum w;
    a ~ U[-1, 1)^d, g ~ N(0, 1); x = mu_j + a g sigma_j / ||a|| (a half-normal radius of scale
    sigma_j in the normalised direction of a cube vector); class c_j.

    Parameters
    ----------
    n_features : int, default=80
        The paper's Mult-Spher-RB uses 80 (MOA's default is 10).
    n_classes : int, default=2
    n_centroids : int, default=50
        At most 1,000,000 (drawn one at a time, in MOA's order).
    random_state : int, SeedSequence, Generator or None
        Seeds the centroids.

    Examples
    --------
    >>> from mlsom.datasets._generators import RandomRBFGenerator
    >>> gen = RandomRBFGenerator(n_features=5, random_state=0)
    >>> X, y = gen.sample(1000, random_state=1)
    >>> X.shape, gen.centers_.shape
    ((1000, 5), (50, 5))
    """

    def __init__(
        self,
        n_features: int = 80,
        n_classes: int = 2,
        n_centroids: int = 50,
        random_state: SeedLike = None,
    ):
        self.n_features = check_int("n_features", n_features, low=1)
        self.n_classes = check_int("n_classes", n_classes, low=2, high=_MAX_INT64)
        self.n_centroids = check_int("n_centroids", n_centroids, low=1, high=_MAX_CENTROIDS)
        check_allocation(
            ("n_centroids", "n_features"),
            (self.n_centroids, self.n_features),
            nbytes_of(self.n_centroids, self.n_features + 4, itemsize=8),
            "the centroids",
        )
        rng = _rng(random_state)
        centers = np.empty((self.n_centroids, self.n_features))
        classes = np.empty(self.n_centroids, dtype=np.int64)
        sigma = np.empty(self.n_centroids)
        weights = np.empty(self.n_centroids)
        for i in range(self.n_centroids):  # MOA's draw order
            centers[i] = rng.random(self.n_features)
            classes[i] = rng.integers(0, self.n_classes)
            sigma[i] = rng.random()
            weights[i] = rng.random()
        self.centers_, self.classes_, self.sigma_, self.weights_ = centers, classes, sigma, weights
        self._cum = np.cumsum(weights)

    def _params(self):
        return {
            "n_features": self.n_features,
            "n_classes": self.n_classes,
            "n_centroids": self.n_centroids,
        }

    def _sample(self, n, rng):
        # draw order: centroid choices, cube vectors, Gaussian radii
        j = np.searchsorted(self._cum, rng.random(n) * self._cum[-1], side="right")
        j = np.minimum(j, self.n_centroids - 1)
        a = 2.0 * rng.random((n, self.n_features)) - 1.0
        g = rng.standard_normal(n)
        norm = np.sqrt(np.einsum("ij,ij->i", a, a))
        X = self.centers_[j] + a * (g * self.sigma_[j] / norm)[:, None]
        return X, self.classes_[j]


_BASES = {
    "waveform": WaveformGenerator,
    "random_tree": RandomTreeGenerator,
    "hyperplane": HyperplaneGenerator,
    "rbf": RandomRBFGenerator,
}


def _make_base(base, n_features, seed_seq):
    if isinstance(base, str):
        check_option("base", base, _BASES)
        if base == "waveform":
            if n_features not in (21, 40):
                raise ValueError(
                    f"n_features must be 21 (or 40 with noise attributes) for the waveform base, "
                    f"got {n_features}"
                )
            return WaveformGenerator(noise_features=n_features == 40)
        return _BASES[base](n_features=n_features, random_state=seed_seq)
    if not hasattr(base, "sample") or not hasattr(base, "n_features"):
        raise TypeError(
            f"base must be one of {sorted(_BASES)} or an object with n_features and "
            f"sample(n, random_state); got {base!r}"
        )
    if base.n_features != n_features:
        raise ValueError(
            f"n_features ({n_features}) must equal the base generator's ({base.n_features})"
        )
    return base


def _base_by_class(base, n, seed_seq):
    if hasattr(base, "sample_by_class"):
        return base.sample_by_class(n, np.random.default_rng(seed_seq))
    # a plain object with sample(n, random_state): use the generic loop of the base class
    shim = BinaryStreamGenerator()
    shim.n_features = base.n_features
    shim._sample = lambda m, rng: base.sample(m, rng)  # type: ignore[method-assign]
    return shim.sample_by_class(n, np.random.default_rng(seed_seq))


# ============================================================ Read et al. meta multi-label stream


def _scale_priors(u: np.ndarray, z: float) -> np.ndarray:
    """Label priors: p_j = min(1, lam u_j) with sum p = z.

    This is the limit of MOA's loop {c = sum p / z; p <- min(1, p / c)} until sum p >= z (clipped
    entries stay at 1, the others keep a common scale), computed in closed form.
    """
    L = len(u)
    if z >= L:
        return np.ones(L)
    order = np.argsort(-u, kind="stable")
    us = u[order]
    tail = np.cumsum(us[::-1])[::-1]  # tail[m] = sum of us[m:]
    p = np.empty(L)
    for m in range(L):  # m largest entries clipped at 1
        if tail[m] <= 0:
            break
        lam = (z - m) / tail[m]
        if lam * us[m] <= 1.0:
            p[order] = np.minimum(1.0, lam * u[order])
            p[order[:m]] = 1.0
            return p
    return np.ones(L)


def _conditional(p, flags, exclusive):
    """MOA's matrix Q (Q[a, b] = P(y_a = 1 | y_b = 1) intended, Q[j, j] = p_j).

    flags, exclusive: booleans over the pairs j < k in row-major order (dependent pair; coin picks
    the "mutual exclusion" bound max(0, p_j + p_k - 1), else the "co-occurrence" bound
    min(1, p_k / p_j)); then Q[k, j] = Q[j, k] p_j / p_k (Bayes). Independent: Q[j, k] = p_j,
    Q[k, j] = p_k.
    """
    L = len(p)
    j, k = np.triu_indices(L, 1)
    pj, pk = p[j], p[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.maximum(0.0, pj + pk - 1.0)
        high = np.minimum(1.0, pk / pj)
        qjk = np.where(flags, np.where(exclusive, low, high), pj)
        qkj = np.where(flags, qjk * pj / pk, pk)
    Q = np.diag(p).astype(np.float64)
    Q[j, k] = np.nan_to_num(qjk, nan=0.0, posinf=1.0)
    Q[k, j] = np.nan_to_num(qkj, nan=0.0, posinf=1.0)
    return Q


class _SetDraws:
    """Raw uniforms of n label-set draws: first label, visiting order keys, acceptances."""

    def __init__(self, rng, n, L):
        self.first = rng.random(n)
        self.keys = rng.random((n, L))
        self.accept = rng.random((n, L - 1))

    def take(self, rows):
        out = object.__new__(_SetDraws)
        out.first, out.keys, out.accept = self.first[rows], self.keys[rows], self.accept[rows]
        return out

    def __len__(self):
        return len(self.first)


def _sample_sets(priors, Q, draws):
    """Read et al.'s label-set sampler, vectorised over instances; returns bool (n, L).

    1. label k from the normalised priors (inverse CDF), y_k = 1;
    2. the other labels in a uniformly random order (argsort of uniform keys with k first); label j
       is switched on iff prod_{l on} Q[j, l] > U.
    """
    n = len(draws)
    L = len(priors)
    Y = np.zeros((n, L), dtype=bool)
    if n == 0:
        return Y
    cdf = np.cumsum(priors / priors.sum())
    k = np.minimum(np.searchsorted(cdf, draws.first, side="right"), L - 1)
    rows = np.arange(n)
    Y[rows, k] = True
    keys = draws.keys.copy()
    keys[rows, k] = -1.0
    order = np.argsort(keys, axis=1)[:, 1:]
    for s in range(L - 1):
        j = order[:, s]
        q = np.where(Y, Q[j], 1.0).prod(axis=1)
        Y[rows, j] = q > draws.accept[:, s]
    return Y


def _feature_map(Y_samples, n_features, perm):
    """Label combination S_a attached to each attribute a, from sampled label sets (bool (A, L)).

    Distinct sets sorted by count (descending; ties by lexicographic order of the sorted label
    tuple); the top-A counts, normalised, are the weights; set i fills round_half_up(max(w_i A, 1))
    slots, cycling through the sets again if the slots are not all filled; the slots are then
    permuted by ``perm``.
    """
    L = Y_samples.shape[1]
    A = n_features
    uniq, counts = np.unique(Y_samples, axis=0, return_counts=True)
    tuples = [tuple(np.flatnonzero(row).tolist()) for row in uniq]
    order = sorted(range(len(uniq)), key=lambda i: (-counts[i], tuples[i]))
    top = order[:A]
    weights = counts[top] / counts[top].sum()
    slots: list[int] = []
    i = 0
    while len(slots) < A:
        pos = i % len(top)
        num = _round_half_up(max(weights[pos] * A, 1.0))
        slots.extend([top[pos]] * min(num, A - len(slots)))
        i += 1
    S = uniq[np.asarray(slots)][perm]
    return S.reshape(A, L).astype(bool)


def _apply_feature_map(Y, S, X_neg, X_pos):
    """x_a = x_pos_a if S_a is a subset of Y else x_neg_a."""
    Sf = S.astype(np.float32)
    hits = Y.astype(np.float32) @ Sf.T  # exact for these small integers
    contains = hits >= Sf.sum(axis=1)[None, :]
    return np.where(contains, X_pos, X_neg)


class _MetaModel:
    """Concepts of a Read et al. stream as a function of z_param, from fixed raw draws."""

    def __init__(
        self, L, dependency, drift_fractions, sigma, drift_mode, cumulative, meta_rng, drift_rngs
    ):
        self.L = L
        n_pairs = L * (L - 1) // 2
        # meta stream, in this order: priors, dependency flags, coins
        self.prior_u = meta_rng.random(L)
        # MOA toggles a flag when U <= u
        self.flags = meta_rng.random(n_pairs) <= dependency
        self.exclusive = meta_rng.random(n_pairs) < 0.5
        self.drift_mode = drift_mode
        self.cumulative = cumulative
        self.sigma = sigma
        self.fractions = list(drift_fractions)
        # drift streams, one per sub-stream, each in this order:
        # gaussian: pair choice (a permutation of the L(L-1) ordered pairs), N(0, 1) values;
        # moa: replacement draws (L), new priors (L), flag toggles (pairs), coins (pairs)
        self.drift_draws = []
        for f, rng in zip(self.fractions, drift_rngs, strict=True):
            if drift_mode == "gaussian":
                m = _round_half_up(f * L * (L - 1))
                perm = rng.permutation(L * (L - 1))[:m]
                self.drift_draws.append((perm, rng.standard_normal(m)))
            else:
                self.drift_draws.append(
                    (
                        rng.random(L) < f,
                        rng.random(L),
                        rng.random(n_pairs) <= f,
                        rng.random(n_pairs) < 0.5,
                    )
                )

    def concepts(self, z_param):
        """List of (priors, Q) per sub-stream, and the concept-0 (undrifted) pair."""
        p0 = _scale_priors(self.prior_u, z_param)
        Q0 = _conditional(p0, self.flags, self.exclusive)
        base = (p0, Q0, self.flags)
        out = []
        prev = base
        L = self.L
        off_k, off_j = np.nonzero(~np.eye(L, dtype=bool))  # ordered pairs (k, j), k != j
        for f, draws in zip(self.fractions, self.drift_draws, strict=True):
            start = prev if self.cumulative else base
            p, Q, flags = start
            if f > 0:
                if self.drift_mode == "gaussian":
                    perm, eps = draws
                    Q = Q.copy()
                    kk, jj = off_k[perm], off_j[perm]
                    # p(y_k | y_j) <- N(p(y_k), sigma^2), clipped to a probability
                    Q[kk, jj] = np.clip(p0[kk] + self.sigma * eps, 0.0, 1.0)
                else:
                    replace, new_u, toggle, exclusive = draws
                    p = np.where(replace, new_u, p)
                    flags = flags ^ toggle
                    Q = _conditional(p, flags, exclusive)
            cur = (p, Q, flags)
            out.append(cur)
            prev = cur
        return (p0, Q0), [(c[0], c[1]) for c in out]

    def redrawn_pairs(self):
        """Gaussian mode: the (k, j) entries of Q redrawn in each sub-stream; None in MOA mode."""
        if self.drift_mode != "gaussian":
            return None
        off_k, off_j = np.nonzero(~np.eye(self.L, dtype=bool))
        return [
            np.stack([off_k[perm], off_j[perm]], axis=1) if f > 0 else np.empty((0, 2), np.intp)
            for f, (perm, _) in zip(self.fractions, self.drift_draws, strict=True)
        ]


class _ReadDraws:
    """Every random number of one Read et al. stream (one sub-seed), fixed before calibration.

    Child streams of the sub-seed, in spawn order: meta (priors, flags, coins, feature-map draws,
    slot shuffle), base model, base instances, drift (one child per sub-stream), label sets (one
    child per sub-stream), transitions.
    """

    def __init__(
        self,
        ss,
        L,
        A,
        n,
        fractions,
        boundaries,
        dependency,
        sigma,
        drift_mode,
        cumulative,
        transition_width,
        n_map_samples,
    ):
        meta_ss, self.base_model_ss, self.base_instance_ss, drift_ss, sample_ss, trans_ss = (
            ss.spawn(6)
        )
        S = len(fractions)
        self.L, self.n = L, n
        self.drift_rngs = [np.random.default_rng(c) for c in drift_ss.spawn(S)]
        meta_rng = np.random.default_rng(meta_ss)
        self.model = _MetaModel(
            L, dependency, fractions, sigma, drift_mode, cumulative, meta_rng, self.drift_rngs
        )
        self.map_draws = _SetDraws(meta_rng, n_map_samples, L)
        self.slot_perm = meta_rng.permutation(A)
        # the concept that generates each instance
        t = np.arange(n)
        if transition_width > 0 and S > 1:
            u = np.random.default_rng(trans_ss).random((S - 1, n))
            concept = np.zeros(n, dtype=np.int32)
            for s in range(1, S):  # nested ConceptDriftStreams: the latest boundary wins
                with np.errstate(over="ignore"):
                    prob = 1.0 / (1.0 + np.exp(-4.0 * (t - boundaries[s]) / transition_width))
                concept[u[s - 1] < prob] = s
        else:
            concept = (np.searchsorted(boundaries, t, side="right") - 1).astype(np.int32)
            concept = np.minimum(concept, S - 1)
        self.concept = concept
        self.rows_of = [np.flatnonzero(concept == s) for s in range(S)]
        self.set_draws = [
            _SetDraws(np.random.default_rng(c), len(r), L)
            for c, r in zip(sample_ss.spawn(S), self.rows_of, strict=True)
        ]

    def label_sets(self, z_param, limit=None):
        """Label sets (bool) of the first ``limit`` instances (all by default) for this z_param."""
        limit = self.n if limit is None else min(limit, self.n)
        _, concepts = self.model.concepts(z_param)
        Y = np.zeros((limit, self.L), dtype=bool)
        for s, (p, Q) in enumerate(concepts):
            m = int(np.searchsorted(self.rows_of[s], limit))
            if m:
                Y[self.rows_of[s][:m]] = _sample_sets(p, Q, self.set_draws[s].take(slice(0, m)))
        return Y


def _check_read_memory(size, n_map, transitions, remap):
    """Refuse sizes whose arrays cannot fit, naming the parameters that size each group."""
    n, L, A, S = size.n, size.L, size.A, len(size.fractions)
    # per instance: raw label-set draws (2L), the sampler's (n, L) temporaries, the label sets,
    # the class-conditional base instances (two, drawn in batches) and the feature-mapped X
    per_row = nbytes_of(n, 8 * 2 * L + 8 * 4 * L + L + 8 * 6 * A + 48)
    # the feature map's draws and their sampled label sets (once more per sub-stream if remapped)
    per_map = nbytes_of(n_map, (1 + (S if remap else 0)) * (8 * 2 * L + 8 * 4 * L + L))
    # per sub-stream: the drift draws (a permutation of the L (L - 1) pairs), the concept's Q and
    # its copy in info, the feature map; the sigmoid transitions draw S - 1 uniforms per instance
    per_sub = nbytes_of(S, 8 * 4 * L * L + A * L + 16 * L)
    trans = nbytes_of(S - 1, n, itemsize=8) if transitions and S > 1 else 0
    check_allocation(
        ("n_instances", "n_labels", "n_features"),
        (n, L, A),
        per_row,
        "the stream, its label sets and the base instances",
    )
    check_allocation(
        ("n_map_samples", "n_labels"), (n_map, L), per_map, "the label sets of the feature map"
    )
    check_allocation(
        ("drift_fractions", "n_labels"),
        (f"{S} sub-streams", L),
        per_sub + trans,
        "the concepts of the sub-streams and their transitions",
    )
    check_allocation(
        ("n_instances", "n_labels", "n_features", "n_map_samples", "drift_fractions"),
        (n, L, A, n_map, f"{S} sub-streams"),
        per_row + per_map + per_sub + trans,
        "the whole stream",
    )


def read_multilabel(
    base: str | BinaryStreamGenerator,
    n_labels: int,
    n_features: int,
    z: float,
    n_instances: int,
    drift_fractions: Sequence[float] = (0.0, 0.1, 0.1, 0.3),
    seed: SeedLike = 0,
    *,
    dependency: float = 0.25,
    sigma: float = 1.0,
    drift_mode: str = "gaussian",
    cumulative: bool = False,
    remap_features: bool = False,
    transition_width: float = 0,
    target_cardinality: float | None = None,
    calib_fraction: float = 0.1,
    n_map_samples: int = 100_000,
    max_attempts: int = 20,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Read et al.'s meta multi-label stream with the paper's four-sub-stream drift.

    MOA's ``MetaMultilabelGenerator`` (label priors and pairwise dependencies; each attribute
    from a positive or a negative instance of a binary base stream, by the label set) over
    ``len(drift_fractions)`` sub-streams, in each of which a fraction f_s of the conditionals
    p(y_k | y_j) is redrawn from N(p(y_k), sigma^2). The model: docs/datasets.md
    ("read_multilabel").

    Parameters
    ----------
    base : {"waveform", "random_tree", "hyperplane", "rbf"} or generator object
        The binary base stream (:class:`WaveformGenerator` of two classes,
        :class:`RandomTreeGenerator`, :class:`HyperplaneGenerator`, :class:`RandomRBFGenerator`,
        seeded from ``seed``), or an object with ``n_features`` and ``sample(n, random_state)``.
    n_labels, n_features, n_instances : int
        L (2 to 1,000: the sampler costs n L**2 operations), the base stream's attributes A (the
        paper: 21, 30, 10, 80; waveform: 21 or 40) and the stream's length n.
    z : float
        MOA's ``labelCardinality`` (0 < z <= L), used as is when ``target_cardinality`` is None.
    drift_fractions : sequence of float, default=(0.0, 0.1, 0.1, 0.3)
        f_s per sub-stream, in [0, 1] (the paper's); at most ``n_instances`` sub-streams.
    seed : int, SeedSequence, Generator or None, default=0
        Root of the random streams: meta, base model, base instances, one drift and one label-set
        stream per sub-stream, sigmoid transitions.
    dependency, sigma : float, default=0.25, 1.0
        The probability that a label pair is dependent; the deviation of the Gaussian redraws.
    drift_mode : {"gaussian", "moa"}, default="gaussian"
        The paper's redraw of f_s L (L - 1) ordered pairs (k, j), or MOA's
        ``labelDependencyRatioChange`` (priors redrawn, dependency flags toggled).
    cumulative, remap_features : bool, default=False
        Each sub-stream's concept drifts from the previous one's, and its feature map follows its
        own concept (else both come from the undrifted concept).
    transition_width : float, default=0
        0: abrupt switches at the boundaries; w > 0: MOA's ``ConceptDriftStream`` sigmoid.
    target_cardinality : float, optional
        If given, z_param is bisected on (0, L] until the first ``calib_fraction`` (default 0.1)
        of the stream has this cardinality within 0.01, trying up to ``max_attempts`` sub-seeds
        (default 20, at most 100; ``info["attempt"]``).
    calib_fraction, n_map_samples, max_attempts : optional
        The calibration prefix, the label sets drawn for the feature map (default 100,000) and
        the sub-seeds tried.

    Returns
    -------
    X : ndarray of shape (n_instances, n_features), float64
    Y : ndarray of shape (n_instances, n_labels), uint8
        No row is empty.
    info : dict
        ``boundaries`` (S + 1 ints, b_0 = 0 ... b_S = n); ``drift_points`` (b_1 ... b_{S-1});
        ``concept`` (n,) int32, the sub-stream whose concept generated each instance; ``priors``
        ((S, L)) and ``conditional`` ((S, L, L) Q, Q[k, j] = p(y_k | y_j)) per concept;
        ``conditional_undrifted`` ((L, L) Q_0); ``redrawn_pairs`` (per sub-stream, the (m_s, 2)
        entries (k, j) redrawn; None with ``drift_mode="moa"``); ``dependency`` ((L, L) bool,
        upper triangle); ``feature_maps`` ((S, A, L) bool, S_a per concept); ``z_param``;
        ``attempt``; ``calibration`` (dict or None); ``cardinality_per_substream`` (S,);
        ``base`` (the base generator object).

    Examples
    --------
    >>> from mlsom.datasets._generators import read_multilabel
    >>> X, Y, info = read_multilabel("hyperplane", 5, 10, 1.68, 10_000, seed=0,
    ...                              target_cardinality=1.68, n_map_samples=20_000)
    >>> X.shape, Y.shape
    ((10000, 10), (10000, 5))
    >>> info["drift_points"].tolist()
    [2500, 5000, 7500]
    >>> bool(abs(Y[:1000].sum(axis=1).mean() - 1.68) <= 0.01)
    True
    """
    size = _check_read_sizes(n_labels, n_features, z, n_instances, drift_fractions)
    drift = _check_read_drift(dependency, sigma, drift_mode, cumulative, transition_width)
    sampling = _check_read_sampling(
        calib_fraction, n_map_samples, max_attempts, target_cardinality, size.L
    )
    if isinstance(base, str):
        check_option("base", base, _BASES)
    _check_read_memory(size, sampling.n_map_samples, drift.width > 0, bool(remap_features))
    return _read_stream(base, seed, size, drift, sampling, remap_features)


class _ReadSizes(NamedTuple):
    """read_multilabel's sizes, checked."""

    L: int  # labels
    A: int  # attributes
    n: int  # instances
    z: float
    fractions: list[float]  # the drift fraction of each sub-stream


class _ReadDrift(NamedTuple):
    """read_multilabel's drift, checked."""

    dependency: float
    sigma: float
    mode: str
    cumulative: Any  # (its truth value taken when the concepts are drawn)
    width: float  # of the transitions


class _ReadSampling(NamedTuple):
    """read_multilabel's calibration and feature-map sample, checked."""

    calib_fraction: float
    n_map_samples: int
    max_attempts: int
    target: float | None


def _check_read_sizes(n_labels, n_features, z, n_instances, drift_fractions):
    """The sizes of read_multilabel, checked in the order of its parameters."""
    L = check_int("n_labels", n_labels, low=2, high=_MAX_READ_LABELS)
    A = check_int("n_features", n_features, low=1)
    n = check_int("n_instances", n_instances, low=1)
    z = check_float("z", z, low=0.0, high=L, low_open=True)
    return _ReadSizes(L, A, n, z, _check_drift_fractions(drift_fractions, n))


def _check_read_drift(dependency, sigma, drift_mode, cumulative, transition_width):
    """The drift of read_multilabel, checked in the order of its parameters."""
    dependency = check_float("dependency", dependency, low=0.0, high=1.0)
    sigma = check_float("sigma", sigma, low=0.0)
    check_option("drift_mode", drift_mode, {"gaussian", "moa"})
    transition_width = check_float("transition_width", transition_width, low=0.0)
    return _ReadDrift(dependency, sigma, drift_mode, cumulative, transition_width)


def _check_read_sampling(calib_fraction, n_map_samples, max_attempts, target_cardinality, L):
    """The calibration and feature-map sample of read_multilabel, checked in the order of its
    parameters (``target_cardinality`` last, up to ``L``)."""
    calib_fraction = check_float("calib_fraction", calib_fraction, low=0.0, high=1.0, low_open=True)
    n_map_samples = check_int("n_map_samples", n_map_samples, low=1)
    max_attempts = check_int("max_attempts", max_attempts, low=1, high=_MAX_ATTEMPTS)
    if target_cardinality is not None:
        target_cardinality = check_float("target_cardinality", target_cardinality, low=1.0, high=L)
    return _ReadSampling(calib_fraction, n_map_samples, max_attempts, target_cardinality)


def _read_stream(base, seed, size, drift, sampling, remap_features):
    """(X, Y, info) of read_multilabel from its checked arguments."""
    L, A, n, z, fractions = size
    S = len(fractions)
    boundaries = np.array([_round_half_up(s * n / S) for s in range(S + 1)], dtype=np.int64)
    n_cal = max(1, _prefix_size(sampling.calib_fraction, n))
    root = seed_sequence(seed)

    def draws(attempt):
        return _ReadDraws(
            _attempt_sequence(root, attempt),
            L,
            A,
            n,
            fractions,
            boundaries,
            drift.dependency,
            drift.sigma,
            drift.mode,
            bool(drift.cumulative),
            drift.width,
            sampling.n_map_samples,
        )

    stream, z_param, calibration, attempt = _calibrated_draws(
        draws, z, sampling.target, n_cal, L, sampling.max_attempts, seed
    )
    model, concept = stream.model, stream.concept
    (p0, Q0), concepts = model.concepts(z_param)
    Yb = stream.label_sets(z_param)
    maps = _read_feature_maps(
        stream, p0, Q0, concepts, A, remap_features, sampling.n_map_samples, L
    )
    base_gen = _make_base(base, A, stream.base_model_ss)
    X_neg, X_pos = _base_by_class(base_gen, n, stream.base_instance_ss)
    X = np.empty((n, A))
    for s in range(S):
        r = stream.rows_of[s]
        X[r] = _apply_feature_map(Yb[r], maps[s], X_neg[r], X_pos[r])

    Y = Yb.astype(np.uint8)
    card = np.array(
        [_cardinality(Y[boundaries[s] : boundaries[s + 1]]) for s in range(S)], dtype=np.float64
    )
    j, k = np.triu_indices(L, 1)
    dep = np.zeros((L, L), dtype=bool)
    dep[j, k] = model.flags
    info: dict[str, Any] = {
        "boundaries": boundaries,
        "drift_points": boundaries[1:-1].copy(),
        "concept": concept,
        "priors": np.stack([c[0] for c in concepts]),
        "conditional": np.stack([c[1] for c in concepts]),
        "conditional_undrifted": Q0,
        "redrawn_pairs": model.redrawn_pairs(),
        "dependency": dep,
        "feature_maps": np.stack(maps),
        "z_param": float(z_param),
        "attempt": attempt,
        "calibration": calibration,
        "cardinality_per_substream": card,
        "base": base_gen,
    }
    return X, Y, info


def _check_drift_fractions(drift_fractions, n):
    """The sub-streams' drift fractions as floats in [0, 1]: at least one, at most ``n``."""
    if isinstance(drift_fractions, str) or not hasattr(drift_fractions, "__len__"):
        raise TypeError(
            "drift_fractions must be a sequence of floats (one per sub-stream), got "
            f"{type(drift_fractions).__name__}"
        )
    if len(drift_fractions) > n:
        raise ValueError(
            f"drift_fractions has {len(drift_fractions)} entries (sub-streams) but "
            f"n_instances={n}: every sub-stream needs at least one instance"
        )
    fractions = [check_float("drift_fractions[i]", f, low=0.0, high=1.0) for f in drift_fractions]
    if not fractions:
        raise ValueError("drift_fractions must have at least one entry (one sub-stream)")
    return fractions


def _calibrated_draws(draws, z, target_cardinality, n_cal, L, max_attempts, seed):
    """(stream, z_param, calibration, attempt): the draws of the first attempt (sub-seed) whose
    calibration prefix reaches ``target_cardinality``, or of the first one when there is none."""
    last_error: Exception | None = None
    for attempt in range(max_attempts):
        stream = draws(attempt)
        if target_cardinality is None:
            return stream, z, None, attempt
        try:
            z_param, calibration = _bisect(
                lambda zp, st=stream: _cardinality(st.label_sets(zp, n_cal)),
                target_cardinality,
                1e-3,
                float(L),
                tol=0.01,
                what="z_param",
            )
        except ValueError as exc:  # target below the floor (or above the ceiling) of this seed
            last_error = exc
            continue
        if calibration["converged"]:
            calibration["n_calibration"] = n_cal
            return stream, z_param, calibration, attempt
        last_error = ValueError(f"calibration stalled at cardinality {calibration['achieved']:.4f}")
    raise ValueError(
        f"target_cardinality={target_cardinality} not reached in {max_attempts} sub-seeds of "
        f"seed {seed!r}; last: {last_error}"
    )


def _read_feature_maps(stream, p0, Q0, concepts, A, remap_features, n_map_samples, L):
    """One feature map per sub-stream: S_a from the undrifted concept, or per concept with
    ``remap_features``."""
    if not remap_features:
        S0 = _feature_map(_sample_sets(p0, Q0, stream.map_draws), A, stream.slot_perm)
        return [S0] * len(concepts)
    maps = []
    for s, (p, Q) in enumerate(concepts):
        rng = stream.drift_rngs[s]  # continues after the drift draws
        draws = _SetDraws(rng, n_map_samples, L)
        maps.append(_feature_map(_sample_sets(p, Q, draws), A, rng.permutation(A)))
    return maps
