"""The hexagonal grid of a d x d self-organizing map."""

import numpy as np


def grid_positions(d):
    """Row and column of every unit, row-major: unit ``u`` is at ``(u // d, u % d)``.

    Returns an int64 array of shape (d*d, 2).
    """
    r, c = np.divmod(np.arange(d * d, dtype=np.int64), d)
    return np.column_stack([r, c])


def grid_coordinates(d):
    """Plane coordinates of the units: unit (r, c) sits at (c + 0.5 (r mod 2), r sqrt(3)/2)."""
    rc = grid_positions(d)
    return np.column_stack([rc[:, 1] + 0.5 * (rc[:, 0] % 2), rc[:, 0] * (np.sqrt(3.0) / 2.0)])


def grid_distances(d):
    """Euclidean distances between the units of a hexagonal d x d grid, shape (d*d, d*d).

    Computed from integers as sqrt(((2 dc')^2 + 3 dr^2) / 4), with c' = 2c + (r mod 2), so that the
    distances of whole-numbered neighbourhoods (1, 2, 3, ...) are exact and radius comparisons do
    not depend on rounding.
    """
    rc = grid_positions(d)
    c2 = 2 * rc[:, 1] + rc[:, 0] % 2
    dc = c2[:, None] - c2[None, :]
    dr = rc[:, 0][:, None] - rc[:, 0][None, :]
    return np.sqrt((dc * dc + 3 * dr * dr) / 4.0)


def initial_radius(d):
    """The 2/3-quantile of all pairwise grid distances (diagonal included), as R's kohonen."""
    return float(np.quantile(grid_distances(d), 2.0 / 3.0))
