"""Errors while reading a user's files name the file, and memory is checked before it is taken.

* One memory budget: the ARFF readers estimate the bytes of what a file expands to (rows, one-hot
  columns) from its header and check them against ``mlsom._memory``'s budget (physical memory,
  RLIMIT_AS, control group) before allocating; the MemoryError names the file.
* Errors name their source: split files that do not fit together, files with no usable row, an
  I/O error, through the readers, ``mlsom.datasets.load`` and the command line.
* Data files that are no regular file (a FIFO, a device, a directory, a symbolic link loop) are
  reported as what they are, never as missing, and never opened.
"""

import errno
import faulthandler
import os
import re
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

import mlsom
from mlsom import _memory
from mlsom._cli import main
from mlsom.datasets import ArffError, iter_arff, load, load_arff

MIB = 1 << 20
TRAIN, TEST = "4CRE-V2-train.arff", "4CRE-V2-test.arff"  # MOA-Spher-2C-2A: its own split


@pytest.fixture(autouse=True)
def watchdog(monkeypatch):
    """A test that blocks (a FIFO opened) dumps the stacks and ends instead of hanging."""
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def small_memory(monkeypatch, limit):
    monkeypatch.setattr(_memory, "memory_limit", lambda: (limit, "a test limit"))


def many_values_file(path, n_values, n_rows):
    """A small ARFF file (a few bytes a row) whose nominal attribute has ``n_values`` values:
    expanded one-hot, each row is ``8 * n_values`` bytes."""
    values = ",".join(f"v{k}" for k in range(n_values))
    with open(path, "w") as f:
        f.write(f"@relation 'r: -C 1'\n@attribute y {{0,1}}\n@attribute a {{{values}}}\n@data\n")
        f.writelines(f"{i % 2},v{i % n_values}\n" for i in range(n_rows))
    return path


def moa_file(path, n_features, rows):
    """A MOA-Spher-2C-2A part (MEKA, 4 labels first): ``rows`` are label tuples."""
    header = "@relation 'moa: -C 4'\n" + "".join(f"@attribute class{j} {{0,1}}\n" for j in range(4))
    header += "".join(f"@attribute att{k} numeric\n" for k in range(n_features)) + "@data\n"
    lines = [
        ",".join(map(str, labels))
        + ","
        + ",".join(f"{(i + k) % 7 / 7:.3f}" for k in range(n_features))
        for i, labels in enumerate(rows)
    ]
    path.write_text(header + "".join(line + "\n" for line in lines))
    return path


KEPT = [(0, 0, 1, 0), (0, 0, 0, 1)] * 100  # 200 rows, each with class2 or class3
NOT_KEPT = [(1, 0, 0, 0), (0, 1, 0, 0)] * 100  # 200 rows with neither


def moa_home(tmp_path, train=(2, KEPT), test=(2, KEPT)):
    home = tmp_path / "data"
    home.mkdir()
    moa_file(home / TRAIN, *train)
    moa_file(home / TEST, *test)
    return home


def yeast_home(tmp_path, widths=(3, 3)):
    """Yeast as its two Mulan parts (test, then train) and the XML."""
    home = tmp_path / "yeast-data"
    home.mkdir()
    (home / "yeast.xml").write_text(
        '<labels xmlns="http://mulan.sourceforge.net/labels">'
        '<label name="L1"/><label name="L2"/></labels>'
    )
    for name, width in zip(("yeast-test.arff", "yeast-train.arff"), widths, strict=True):
        head = "@relation y\n" + "".join(f"@attribute f{k} numeric\n" for k in range(width))
        head += "@attribute L1 {0,1}\n@attribute L2 {0,1}\n@data\n"
        rows = "".join(
            ",".join(str((i + k) % 5) for k in range(width)) + f",{i % 2},{(i + 1) % 2}\n"
            for i in range(100)
        )
        (home / name).write_text(head + rows)
    return home


def cli(argv, capsys):
    """(exit status, the one line on stderr) of ``mlsom argv``."""
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return status, err[0]


def run_argv(stream, home):
    return ["run", "--stream", stream, "--data-home", home, "--windows", "2", "--grid-size", "2"]


def experiment_argv(stream, home, out):
    return [
        *("experiment", "--streams", stream, "--data-home", home, "--out", out),
        *("--methods", "mlsom", "--grid-sizes", "2", "--seeds", "0", "--windows", "2"),
        *("--no-plots", "--no-progress"),
    ]


def in_a_thread(call):
    """What ``call()`` raises (None if nothing), failing the test if it blocks."""
    result = []

    def target():
        try:
            call()
        except BaseException as exc:  # inspected by the caller
            result.append(exc)
        else:
            result.append(None)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the call blocked"
    return result[0]


