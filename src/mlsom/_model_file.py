"""Model files: the .npz format of SOMStreamClassifier.save and a reader that trusts nothing.

A model file is a zip archive of NumPy ``.npy`` members, written *stored* (uncompressed) by
``numpy.savez``: ``meta``, a JSON header in a 0-d unicode array, and the arrays of the live state
(the members of the state's table, ``_schema.MEMBERS``, by whole groups; the header's
``"groups"`` names them). ``write_model`` writes a model's file, ``read_model`` reads one back
into a model. The reader treats every file as hostile:

* only a regular file is opened (a FIFO, device or directory is refused without blocking);
* every member must be stored, so that nothing inflates beyond the file's own size;
* the ``.npy`` headers of all members (dtype, shape) are read and checked against each other, and
  each member's size in the archive against what its header implies, *before* any data is read;
* the JSON header is bounded in length (by the number of features) and, in one pass over it
  that tells its strings (and their escapes) from its structure, in nesting depth; a string it
  does not close is refused there too. It may hold no duplicate keys and no NaN or infinity;
* the groups the header names (format 2) must be those of the members present;
* the arrays' values are then checked completely (``check_state``): the compiled kernels trust
  them.

Loading a hostile file therefore costs at most about twice its size in memory and time linear in
its size, and ends in a ``ValueError`` that names the file and what is wrong.
"""

import collections
import json
import math
import os
import re
import stat
import sys
import zipfile

import numpy as np

from . import _names, _schema
from ._core import GUARD_CAP, PAIR_TRIES
from ._memory import check_memory
from ._method import NOVELTY_BUFFER, NOVELTY_CHECK
from ._validation import value_limit

#: the format save writes: format 2 lists the state's groups in the header ("groups"); the
#: reader also reads format 1, whose groups are told by the members present
FORMAT = 2
FORMATS = (1, 2)

# Counts (N, S, T, n_b) stay below 2^53, so that they convert to float64 exactly (P, z, the
# online update); the online phase refuses a chunk that would take them past it.
MAX_COUNT = 2**53
# The JSON header: a fixed allowance plus this much per feature (the feature names), and at most
# this nesting depth (a header is 3 deep).
META_BASE_CHARS = 1 << 16
META_CHARS_PER_FEATURE = 1 << 10
META_MAX_DEPTH = 8
# Members of an archive the reader accepts (those of the state's table, others ignored, up to
# this many).
MAX_MEMBERS = 64
_MAX_ENTRY_BYTES = 46 + 3 * 1024  # a directory entry with a name, extra field and comment of 1 KiB
_NPY_HEADER_MAX = 4096


class _Bad(ValueError):
    """A file that is not what it claims; the message is completed with the file's name."""


# ---------------------------------------------------------------------------------------- writing


def write(path, meta, arrays):
    """Write ``meta`` (a JSON-able dict) and ``arrays`` to ``path`` (``.npz`` appended as numpy
    does), through a temporary file in the same folder and an atomic rename: an interrupted or
    failed save never leaves a partial model file, and never replaces a good one."""
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if "\0" in path:
        raise ValueError(f"cannot save to {path!r}: a path cannot hold a NUL character")
    _check_file_name(path, "cannot save to", writing=True)
    given = path
    if not path.endswith(".npz"):
        path += ".npz"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot save to {path!r}: no folder {folder!r}")
    for name in dict.fromkeys((given, path)):  # a device or folder named, or named with .npz
        if os.path.lexists(name) and not os.path.isfile(name):
            kind = "a folder" if os.path.isdir(name) else "a device, FIFO or socket"
            raise ValueError(
                f"cannot save to {name!r}: it exists and is not a regular file ({kind})"
            )
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_model(path, params, st, version):
    """Write the state ``st`` of a model with the parameters ``params`` (JSON values) to
    ``path`` (as ``write``): the header, and every member of the table the state holds."""
    groups = _schema.groups_present(st)
    meta = {
        "format": FORMAT,
        "mlsom_version": version,
        "params": params,
        # the parameters the state was fitted with, where the live ones may differ
        "fitted": {
            "grid_size": st["grid_size"],
            "averout_distance": "sqeuclidean" if st["squared"] else "euclidean",
            "labels_dtype": st["labels_dtype"].name,
        },
        "n_iter": st["n_iter"],
        "k_nn": int(st["k_nn"]),
        "feature_names": st.get("feature_names"),
        "groups": groups,
    }
    if "variant" in st:
        meta["fitted"]["variant"] = st["variant"]
    if "ctl" in st:  # [theta, gain, z0, cbar, alpha, band]: exact through JSON
        meta["fitted"]["acceptance"] = [float(v) for v in st["ctl"]]
    if st.get("grid_scores") is not None:
        meta["fitted"]["grid_scores"] = [[d, v] for d, v in st["grid_scores"].items()]
    arrays = {k: np.array(st[k]) for g in groups for k in _schema.names(g)}
    return write(path, meta, arrays)


