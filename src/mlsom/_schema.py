"""The model's state: one table of every array it holds, by group.

Each row of ``MEMBERS`` names one array of the state (the dict ``SOMStreamClassifier._state``):
its group, its dtype (a NumPy dtype, or ``MODEL``: the model's float type, that of the neurons
``Wt``), its shape in the state's sizes, its initial value where a group is allocated empty, and
the model-file format that introduced it. The sizes are

* ``A``: features, ``M``: neurons of all maps, ``L``: labels, ``L+1``;
* ``W``: the decision rule's window of labelled entries per label (``MARGIN_WINDOW``);
* ``P``: the window of pairs of the paired tests (``PAIR_WINDOW``);
* ``B``: the rows of novelty detection's short-term memory (``NOVELTY_BUFFER``);
* an integer: that length.

A group's members are present all together or not at all. ``GROUPS`` says, for each group, the
group it needs (a state holding it holds that one too) and when the state holds it. The table
drives the allocation of a group (``allocate``), what a pickle and a model file keep
(``members``), the model file's checks of dtypes and shapes (``expected``, ``check_shapes``) and
the groups a state or a file holds (``groups_present``, ``check_groups``); see
docs/architecture.md, "Adding a state group".
"""

from typing import NamedTuple

import numpy as np

from ._method import MARGIN_WINDOW, NOVELTY_BUFFER, PAIR_WINDOW

#: the dtype of a member held in the model's float type (that of ``Wt``: float64 or float32)
MODEL = "model"


class Member(NamedTuple):
    name: str
    group: str
    dtype: object  # a dtype string, or MODEL
    shape: tuple  # of "A", "M", "L", "L+1", "W", "P" and integers
    init: object = 0  # a scalar, or one value per row of the first axis
    since: int = 1  # the model-file format that introduced it


class Group(NamedTuple):
    name: str
    needs: str | None  # the group a state with this one also holds
    when: str  # when the state holds it (docs)
    core: bool = True  # whether the compiled core reads it (a group of its State)


GROUPS = {
    g.name: g
    for g in (
        Group("maps", None, "always: the neurons of every label's map, from fit"),
        Group("counts", None, "always: the label counts T and N, S"),
        Group("labelled", None, "from the first labelled update on: each label's last positive"),
        Group("rule", "labelled", "with labelled: what labels taught the decision rule"),
        Group("guards", "rule", "with rule: each label's guards and supports"),
        Group("pairs", "rule", 'from the first labelled update with corrections="tested" on'),
        Group("persistence", "rule", "with rule: label persistence's record and its pairs"),
        Group("drift", None, "the robust variant: the drift gate"),
        Group("acceptance", None, "the robust variant: each label's acceptance offset"),
        Group(
            "novelty",
            None,
            "with novelty=True: the neurons' radii, the memory, the new labels",
            core=False,
        ),
    )
}
#: groups every state holds
REQUIRED = ("maps", "counts")