# ------------------------------------------------------------------------------- one memory budget


def test_onehot_rows_beyond_the_limit_are_refused_before_they_are_allocated(tmp_path, monkeypatch):
    """20,000 values one-hot make rows of 160 kB: 2,000 lines of a 150 kB file need 640 MB. The
    review's file (1,000,000 values, 8 MB) grew to any limit and ended in NumPy's bare
    MemoryError, which named no file."""
    path = many_values_file(tmp_path / "many.arff", 20_000, 2_000)
    small_memory(monkeypatch, 64 * MIB)
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError) as info:
            load_arff(path, nominal="onehot")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert message.startswith(f"{path}: the first ")
    assert "(20000 features) would need about" in message
    assert "this process can use at most 67.1 MB (a test limit)" in message
    assert message.endswith("read the file in chunks with iter_arff")
    assert peak < 20 * MIB  # the header and the names: no block of rows was parsed

    with pytest.raises(MemoryError, match=rf"^{re.escape(str(path))}: reading chunks of 1000 rows"):
        iter_arff(path, chunk_size=1000, nominal="onehot")


def test_onehot_rows_are_refused_when_the_next_block_would_pass_the_limit(tmp_path, monkeypatch):
    """A limit that holds a few blocks: the rows read are kept below it."""
    path = many_values_file(tmp_path / "many.arff", 20_000, 2_000)
    small_memory(monkeypatch, 256 * MIB)
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError, match=rf"^{re.escape(str(path))}: the first \d+ data"):
            load_arff(path, nominal="onehot")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 30 * MIB < peak < 256 * MIB  # some rows were read, never past the limit


def test_the_names_of_many_one_hot_columns_are_checked_before_they_are_made(tmp_path, monkeypatch):
    path = many_values_file(tmp_path / "names.arff", 100_000, 1)
    small_memory(monkeypatch, 16 * MIB)
    with pytest.raises(MemoryError) as info:
        load_arff(path, nominal="onehot")
    assert str(info.value).startswith(
        f"{path}: the names of 100000 one-hot columns (nominal attribute 'a' at line 3 has "
        "100000 values) would need about"
    )
    small_memory(monkeypatch, 1 << 40)
    assert load_arff(path, nominal="onehot").X.shape == (1, 100_000)


def test_a_file_that_fits_is_read_whole_under_the_same_limit(tmp_path, monkeypatch):
    path = many_values_file(tmp_path / "few.arff", 50, 2_000)
    small_memory(monkeypatch, 256 * MIB)
    d = load_arff(path, nominal="onehot")
    assert d.X.shape == (2000, 50) and d.X.sum() == 2000
    chunks = list(iter_arff(path, chunk_size=500, nominal="onehot"))
    assert [c[0].shape for c in chunks] == [(500, 50)] * 4


def test_the_xml_of_labels_is_checked_against_its_size(tmp_path, monkeypatch):
    arff = tmp_path / "a.arff"
    arff.write_text("@relation a\n@attribute f numeric\n@attribute L {0,1}\n@data\n1,0\n")
    xml = tmp_path / "a.xml"
    xml.write_text('<labels><label name="L"/>' + " " * (2 * MIB) + "</labels>")
    small_memory(monkeypatch, 16 * MIB)
    with pytest.raises(MemoryError, match=rf"^{re.escape(str(xml))}: the labels the XML file"):
        load_arff(arff, xml=xml)
    small_memory(monkeypatch, 1 << 40)
    assert load_arff(arff, xml=xml).label_names == ("L",)