def read_model(path, cls, fitted_record):
    """Read the model file at ``path`` into a model of class ``cls``, checked completely.

    ``fitted_record(fitted, model)`` checks the header's record of the fitted parameters
    (``meta["fitted"]``) for the model made from the saved parameters, and returns the state's
    fields it gives (grid_size, squared, labels_dtype, grid_scores, and variant and ctl for a
    variant other than the paper's). Raises FileNotFoundError for a missing path, ValueError
    naming the file for anything wrong."""
    meta, arrays = read(path)
    name = os.fsdecode(path)
    if not isinstance(meta, dict):
        raise ValueError(f"{name!r} is not an mlsom model file: its header is not an object")
    fmt = meta.get("format")
    if type(fmt) is not int or fmt not in FORMATS:  # (a JSON integer: not 2.0, not true)
        raise ValueError(
            f"{name!r}: unsupported model file format {fmt!r} (this mlsom reads formats "
            f"{', '.join(map(str, FORMATS))})"
        )
    present = _schema.groups_present(arrays)
    if fmt >= 2 and meta.get("groups") != present:
        raise ValueError(
            f"{name!r}: inconsistent model file: the header names the groups "
            f"{meta.get('groups')!r}, the members are those of {present}"
        )
    if fmt < 2 and "groups" in meta:
        raise ValueError(f"{name!r}: inconsistent model file: groups named in a format 1 header")
    params = meta.get("params")
    known = set(cls._get_param_names())
    if not isinstance(params, dict) or not set(params) <= known:
        unknown = sorted(set(params) - known) if isinstance(params, dict) else params
        raise ValueError(f"{name!r}: inconsistent model file: parameters {unknown!r}")
    # string values interned, as the constructor's defaults are: a loaded model then pickles to
    # the same bytes as the model saved (pickle writes one object once, two equal ones twice)
    model = cls(**{k: sys.intern(v) if type(v) is str else v for k, v in params.items()})
    try:
        model._validate_params()
        # files written before the "fitted" record was kept were fitted with their params
        fitted = meta.get(
            "fitted", {"grid_size": model.grid_size, "averout_distance": model.averout_distance}
        )
        fields = fitted_record(fitted, model)
        state = check_state(arrays, meta, fields["grid_size"])
        robust_only = {"drift": "drift gate arrays", "acceptance": "label_acceptance"}
        for group, what in robust_only.items():
            if "variant" not in fields and group in present:
                raise ValueError(f"{what} given for the paper's variant")
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        if not msg.startswith("inconsistent model file"):
            msg = f"inconsistent model file: {msg}"
        raise ValueError(f"{name!r}: {msg}") from None
    state.update(fields)
    model._state = state
    return model


# ---------------------------------------------------------------------------------------- reading


