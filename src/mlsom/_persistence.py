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
between). The core keeps the record within each online call, one event at a time, after the
chunk's instances were classified (``_core_persist.pxi``, run by the core's ``stream``); this
module reads it.
"""

__all__ = ["pairs", "ring_pairs"]


def ring_pairs(ring, total):
    """(wins, pairs) over a ring of pairs with its count ever (the paired test of the corrections'
    and label persistence's: the ring fills from slot 0, then wraps)."""
    n = min(int(total[0]), len(ring))
    return int(ring[:n].sum()), n


def pairs(st):
    """(won by the proposal, pairs) over the ring."""
    return ring_pairs(st["persist_ring"], st["persist_total"])