def test_the_budget_is_the_limit_less_what_the_process_holds(monkeypatch):
    monkeypatch.setattr(_memory, "memory_limit", lambda: (10**9, _memory._RLIMIT_AS))
    monkeypatch.setattr(_memory, "_in_use", lambda source: 3 * 10**8)
    assert _memory.memory_budget() == (
        7 * 10**8,
        f"at most 1 GB ({_memory._RLIMIT_AS}), of which 300 MB are in use",
    )
    with pytest.raises(MemoryError, match=r"^f\.arff: X would need about 800 MB; this process"):
        _memory.check_memory("f.arff", 8 * 10**8, "X")
    assert _memory.check_memory("f.arff", 6 * 10**8, "X") == 6 * 10**8


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm of Linux"
)
def test_under_rlimit_as_the_reader_stops_with_its_own_error(tmp_path):
    """In a process limited to 400 MB more address space than it has: the reader's
    MemoryError, naming the file and RLIMIT_AS, not NumPy's; the resident memory stays under
    the limit."""
    path = many_values_file(tmp_path / "many.arff", 20_000, 5_000)  # 1.6 GB one-hot
    script = f"""
import resource
from mlsom.datasets import load_arff
pages = int(open("/proc/self/statm").read().split()[0])
limit = pages * resource.getpagesize() + 400 * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_arff({str(path)!r}, nominal="onehot")
except MemoryError as exc:
    print("MemoryError:", exc)
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print("grown kB:", grown)
"""
    # the package under test, wherever it is imported from (an install, or src/ built in place)
    package_home = str(Path(mlsom.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=package_home, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"MemoryError: {path}: the first "), out.stdout
    assert "(RLIMIT_AS)" in lines[0] and "of which" in lines[0]
    assert int(lines[1].split(":")[1]) < 400 * 1024


# ---------------------------------------------------------------------- errors name their source


def test_split_files_of_different_widths_name_both_files(tmp_path, capsys):
    """NumPy said 'all the input array dimensions ... must match exactly' (Yeast's two parts)
    and 'X_stream has 3 features, X_train 2' (MOA-Spher-2C-2A's)."""
    home = yeast_home(tmp_path, widths=(3, 4))
    expected = (
        f"{home / 'yeast-train.arff'} has 4 features, but {home / 'yeast-test.arff'} has 3: "
        "the files of a data set must have the same features"
    )
    with pytest.raises(ValueError) as info:
        load("Yeast", data_home=home)
    # then which names are missing or unknown
    assert str(info.value).startswith(expected + " (missing")
    status, line = cli(run_argv("Yeast", home), capsys)
    assert status == 1 and line.startswith(f"mlsom: error: {expected}")

    home = moa_home(tmp_path, test=(3, KEPT))  # the test part has an extra feature
    expected = f"{home / TEST} has 3 features, but {home / TRAIN} has 2"
    with pytest.raises(ValueError, match=re.escape(expected)):
        load("MOA-Spher-2C-2A", data_home=home)
    status, line = cli(run_argv("MOA-Spher-2C-2A", home), capsys)
    assert status == 1 and expected in line


def test_a_training_file_without_a_kept_label_says_so(tmp_path, capsys):
    """It said 'X has no row: shape (0, 2)' of a file of 200 rows."""
    home = moa_home(tmp_path, train=(2, NOT_KEPT))
    expected = (
        f"{home / TRAIN}: none of its 200 data rows has one of the labels kept (class2, "
        "class3), so no initial set"
    )
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=home)
    assert str(info.value) == expected
    assert cli(run_argv("MOA-Spher-2C-2A", home), capsys) == (1, f"mlsom: error: {expected}")


def test_a_test_file_without_a_row_says_so(tmp_path, capsys):
    """It said 'n_test must be >= 1, got 0'."""
    home = moa_home(tmp_path, test=(2, []))
    expected = f"{home / TEST}: no data row, so no test stream"
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=home)
    assert str(info.value) == expected
    assert cli(run_argv("MOA-Spher-2C-2A", home), capsys) == (1, f"mlsom: error: {expected}")

    (home / TEST).unlink()
    moa_file(home / TEST, 2, NOT_KEPT)
    with pytest.raises(ValueError, match=re.escape(f"{home / TEST}: none of its 200 data rows")):
        load("MOA-Spher-2C-2A", data_home=home)


def test_files_without_any_row_name_the_files(tmp_path):
    home = moa_home(tmp_path, train=(2, []), test=(2, []))
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=home)
    assert str(info.value) == f"{home / TRAIN} + {home / TEST}: no data row, so no stream"


def test_no_label_frequent_enough_names_the_files(tmp_path):
    home = yeast_home(tmp_path)
    with pytest.raises(ValueError) as info:
        load("Yeast", data_home=home, min_label_freq=0.9)
    files = f"{home / 'yeast-test.arff'} + {home / 'yeast-train.arff'}"
    assert str(info.value) == f"{files}: no label is kept"


def _eio_path():
    """/proc/self/mem: a regular file whose first page gives EIO (None where it does not)."""
    path = "/proc/self/mem"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        os.read(fd, 6)
    except OSError as exc:
        return path if exc.errno == errno.EIO else None
    finally:
        os.close(fd)
    return None


EIO_PATH = _eio_path()
needs_eio = pytest.mark.skipif(EIO_PATH is None, reason="no /proc/self/mem giving EIO here")
EIO_MESSAGE = "[Errno 5] Input/output error while reading line 1: '{}'"


@needs_eio
def test_an_io_error_names_the_file_in_every_reader(tmp_path):
    """It was a bare '[Errno 5] Input/output error'."""
    for read in (lambda: load_arff(EIO_PATH), lambda: iter_arff(EIO_PATH)):
        with pytest.raises(OSError) as info:
            read()
        assert info.value.errno == errno.EIO and info.value.filename == EIO_PATH
        assert str(info.value) == EIO_MESSAGE.format(EIO_PATH)
    arff = tmp_path / "a.arff"
    arff.write_text("@relation a\n@attribute f numeric\n@attribute L {0,1}\n@data\n1,0\n")
    with pytest.raises(OSError) as info:
        load_arff(arff, xml=EIO_PATH)
    assert str(info.value) == EIO_MESSAGE.format(EIO_PATH)