def read(path):
    """Read and check the archive at ``path``; return ``(meta, arrays)``.

    ``meta`` is the parsed JSON header; ``arrays`` the state's arrays, each checked for dtype and
    shape against the others (values are checked by ``check_state``). Raises FileNotFoundError for
    a missing path, ValueError for anything else wrong.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path should be str, bytes or os.PathLike, not {type(path).__name__}")
    name = os.fsdecode(path)
    _check_file_name(name, "cannot load")
    f = _open_regular(path, name)
    try:
        with f:
            # the arrays are stored uncompressed: reading them holds about twice the file
            check_memory(name, 2 * os.fstat(f.fileno()).st_size, "loading the model file")
            _check_directory_size(f)
            try:
                zf = zipfile.ZipFile(f)
            except zipfile.BadZipFile as exc:
                raise _Bad(
                    f"cannot be read as an mlsom model file: not a .npz archive ({exc})"
                ) from None
            with zf:
                return _read_archive(zf, os.fstat(f.fileno()).st_size)
    except _Bad as exc:
        sep = " " if str(exc).startswith(("cannot", "is not")) else ": "
        raise ValueError(f"{name!r}{sep}{exc}") from None
    except (
        OSError,
        ValueError,
        EOFError,
        NotImplementedError,  # a compression method or zip version zipfile does not know
        RuntimeError,  # an encrypted member
        OverflowError,
        zipfile.BadZipFile,
        UnicodeDecodeError,
    ) as exc:
        raise ValueError(f"{name!r} cannot be read as an mlsom model file: {exc}") from None


def _check_file_name(path, what, writing=False):
    """Refuse a path (str) that cannot name a model file: empty, or ending in a folder separator;
    when ``writing``, also one whose file name is nothing but the ".npz" suffix (a hidden file of
    no name)."""
    seps = tuple(s for s in (os.sep, os.altsep) if s)
    if not path:
        raise ValueError(f"{what} {path!r}: an empty path is not a file name")
    if path.endswith(seps):
        raise ValueError(f"{what} {path!r}: the path ends in a folder separator, not a file name")
    if writing and os.path.basename(path) == ".npz":
        raise ValueError(f"{what} {path!r}: the file name is only the .npz suffix")


def _open_regular(path, name):
    """Open ``path`` for reading if it is a regular file; never block on a FIFO or a device."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"no model file {name!r}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise ValueError(f"{name!r} cannot be read as an mlsom model file: {exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise ValueError(
                f"{name!r} cannot be read as an mlsom model file: it is {kind} (a FIFO, device "
                f"or socket is never opened)"
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_directory_size(f):
    """Refuse an archive whose central directory is larger than MAX_MEMBERS entries could need,
    before zipfile parses it (it would build an object per entry, whatever their number). The
    end record is found as zipfile finds it: at the very end of the file, else the last one in
    the final 64 KiB; a zip64 end record before it gives the directory's size instead."""
    size = f.seek(0, os.SEEK_END)
    tail_len = min(size, 22 + 65535)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = len(tail) - 22
    if at < 0 or tail[at : at + 4] != b"PK\x05\x06" or tail[-2:] != b"\x00\x00":
        at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        return  # no end record: zipfile says it is no zip archive
    size_cd = int.from_bytes(tail[at + 12 : at + 16], "little")
    n_entries = int.from_bytes(tail[at + 10 : at + 12], "little")
    locator = size - tail_len + at - 20
    if locator >= 56:
        f.seek(locator)
        if f.read(4) == b"PK\x06\x07":
            f.seek(locator - 56)
            record = f.read(56)
            if record[:4] == b"PK\x06\x06":
                n_entries = int.from_bytes(record[32:40], "little")
                size_cd = int.from_bytes(record[40:48], "little")
    if n_entries > MAX_MEMBERS or size_cd > MAX_MEMBERS * _MAX_ENTRY_BYTES:
        raise _Bad(
            f"is not an mlsom model file: a directory of {n_entries} members in {size_cd} bytes "
            f"(at most {MAX_MEMBERS} members)"
        )
    f.seek(0)


def _read_archive(zf, file_size):
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise _Bad(f"is not an mlsom model file: {len(infos)} members (at most {MAX_MEMBERS})")
    wanted = {"meta", *_schema.BY_NAME}
    members = {}
    for info in infos:
        key = info.filename[:-4] if info.filename.endswith(".npy") else None
        if key not in wanted:
            continue  # other members are never read
        if key in members:
            raise _Bad(f"inconsistent model file: member {key!r} appears twice")
        members[key] = info
    required = {"meta", *(k for g in _schema.REQUIRED for k in _schema.names(g))}
    if required - set(members):
        raise _Bad(f"is not an mlsom model file: missing {sorted(required - set(members))}")
    groups = _schema.check_groups(set(members) - {"meta"})
    if isinstance(groups, str):
        raise _Bad(f"inconsistent model file: {groups}")
    total = 0
    for key, info in members.items():
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise _Bad(
                f"inconsistent model file: member {key!r} is compressed (model files hold "
                f"stored members, as save writes them)"
            )
        total += info.file_size
    if total > file_size:
        raise _Bad(f"inconsistent model file: members of {total} bytes in a file of {file_size}")

    # 1. every member's .npy header, checked against its size in the archive
    headers = {key: _npy_header(zf, key, info) for key, info in members.items()}
    # 2. the shapes against each other, before any data is read
    shapes = _check_shapes(headers)
    # 3. the JSON header, bounded by the number of features
    meta = _read_meta(zf, members["meta"], headers["meta"], shapes["A"])
    # 4. the arrays
    arrays = {key: _npy_data(zf, members[key], headers[key]) for key in members if key != "meta"}
    return meta, arrays


def _npy_header(zf, key, info):
    """(dtype, shape, fortran_order, header length) of a member, its size checked."""
    with zf.open(info) as fp:
        try:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                    fp, max_header_size=_NPY_HEADER_MAX
                )
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                    fp, max_header_size=_NPY_HEADER_MAX
                )
            else:
                raise ValueError(f".npy format version {version}")
        except ValueError as exc:
            raise _Bad(f"cannot be read as an mlsom model file: member {key!r}: {exc}") from None
        header_len = fp.tell()
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise _Bad(
            f"inconsistent model file: member {key!r} holds Python objects or records (dtype "
            f"{dtype}); model files hold numeric arrays only"
        )
    nbytes = math.prod(shape) * dtype.itemsize
    if header_len + nbytes != info.file_size:
        raise _Bad(
            f"inconsistent model file: member {key!r} declares shape {shape} ({nbytes} bytes of "
            f"{dtype}) but holds {info.file_size - header_len}"
        )
    return dtype, shape, fortran, header_len