MEMBERS = (
    # the maps: neurons as columns (A, M), each neuron's label, the maps' offsets (label j's
    # neurons are offsets[j]:offsets[j + 1]), wins, log averOut, grid positions
    Member("Wt", "maps", MODEL, ("A", "M")),
    Member("ncls", "maps", "i4", ("M",)),
    Member("offsets", "maps", "i8", ("L+1",)),
    Member("counts", "maps", "i8", ("M",)),
    Member("log_averout", "maps", "f8", ("M",)),
    Member("positions", "maps", "i8", ("M", 2)),
    # label co-occurrence counts T and [N, S] (instances, sum of the label-set sizes)
    Member("T", "counts", "i8", ("L", "L")),
    Member("NS", "counts", "i8", (2,)),
    # each label's last labelled positive instance and whether it has one
    Member("last_positive", "labelled", MODEL, ("L", "A")),
    Member("has_positive", "labelled", "u1", ("L",)),
    # what labels taught the decision rule: each label's acceptance offset, the ring of its last
    # W labelled margins and their kinds (2 * kind + label, kind 0: ranked first, 1: tested,
    # 2: neither), how many entries it ever had, the labelled cardinality [mean, 1 once set]
    Member("label_offsets", "rule", "f8", ("L",)),
    Member("margin_memory", "rule", "f8", ("L", "W")),
    Member("margin_kinds", "rule", "u1", ("L", "W")),
    Member("margin_counts", "rule", "i8", ("L",)),
    Member("labelled_cardinality", "rule", "f8", (2,)),
    # each label's guards and supports (docs/method.md, "Guards"): rows offsets[c] onwards (the
    # rows not in use are 0), how many each label has, whether its decisions use its guards, and
    # beside margin_kinds whether each tested entry's instance was nearer one of its guards
    Member("guards", "guards", MODEL, ("M", "A")),
    Member("guard_counts", "guards", "i8", ("L",)),
    Member("supports", "guards", MODEL, ("M", "A")),
    Member("support_counts", "guards", "i8", ("L",)),
    Member("guards_on", "guards", "u1", ("L",)),
    Member("margin_vetoes", "guards", "u1", ("L", "W")),
    # the paired test of the corrections: per neuron where the other choice would have put it,
    # its tries (-1: none pending) and whether the strong choice was made; the ring of the last
    # P pairs (1: the strong choice won) and their count ever
    Member("alt_place", "pairs", MODEL, ("M", "A")),
    Member("alt_uses", "pairs", "i1", ("M",), init=-1),
    Member("alt_strong", "pairs", "u1", ("M",)),
    Member("pair_ring", "pairs", "u1", ("P",)),
    Member("pair_total", "pairs", "i8", (1,)),
    # label persistence (_persistence.py): the last instance classified, the model's prediction
    # for it, its proposal and the last prompt labels (rows 0, 1, 2: 0/1, 0/1, 1/0/-1), the
    # flags [its labels may still come promptly, it had a proposal, the last prompt labels are
    # its], the ring of the last P pairs (1: the proposal won) and their count ever
    Member("persist_row", "persistence", MODEL, ("A",)),
    Member("persist_labels", "persistence", "i1", (3, "L"), init=(0, 0, -1)),
    Member("persist_flags", "persistence", "u1", (3,)),
    Member("persist_ring", "persistence", "u1", ("P",)),
    Member("persist_total", "persistence", "i8", (1,)),
    # the robust variant's drift gate: each label's recent mean of the instances it learnt from
    # online, its training mean, the squared distance between them that opens its gate, and
    # whether it has opened
    Member("drift_mean", "drift", "f8", ("L", "A")),
    Member("drift_center", "drift", "f8", ("L", "A")),
    Member("drift_limit", "drift", "f8", ("L",)),
    Member("drift_open", "drift", "u1", ("L",)),
    # the robust variant's per-label acceptance: each label's offset, its recent predicted rate
    # and the training rate it tracks (0 for a label without a map)
    Member("label_acceptance", "acceptance", "f8", (3, "L")),
    # novelty detection (_detection.py): each neuron's radius; the neurons as they stood at the
    # start of the current block; the short-term memory of unexplained instances (rows 0..n-1
    # in arrival order) and each one's instance number; [rows in the memory, instances of the
    # online phase, unexplained ones since the last search]; per label [the
    # instance it was made at (-1: from fit), the rows it was made from, the last instance
    # classified with it (-1: none), its number k (named NPk; 0 for a label of fit), 1 once
    # retired, the caller's label column it stands for when labels named it (-1: none)]
    Member("radius", "novelty", "f8", ("M",)),
    Member("frozen", "novelty", MODEL, ("A", "M")),
    Member("novelty_buffer", "novelty", MODEL, ("B", "A")),
    Member("novelty_at", "novelty", "i8", ("B",), init=-1),
    Member("novelty_counts", "novelty", "i8", (3,)),
    Member("label_origin", "novelty", "i8", (6, "L"), init=(-1, 0, -1, 0, 0, -1)),
)

BY_NAME = {m.name: m for m in MEMBERS}

#: the state's entries that are not arrays of the table, kept with it (pickles keep them too;
#: a model file keeps them in its header): "ctl" is the robust variant's acceptance record,
#: "margin_order" the online phase's sorted cache of the rule's rings (rebuilt when absent)
FIELDS = (
    "k_nn",
    "n_iter",
    "n_features",
    "n_labels",
    "feature_names",
    "grid_size",
    "squared",
    "labels_dtype",
    "grid_scores",
    "variant",
    "ctl",
    "margin_order",
)


def names(group):
    """The members of a group, in the table's order."""
    if group not in GROUPS:
        raise KeyError(group)
    return tuple(m.name for m in MEMBERS if m.group == group)


def windows():
    """{"W": MARGIN_WINDOW, "P": PAIR_WINDOW, "B": NOVELTY_BUFFER}: the method's windows, which
    fix three sizes."""
    return {"W": MARGIN_WINDOW, "P": PAIR_WINDOW, "B": NOVELTY_BUFFER}


def dims(A, M, L):
    """The sizes a shape is written in."""
    return {"A": int(A), "M": int(M), "L": int(L), "L+1": int(L) + 1, **windows()}


def dims_of(st):
    """The sizes of a state (its neurons ``Wt`` (A, M) and its counts ``T`` (L, L))."""
    A, M = st["Wt"].shape
    return dims(A, M, st["T"].shape[0])


def expected(name, sizes, model_dtype):
    """(dtype, shape) of member ``name`` for these sizes and this float type of the model."""
    m = BY_NAME[name]
    dtype = np.dtype(model_dtype if m.dtype == MODEL else m.dtype)
    return dtype, tuple(s if isinstance(s, int) else sizes[s] for s in m.shape)