@needs_eio
@pytest.mark.parametrize("command", ["run", "experiment"])
def test_an_io_error_names_the_file_on_the_command_line(command, tmp_path, capsys):
    home = yeast_home(tmp_path)
    for name in ("yeast-test.arff", "yeast-train.arff"):
        (home / name).unlink()
    (home / "yeast.arff").symlink_to(EIO_PATH)
    if command == "run":
        argv = run_argv("Yeast", home)
    else:
        argv = experiment_argv("Yeast", home, tmp_path / "out")
    status, line = cli(argv, capsys)
    assert status == (1 if command == "run" else 2)  # experiment: reading its fingerprint
    assert line.startswith("mlsom: error: [Errno 5] Input/output error")
    assert line.endswith(f": '{home / 'yeast.arff'}'")


# ---------------------------------------------------------------------- files that are no file


def _plant(kind, path):
    """Put a ``kind`` of non-regular file at ``path``; the words its error must hold."""
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        os.mkfifo(path)
        return "is a FIFO (named pipe), not a regular file"
    if kind in ("/dev/null", "/dev/zero"):
        if not os.path.exists(kind):
            pytest.skip(f"no {kind} here")
        os.symlink(kind, path)
        return "is a character device, not a regular file"
    if kind == "directory":
        os.mkdir(path)
        return "is a directory, not a regular file"
    if kind == "loop":
        os.symlink(os.path.basename(path), path)
        return "Too many levels of symbolic links"
    raise AssertionError(kind)


KINDS = ["fifo", "/dev/null", "/dev/zero", "directory", "loop"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_data_file_that_is_no_regular_file_is_reported_as_what_it_is(kind, tmp_path, capsys):
    """They were 'not found' (the finder took only regular files); a FIFO must not block."""
    home = yeast_home(tmp_path)
    for name in ("yeast-test.arff", "yeast-train.arff"):
        (home / name).unlink()
    planted = home / "yeast.arff"
    words = _plant(kind, planted)
    error = in_a_thread(lambda: load("Yeast", data_home=home))
    assert isinstance(error, (ArffError, OSError)) and not isinstance(error, FileNotFoundError)
    assert str(planted) in str(error) and words in str(error) and "not found" not in str(error)
    for argv in (run_argv("Yeast", home), experiment_argv("Yeast", home, tmp_path / "out")):
        status, line = cli(argv, capsys)  # (the finder never opens it: the watchdog's 120 s)
        assert status == 2 and str(planted) in line and words in line, line


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("role", ["arff", "xml", "companion xml"])
def test_the_readers_report_what_the_file_is(kind, role, tmp_path):
    arff = tmp_path / "a.arff"
    arff.write_text("@relation a\n@attribute f numeric\n@attribute L {0,1}\n@data\n1,0\n")
    planted = tmp_path / ("b.arff" if role == "arff" else "a.xml")
    words = _plant(kind, planted)
    calls = {
        "arff": [lambda: load_arff(planted), lambda: iter_arff(planted)],
        "xml": [lambda: load_arff(arff, xml=planted), lambda: iter_arff(arff, xml=planted)],
        "companion xml": [lambda: load_arff(arff), lambda: iter_arff(arff)],
    }[role]
    for call in calls:
        error = in_a_thread(call)
        assert isinstance(error, (ArffError, OSError)), error
        assert str(planted) in str(error) and words in str(error), str(error)


def test_a_permission_denied_names_the_file(tmp_path, monkeypatch, capsys):
    """(Simulated: the tests may run as root, whom no permission stops.)"""
    home = yeast_home(tmp_path)
    denied = str(home / "yeast-train.arff")
    real_open = os.open

    def deny(path, *args, **kwargs):
        if os.fspath(path) == denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    expected = f"[Errno 13] Permission denied: '{denied}'"
    with pytest.raises(PermissionError, match=re.escape(expected)):
        load_arff(denied)
    with pytest.raises(PermissionError, match=re.escape(expected)):
        load("Yeast", data_home=home)
    assert cli(run_argv("Yeast", home), capsys) == (1, f"mlsom: error: {expected}")


def test_a_data_home_that_is_a_symbolic_link_loop_is_not_missing(tmp_path, capsys):
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    status, line = cli(run_argv("Yeast", loop), capsys)
    assert status == 2
    assert line == (
        f"mlsom: error: argument --data-home: data_home '{loop}' cannot be used: Too many levels "
        "of symbolic links"
    )