def _check_shapes(headers):
    """Dtypes and shapes of the state's members (the table's), against each other and the
    method's windows; returns the sizes (_schema.dims)."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    meta_dtype, meta_shape = headers["meta"][0], headers["meta"][1]
    if meta_dtype.kind != "U" or meta_shape != ():
        bad(f"the header is a {meta_dtype} array of shape {meta_shape}, not a string")
    # the neurons and the label counts give the sizes: A, M from Wt, L from T
    for key, kinds in (("Wt", ("f8", "f4")), ("T", ("i8",))):
        dtype, shape = headers[key][0], headers[key][1]
        if dtype.str[1:] not in kinds or len(shape) != 2:
            bad(
                f"{key} has dtype {dtype} and {len(shape)} dimensions, expected "
                f"{' or '.join(str(np.dtype(k)) for k in kinds)} with 2"
            )
    A, M = headers["Wt"][1]
    L = headers["T"][1][0]
    if A < 1 or M < 1 or L < 1 or headers["T"][1] != (L, L):
        bad(f"shapes Wt {(A, M)}, T {headers['T'][1]}")
    sizes = _schema.dims(A, M, L)
    model_dtype = headers["Wt"][0].newbyteorder("=")
    for key in _schema.members(headers):
        dtype, got = headers[key][0], headers[key][1]
        want_dtype, want = _schema.expected(key, sizes, model_dtype)
        if dtype.str[1:] != want_dtype.str[1:] or got != want:  # (either byte order)
            of = " (Wt's)" if _schema.BY_NAME[key].dtype == _schema.MODEL else ""
            bad(f"{key} has dtype {dtype} and shape {got}, expected {want_dtype}{of}, {want}")
    return sizes


def _moved_limit(limit, dtype):
    """The bound of a neuron's values: a neuron is a mean of instances (fit) or moves by
    w + r (x - w) with r in [0, 1] towards one (online), each within ``limit``, and the rounding
    of those sums can take it one or two units in the last place past the largest instance
    (never further: a move towards a smaller value cannot round past w). A model at the limit
    must load again."""
    return limit * (1.0 + 4.0 * float(np.finfo(dtype).eps))


def _check_bounded(values, name, limit):
    if not np.all(np.isfinite(values)) or np.abs(values).max(initial=0) > limit:
        raise _Bad(f"inconsistent model file: {name}: non-finite values or values beyond {limit:g}")


def _check_ring(ring, total, name):
    """A ring of pairs and their count ever (the ring fills from slot 0, then wraps)."""
    if total < 0 or total > MAX_COUNT or np.any(ring[total:] != 0):
        raise _Bad(
            f"inconsistent model file: {name} {total}: negative, beyond 2**53, or fewer than the "
            "ring's pairs"
        )


def _check_persistence(a, limit):
    """Label persistence (group "persistence"): values the online phase can use."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    row, lab, flags = a["persist_row"], a["persist_labels"], a["persist_flags"]
    ring, total = a["persist_ring"], int(a["persist_total"][0])
    _check_bounded(row, "persist_row", limit)  # an instance of the stream, bounded as weights are
    if np.any((lab[:2] != 0) & (lab[:2] != 1)) or np.any((lab[2] < -1) | (lab[2] > 1)):
        bad("persist_labels: predictions other than 0/1, or labels other than 1/0/-1")
    if np.any(flags > 1) or np.any(ring > 1):
        bad("persist_flags, persist_ring: values other than 0/1")
    if not flags[1] and np.any(lab[1] != 0):
        bad("persist_labels: a proposal for an instance that had none")
    _check_ring(ring, total, "persist_total")