def allocate(group, sizes, model_dtype):
    """The members of ``group`` at their initial values (zero but where ``init`` says)."""
    out = {}
    for m in MEMBERS:
        if m.group != group:
            continue
        dtype, shape = expected(m.name, sizes, model_dtype)
        a = np.zeros(shape, dtype=dtype)
        if isinstance(m.init, tuple):
            a[...] = np.asarray(m.init, dtype=dtype).reshape((-1,) + (1,) * (len(shape) - 1))
        elif m.init:
            a[...] = m.init
        out[m.name] = a
    return out


def ensure(st, group):
    """Allocate ``group`` into the state ``st`` unless it holds it; returns whether it did."""
    if GROUPS[group].needs is not None and GROUPS[group].needs not in groups_present(st):
        raise ValueError(f"the group {group!r} needs the group {GROUPS[group].needs!r}")
    if names(group)[0] in st:
        return False
    st.update(allocate(group, dims_of(st), st["Wt"].dtype))
    return True


def members(st):
    """The names of the table's members the state ``st`` (a dict) holds, in the table's order."""
    return [m.name for m in MEMBERS if m.name in st]


def groups_present(keys):
    """The groups of which ``keys`` (member names) hold the first member, in the table's order."""
    keys = set(keys)
    return [g for g in GROUPS if names(g)[0] in keys]


def check_groups(keys):
    """Check that the member names ``keys`` form whole groups, each with the group it needs and
    with the groups every state holds. Returns the groups, or the problem as a string: the first
    missing member (in the order of its group) or, for a group partly present, its first
    missing member in alphabetical order."""
    keys = set(keys)
    for g in GROUPS:
        group = names(g)
        absent = [k for k in group if k not in keys]
        if 0 < len(absent) < len(group):
            return f"{sorted(absent)[0]!r} is missing"
    present = [g for g in GROUPS if names(g)[0] in keys]
    for g in present:
        need = GROUPS[g].needs
        if need is not None and need not in present:
            return f"{names(need)[0]!r} is missing"
    return present


def _fill(name, shape, dtype):
    """Member ``name`` at its initial value, in this shape and dtype."""
    m = BY_NAME[name]
    a = np.zeros(shape, dtype=dtype)
    if isinstance(m.init, tuple):
        a[...] = np.asarray(m.init, dtype=dtype).reshape((-1,) + (1,) * (len(shape) - 1))
    elif m.init:
        a[...] = m.init
    return a


def insert(st, axis, at, count):
    """Make room in every member of the state ``st`` that has the axis ``axis`` ("M": neurons,
    "L": labels, which also grows "L+1"): ``count`` new entries before index ``at``, at the
    member's initial value (the caller then sets what it knows). The copies of the neurons and
    the sorted cache of the rule (margin_order) are dropped: they are made again when needed."""
    symbols = {"M": ("M",), "L": ("L", "L+1")}[axis]
    for m in MEMBERS:
        if m.name not in st or not any(s in symbols for s in m.shape):
            continue
        old = st[m.name]
        grows = [s in symbols for s in m.shape]
        shape = tuple(n + count * g for n, g in zip(old.shape, grows, strict=True))
        new = _fill(m.name, shape, old.dtype)
        # the old entries, past the new ones on the axes that grow
        where = np.ix_(
            *(
                np.r_[0:at, at + count : n + count] if g else np.arange(n)
                for n, g in zip(old.shape, grows, strict=True)
            )
        )
        new[where] = old
        st[m.name] = new
    for key in ("screen", "rows", "margin_order"):
        st.pop(key, None)


def delete(st, axis, lo, hi):
    """Remove the entries ``lo:hi`` of the axis ``axis`` ("M" only: neurons) from every member
    of the state ``st`` that has it; the copies of the neurons are dropped as by :func:`insert`."""
    if axis != "M":
        raise ValueError(f"only neurons can be removed, not {axis!r}")
    for m in MEMBERS:
        if m.name in st and "M" in m.shape:
            keep = np.r_[0:lo, hi : st[m.name].shape[m.shape.index("M")]]
            st[m.name] = np.ascontiguousarray(np.take(st[m.name], keep, axis=m.shape.index("M")))
    for key in ("screen", "rows", "margin_order"):
        st.pop(key, None)


def reset_label(st, c, keep=("T", "label_origin")):
    """Put label ``c``'s entries of every member with a label axis ("L") back to their initial
    value, but the members ``keep``."""
    for m in MEMBERS:
        if m.name in st and m.name not in keep and "L" in m.shape:
            arr = st[m.name]
            axis = m.shape.index("L")
            one = list(arr.shape)
            one[axis] = 1
            np.moveaxis(arr, axis, 0)[c] = np.moveaxis(
                _fill(m.name, tuple(one), arr.dtype), axis, 0
            )[0]
