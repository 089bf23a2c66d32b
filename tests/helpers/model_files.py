"""Model files written by hand: a saved file rewritten with members changed or dropped, or as a
file of format 1; a model saved and read back."""

import json

import numpy as np

from mlsom import SOMStreamClassifier


def rewrite(src, dst, *, format_1=False, **changes):
    """Copy a model file, changing or dropping (None) members; with ``format_1``, as a file of
    format 1 (no list of groups in the header: groups told by the members present), the format
    of the files written before this format's groups were named."""
    with np.load(src) as z:
        members = {k: z[k] for k in z.files}
    if format_1:
        meta = json.loads(str(members["meta"][()]))
        meta["format"] = 1
        del meta["groups"]
        members["meta"] = np.array(json.dumps(meta))
    for k, v in changes.items():
        if v is None:
            members.pop(k)
        else:
            members[k] = v
    np.savez(dst, **members)


def saved_and_read_back(model, tmp_path, keys):
    """Save the model; load checks it and gives back the arrays named; the file's path."""
    src = tmp_path / "m.npz"
    model.save(src)
    again = SOMStreamClassifier.load(src)
    for k in keys:
        np.testing.assert_array_equal(again._state[k], model._state[k], err_msg=k)
    return src


def changer(st):
    """changed(key, edit): a copy of st[key], edited in place, as a member to write."""

    def changed(key, edit):
        a = np.array(st[key])
        edit(a)
        return {key: a}

    return changed