def _check_pairs(a, limit):
    """The paired test of the corrections (group "pairs"): values the online phase can use."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    place, uses, strong = a["alt_place"], a["alt_uses"], a["alt_strong"]
    ring, total = a["pair_ring"], int(a["pair_total"][0])
    # (a place is a neuron moved towards an instance, a labelled positive, or a neuron: within
    # the weights' bound)
    _check_bounded(place, "alt_place", _moved_limit(limit, place.dtype))
    if np.any(uses < -1) or np.any(uses >= PAIR_TRIES):
        bad(f"alt_uses: values outside -1..{PAIR_TRIES - 1}")
    if np.any(strong > 1) or np.any(ring > 1):
        bad("alt_strong, pair_ring: values other than 0/1")
    _check_ring(ring, total, "pair_total")


def _check_rule(a, sizes, L):
    """What labels taught the decision rule (group "rule"): values the online phase can use."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    theta, mg, mk = a["label_offsets"], a["margin_memory"], a["margin_kinds"]
    cnt, z = a["margin_counts"], a["labelled_cardinality"]
    W = mg.shape[1]
    if not np.all(np.isfinite(theta)) or np.any((theta != 0) & (sizes == 0)):
        bad("label_offsets: non-finite values, or an offset for a label without a map")
    if np.any(cnt < 0) or np.any(cnt > MAX_COUNT) or np.any((cnt > 0) & (sizes == 0)):
        bad("margin_counts: negative, beyond 2**53, or counting a label without a map")
    if np.any(mk > 5) or not np.all(np.isfinite(mg)):
        bad("margin_memory, margin_kinds: non-finite margins or kinds other than 0..5")
    used = np.arange(W)[None, :] < np.minimum(cnt, W)[:, None]
    if np.any(~used & ((mk != 0) | (mg != 0))) or np.any((mk >> 1 != 1) & (mg != 0)):
        bad("margin_memory: a margin in a slot not used, or for an entry that was not tested")
    zf, zv = float(z[1]), float(z[0])
    if zf not in (0.0, 1.0) or not (0.0 <= zv <= L) or (zf == 0.0 and zv != 0.0):
        bad(f"labelled_cardinality {[zv, zf]}: expected [0, 0], or [z, 1] with 0 <= z <= {L}")


