"""Label persistence: the labels of the instance just before, tested on the stream
(``label_persistence="tested"``; docs/method.md, "Labels that persist").

On many streams consecutive instances share their labels: a scene filmed for a while, an
activity that lasts, a regime of a sensor. When an instance's labels arrive right after its
prediction (before the next instance is classified: a *prompt* label), the next instance can be
given the same labels: the no-change classifier of Zliobaite, Bifet, Read, Pfahringer and Holmes
("Evaluation methods and decision theory for classification of streaming data with temporal
dependence", Machine Learning 98, 2015). Whether that beats the model is decided on the stream,
as the paired test of the corrections decides (McNemar's discordant pairs, a one-sided sign
test over the last PAIR_WINDOW pairs): at each prompt label whose instance had such a proposal,
the proposal and the model's own prediction are scored by their F1 over the instance's known
labels (2 hits / (true + predicted): the example-based F measure of Godbole and Sarawagi, PAKDD
2004); where they differ, the pair counts for one of them. The proposal is
given instead of the model's prediction while it wins by at least PAIR_Z sqrt(n) with PAIR_MIN
pairs at least. Labels that come late are never prompt, and change nothing here.

The maps never see the proposal: self-training learns from the model's own prediction, as
without it. So the model's state (neurons, counts, decision rule) is the same whatever this
does, and only the predictions returned differ.

What is kept (the state's group "persistence" in ``_schema.MEMBERS``, from the first labelled
call on): the last instance classified since then (``persist_row``), the model's prediction for
it, the proposal it had and the last prompt labels (``persist_labels``: rows 0, 1, 2), whether
its labels may still come promptly, whether it had a proposal and whether the prompt labels
belong to it (``persist_flags``), and the ring of pairs with their count ever (``persist_ring``,
``persist_total``). A label is prompt when its row equals the last instance classified exactly
and it is the first such since that instance was classified (other labelled rows may come
between).
"""

import numpy as np

from . import _core

__all__ = ["update", "pairs", "ring_pairs"]


def ring_pairs(ring, total):
    """(wins, pairs) over a ring of pairs with its count ever (the paired test of the corrections'
    and label persistence's: the ring fills from slot 0, then wraps)."""
    n = min(int(total[0]), len(ring))
    return int(ring[:n].sum()), n


def pairs(st):
    """(won by the proposal, pairs) over the ring."""
    return ring_pairs(st["persist_ring"], st["persist_total"])


def update(st, X, Y, arrivals, new, substitute):
    """After the core classified the rows X (their predictions Y, (n, L) uint8) with the labels
    ``arrivals`` = (X_l, Y_l, after) learnt meanwhile (or None): score the proposals that prompt
    labels answer, give the proposals that win the test instead of the model's predictions (in
    Y, when ``substitute``), and keep what the next call needs (the compiled
    ``persist_update``, one event at a time).

    ``new``: the record starts in this call, at its first labelled row: an instance classified
    before it is not in the record, whatever the chunks, so that row is never prompt."""
    if arrivals is None:
        L = Y.shape[1]
        Xl = np.zeros((0, X.shape[1]), dtype=X.dtype)
        arrivals = (Xl, np.zeros((0, L), dtype=np.int8), np.zeros(0, dtype=np.int64))
    Xl, Yl, after = arrivals
    first = int(after[0]) if new and len(after) else 0
    _core.persist_update(
        X,
        Y,
        Xl,
        Yl,
        after,
        st["persist_row"],
        st["persist_labels"],
        st["persist_flags"],
        st["persist_ring"],
        st["persist_total"],
        first,
        substitute,
    )
    return Y