def _check_guards(a, sizes, limit):
    """Each label's guards and supports (group "guards"): values the online phase can use."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    offsets = np.concatenate(([0], np.cumsum(sizes)))
    for key, count in (("guards", "guard_counts"), ("supports", "support_counts")):
        rows, n = a[key], a[count]
        # (labelled instances, and moves towards them: within the weights' bound)
        _check_bounded(rows, key, _moved_limit(limit, rows.dtype))
        if np.any(n < 0) or np.any(n > np.minimum(sizes, GUARD_CAP)):
            bad(f"{count}: negative, or more than min(the label's neurons, {GUARD_CAP})")
        used = np.zeros(rows.shape[0], dtype=bool)
        for c in np.flatnonzero(n):
            used[offsets[c] : offsets[c] + n[c]] = True
        if np.any(rows[~used] != 0):
            bad(f"{key}: values in a row no label uses")
    on, mv, mk = a["guards_on"], a["margin_vetoes"], a["margin_kinds"]
    if np.any(on > 1) or np.any((on == 1) & (a["guard_counts"] == 0)):
        bad("guards_on: values other than 0/1, or set for a label without guards")
    if np.any(mv > 1) or np.any((mv == 1) & (mk >> 1 != 1)):
        bad("margin_vetoes: values other than 0/1, or set for an entry that was not tested")


def _read_meta(zf, info, header, n_features):
    dtype = header[0]
    n_chars = dtype.itemsize // 4
    limit = META_BASE_CHARS + META_CHARS_PER_FEATURE * n_features
    if n_chars > limit:
        raise _Bad(
            f"inconsistent model file: a header of {n_chars} characters (at most {limit} for "
            f"{n_features} features)"
        )
    text = str(_npy_data(zf, info, header)[()])
    _check_depth(text)

    def no_constant(value):
        raise ValueError(f"{value} is not a valid header value")

    def no_duplicates(pairs):
        out = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"key {key!r} appears twice")
            out[key] = value
        return out

    return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)


# A JSON string from its opening quote: characters other than quotes and backslashes, or a
# backslash and the character it escapes, up to the closing quote (group 1). A string the text
# does not close runs to the end of the text (a lone backslash may end it). So a match from a
# quote never fails, and a scan of the text reads each character once: a pattern that failed on
# an unclosed string would be tried again from each escaped quote in it, a quadratic time.
_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:(")|\\?\Z)', re.DOTALL)

# what each ASCII character outside strings does to the nesting depth
_DEPTH_STEP = np.zeros(256, dtype=np.int8)
_DEPTH_STEP[[ord("["), ord("{")]] = 1
_DEPTH_STEP[[ord("]"), ord("}")]] = -1


def _check_depth(text):
    """Refuse a JSON header that ends inside a string, or is nested deeper than META_MAX_DEPTH
    (json.loads would recurse on it), in passes over the text that each read a character once."""
    # only the last string can be unclosed (it runs to the end of the text)
    last = collections.deque(_JSON_STRING.finditer(text), maxlen=1)
    if last and last[0].group(1) is None:
        raise _Bad(
            f"inconsistent model file: a header of {len(text)} characters ends inside a string "
            f"(an unterminated string from character {last[0].start()})"
        )
    # the brackets outside strings
    skeleton = _JSON_STRING.sub("", text)
    b = np.frombuffer(skeleton.encode("ascii", "replace"), dtype=np.uint8)
    depth = int(np.cumsum(_DEPTH_STEP[b], dtype=np.int64).max()) if b.size else 0
    if depth > META_MAX_DEPTH:
        raise _Bad(f"inconsistent model file: a header nested {depth} deep")


def _npy_data(zf, info, header):
    dtype, shape, fortran, header_len = header
    with zf.open(info) as fp:
        fp.read(header_len)
        raw = fp.read(info.file_size - header_len)
        if fp.read(1):  # also has zipfile check the member's CRC
            raise _Bad("inconsistent model file: a member longer than its header says")
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(arr, dtype=dtype.newbyteorder("="), order="C")  # a writeable native copy


# ---------------------------------------------------------------------------------------- values


def _check_drift(a, sizes, limit):
    """The robust variant's drift gate (group "drift"): values the online phase can use."""
    mean, center = a["drift_mean"], a["drift_center"]
    lim, opened = a["drift_limit"], a["drift_open"]
    # (means of instances, each within the instances' bound)
    _check_bounded(mean, "drift_mean", _moved_limit(limit, np.float64))
    _check_bounded(center, "drift_center", _moved_limit(limit, np.float64))
    if not np.all(np.isfinite(lim)) or np.any(lim < 0):
        raise _Bad("inconsistent model file: drift_limit: non-finite or negative values")
    if np.any(opened > 1) or np.any((opened == 1) & (sizes == 0)):
        raise _Bad(
            "inconsistent model file: drift_open: values other than 0/1, or set for a label "
            "without a map"
        )


def _check_label_acceptance(a, sizes):
    """The robust variant's per-label acceptance (group "acceptance"): finite offsets, rates in
    [0, 1], and all three 0 for a label without a map."""
    phi, rate, target = a["label_acceptance"]
    if not np.all(np.isfinite(phi)):
        raise _Bad("inconsistent model file: label_acceptance: non-finite offsets")
    for name, v in (("rates", rate), ("target rates", target)):
        if not np.all((v >= 0) & (v <= 1)):
            raise _Bad(f"inconsistent model file: label_acceptance: {name} outside [0, 1]")
    if np.any(a["label_acceptance"][:, sizes == 0] != 0):
        raise _Bad("inconsistent model file: label_acceptance: values for a label without a map")


def _check_meta(meta, sizes, n_features, n_labels, retired, new):
    """Check the header's k_nn, n_iter and feature_names against the state's maps (``sizes``,
    neurons per label; ``retired``, ``new``: the retired labels and the new ones of novelty
    detection, whose maps k_nn does not bound); return them. Raises _Bad."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    k = meta.get("k_nn")
    fitted = sizes[(sizes > 0) & ~new]
    if (
        not isinstance(k, int)
        or isinstance(k, bool)
        or k < 1
        or k > (fitted.min() if fitted.size else sizes.max())
    ):
        bad(f"k_nn {k!r}")
    n_iter = meta.get("n_iter")
    if (
        not isinstance(n_iter, list)
        or len(n_iter) != n_labels
        or any(
            (v is None) != (s == 0 and not r) or not (v is None or _is_int(v) and 0 <= v <= 10**7)
            for v, s, r in zip(n_iter, sizes.tolist(), retired.tolist(), strict=True)
        )
    ):
        bad("n_iter")
    names = meta.get("feature_names")
    if names is not None and (
        not isinstance(names, list)
        or len(names) != n_features
        or not all(isinstance(n, str) for n in names)
    ):
        bad("feature_names")
    if names is not None and (problem := _names.bad_names(names)) is not None:
        bad(f"feature_names {_names.show(names)}: {problem}")
    return k, n_iter, names


def check_state(a, meta, grid_size):
    """Check a loaded state's values completely (the compiled kernels trust it); return it with
    the fields the estimator keeps beside the arrays. Raises _Bad."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    Wt, ncls, offsets, T, NS = a["Wt"], a["ncls"], a["offsets"], a["T"], a["NS"]
    A, M = Wt.shape
    L = T.shape[0]
    if offsets[0] != 0 or offsets[-1] != M or np.any(np.diff(offsets) < 0):
        bad(f"offsets {offsets.tolist()[:10]} do not partition {M} neurons into {L} labels")
    sizes = np.diff(offsets)
    if sizes.max() > grid_size * grid_size:
        bad(f"a map of {sizes.max()} neurons on a {grid_size} x {grid_size} grid")
    if not np.array_equal(ncls, np.repeat(np.arange(L, dtype=np.int32), sizes)):
        bad("neuron labels do not match the offsets")
    counts, log_averout, pos = a["counts"], a["log_averout"], a["positions"]
    if np.any(counts < 1) or not np.all(np.isfinite(Wt)) or np.any(np.isnan(log_averout)):
        bad("counts below 1 or non-finite weights")
    if np.any(log_averout > 0):
        bad("averOut above 1")
    if np.any(pos < 0) or np.any(pos >= grid_size):
        bad(f"grid positions outside a {grid_size} x {grid_size} grid")
    cell = ncls.astype(np.int64) * grid_size * grid_size + pos[:, 0] * grid_size + pos[:, 1]
    if np.unique(cell).size != M:
        bad("two neurons of a map at the same grid position")
    if np.any(T < 0) or not np.array_equal(T, T.T) or np.any(T > np.diag(T)[None, :]):
        bad("label counts T are not a valid co-occurrence matrix")
    retired = _retired(a, L)
    if np.any((sizes > 0) != (np.diag(T) > 0) & ~retired):
        bad("labels with a map and labels with positive counts differ (but retired new labels)")
    N, S = (int(v) for v in NS)
    # S is the sum of the label-set sizes seen, which is the trace of T; N >= every label's count
    if N < 1 or N > MAX_COUNT or S != int(np.trace(T, dtype=object)) or S > MAX_COUNT:
        bad(f"N, S = {[N, S]} do not agree with the label counts T (or exceed 2**53)")
    if N < int(np.diag(T).max()):
        bad(f"N = {N} is below a label's count")
    # A neuron wins at most once per instance of the stream (N), and once per labelled
    # instance whose label it carries is known (margin_counts; partial_fit leaves N as it is).
    # A file from before margin_counts existed, with labels learnt, has only the outer bound.
    if "margin_counts" in a:
        top = N + a["margin_counts"].astype(np.int64)[ncls]
        if np.any(counts > top):
            b = int(np.argmax(counts - top))
            bad(
                f"neuron {b}'s count {int(counts[b])} is above N = {N} plus its label's labelled "
                f"instances ({int(top[b]) - N})"
            )
    elif "last_positive" not in a and N < int(counts.max()):
        bad(f"N = {N} is below a neuron's count")
    if int(counts.max()) > MAX_COUNT:
        bad("a neuron's count beyond 2**53")
    limit = value_limit(Wt.dtype)
    if np.abs(Wt).max() > _moved_limit(limit, Wt.dtype):
        bad(f"weights beyond {limit:g}")
    if "last_positive" in a:
        pos, has = a["last_positive"], a["has_positive"]
        if np.any(has > 1) or np.any((has == 1) & (sizes == 0)):
            bad("has_positive: values other than 0/1, or set for a label without a map")
        if not np.all(np.isfinite(pos)) or np.abs(pos).max(initial=0) > limit:
            bad(f"last_positive: non-finite values or values beyond {limit:g}")
        if np.any(pos[has == 0] != 0):
            bad("last_positive: a row given for a label without a labelled positive")
    if "label_offsets" in a:
        _check_rule(a, sizes, L)
    if "alt_place" in a:
        _check_pairs(a, limit)
    if "guards" in a:
        _check_guards(a, sizes, limit)
    if "persist_row" in a:
        _check_persistence(a, limit)
    if "drift_open" in a:
        _check_drift(a, sizes, limit)
    if "label_acceptance" in a:
        _check_label_acceptance(a, sizes)
    if "radius" in a:
        _check_novelty(a, sizes, limit)
    k, n_iter, names = _check_meta(meta, sizes, A, L, retired, _new_labels(a, L))
    return {
        **a,
        "k_nn": k,
        "n_iter": n_iter,
        "n_features": int(A),
        "n_labels": int(L),
        "feature_names": names,
    }


def _retired(a, L):
    """The retired new labels (novelty detection; none without it)."""
    if "label_origin" not in a:
        return np.zeros(L, dtype=bool)
    return a["label_origin"][4] == 1


def _new_labels(a, L):
    """The labels made after fit, by novelty detection or by labels (none without it)."""
    if "label_origin" not in a:
        return np.zeros(L, dtype=bool)
    return a["label_origin"][0] >= 0


def _check_novelty(a, sizes, limit):
    """Novelty detection (group "novelty"): values the online phase can use."""

    def bad(what):
        raise _Bad(f"inconsistent model file: {what}")

    radius, frozen, buf, at = a["radius"], a["frozen"], a["novelty_buffer"], a["novelty_at"]
    have, seen, since = (int(v) for v in a["novelty_counts"])
    created, made_from, last, number, retired, named = a["label_origin"]
    if not np.all(np.isfinite(radius)) or np.any(radius < 0) or np.any(radius > 4 * limit):
        bad("radius: negative, non-finite or beyond the instances' range")
    _check_bounded(frozen, "frozen", _moved_limit(limit, frozen.dtype))
    if not 0 <= have <= NOVELTY_BUFFER or not 0 <= seen <= MAX_COUNT:
        bad(f"novelty_counts {[have, seen]}: rows in the memory or instances out of range")
    if not 0 <= since < NOVELTY_CHECK:
        bad(f"novelty_counts {since}: unexplained instances since the last search out of range")
    _check_bounded(buf[:have], "novelty_buffer", limit)
    if np.any(buf[have:] != 0) or np.any(at[have:] != -1):
        bad("novelty_buffer, novelty_at: values past the rows in the memory")
    if np.any(at[:have] < 0) or np.any(at[:have] >= seen) or np.any(np.diff(at[:have]) <= 0):
        bad("novelty_at: instances not increasing, or not before the instances seen")
    new = number > 0
    # (numbers go 1, 2, ... in the order the labels were made, and stay with their columns)
    if np.any(number < 0) or not np.array_equal(np.sort(number[new]), np.arange(1, new.sum() + 1)):
        bad("label_origin: the new labels' numbers are not distinct numbers up to those made")
    if np.any(retired > 1) or np.any(retired[~new] != 0) or np.any((retired == 1) & (sizes > 0)):
        bad("label_origin: retired labels that are not new, or that keep a map")
    fit = created == -1
    if np.any(number[fit] != 0) or np.any(made_from[fit] != 0) or np.any(named[fit] != -1):
        bad("label_origin: a label of fit with a creation")
    if np.any(~new & ~fit & (named < 0)):
        bad("label_origin: a label made by labels that no label column names")
    if np.any(named < -1) or np.unique(named[named >= 0]).size != np.count_nonzero(named >= 0):
        bad("label_origin: label columns that name two labels")
    if np.any((created[~fit] < 0) | (created[~fit] > seen) | (made_from[~fit] < 1)):
        bad("label_origin: a new label made outside the stream, or from no row")
    if np.any(last < -1) or np.any(last > seen):
        bad("label_origin: a last use outside the stream")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)
