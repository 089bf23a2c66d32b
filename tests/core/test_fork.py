"""Fork safety: every entry point of the compiled core works in a child process.

GCC's OpenMP runtime keeps its pool of threads across ``fork()`` although the child has none of
them, so a parallel region in a child forked after the parent used threads would wait forever.
The core runs such a child on one thread (``_core.forked_serial()``), with the same results. Each
test runs the same work (fit, frozen scoring, the online phase, labelled updates, save and load,
all with ``n_jobs=2``) in the parent first, so that the parent's runtime has started its threads,
then in children started every way a server or a study starts them, and compares the results
bit for bit. Every wait is bounded: a hang fails the test instead of stopping the suite.
"""

import concurrent.futures
import hashlib
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _core

# a hung child fails the test after this long
TIMEOUT = 120


def _data(seed=0, n=20000, A=20, L=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, A))
    Y = (X[:, :L] + 0.5 * rng.normal(size=(n, L)) > 0).astype(np.uint8)
    return X, Y


def _exercise(seed):
    """Fit, score, stream, learn from labels, save and load, on two threads; a digest of every
    result and the threads the core may use here."""
    X, Y = _data(seed)
    h = hashlib.sha256()
    model = SOMStreamClassifier(grid_size=5, random_state=seed, n_jobs=2).fit(X[:4000], Y[:4000])
    h.update(model.predict(X).tobytes())  # frozen scoring over blocks of rows
    h.update(model.predict_stream(X[4000:8000]).tobytes())  # the online phase
    model.partial_fit(X[8000:8200], Y[8000:8200])  # labelled update
    h.update(model.predict_stream(X[8200:9000]).tobytes())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.npz")
        model.save(path)
        loaded = SOMStreamClassifier.load(path)
    h.update(loaded.predict(X[:5000]).tobytes())
    h.update(np.ascontiguousarray(loaded.weights_).tobytes())
    h.update(np.ascontiguousarray(loaded.T_).tobytes())
    return h.hexdigest(), _core.max_threads(), _core.forked_serial()


def _predict_chunk(args):
    model, X = args
    return model.predict(X)


@pytest.fixture(scope="module")
def parent():
    """The parent's own results (its runtime has run parallel regions afterwards)."""
    digest, threads, serial = _exercise(0)
    assert not serial  # the test process itself was not forked after using threads
    return digest, threads


def _expected_child_threads(parent_threads):
    # one thread in a child forked after the parent used more than one; otherwise the parent's
    return 1 if parent_threads > 1 else parent_threads


def test_os_fork_after_use_every_entry_point(parent):
    digest, threads = parent
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(r)
            signal.alarm(TIMEOUT)
            os.write(w, pickle.dumps(_exercise(0)))
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + TIMEOUT
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the forked child did not finish in {TIMEOUT} s")
        time.sleep(0.05)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    assert os.waitstatus_to_exitcode(status) == 0
    child_digest, child_threads, child_serial = pickle.loads(data)
    assert child_digest == digest
    assert child_threads == _expected_child_threads(threads)
    assert child_serial == (threads > 1)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_pool(parent, method):
    digest, threads = parent
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        results = pool.map_async(_exercise, [0, 0]).get(timeout=TIMEOUT)
    expected = _expected_child_threads(threads) if method == "fork" else threads
    for child_digest, child_threads, child_serial in results:
        assert child_digest == digest
        assert child_threads == expected
        assert child_serial == (method == "fork" and threads > 1)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_pool_maps_a_loaded_models_predict(parent, method):
    """A server's pattern: a model loaded and used in the parent, its predict mapped over rows."""
    X, Y = _data(1)
    model = SOMStreamClassifier(grid_size=4, random_state=1, n_jobs=2).fit(X[:3000], Y[:3000])
    expected = model.predict(X)
    chunks = [(model, X[i : i + 5000]) for i in range(0, len(X), 5000)]
    with multiprocessing.get_context(method).Pool(2) as pool:
        got = pool.map_async(_predict_chunk, chunks).get(timeout=TIMEOUT)
    np.testing.assert_array_equal(np.concatenate(got), expected)


@pytest.mark.parametrize("method", [None, "fork"])
def test_concurrent_futures(parent, method):
    digest, threads = parent
    ctx = None if method is None else multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        futures = [ex.submit(_exercise, 0) for _ in range(2)]
        results = [f.result(timeout=TIMEOUT) for f in futures]
    assert [r[0] for r in results] == [digest, digest]


def test_joblib_default_backend(parent):
    joblib = pytest.importorskip("joblib")
    digest, _ = parent
    results = joblib.Parallel(n_jobs=2, timeout=TIMEOUT)(
        joblib.delayed(_exercise)(0) for _ in range(2)
    )
    assert [r[0] for r in results] == [digest, digest]


def _run_script(code, env=None, timeout=TIMEOUT):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_child_forked_before_any_parallel_region_keeps_its_threads():
    """Only a parent that has run threads makes its children serial: a server that forks its
    workers right after loading a model (before scoring anything) keeps every worker threaded."""
    proc = _run_script(
        """
        import os, sys
        from mlsom import SOMStreamClassifier, _core
        import numpy as np
        before = _core.max_threads()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            X = np.random.default_rng(0).normal(size=(20000, 8))
            Y = (X[:, :2] > 0).astype(np.uint8)
            m = SOMStreamClassifier(grid_size=4, random_state=0, n_jobs=2).fit(X, Y)
            m.predict(X)
            os.write(w, f"{_core.max_threads()} {int(_core.forked_serial())}".encode())
            os._exit(0)
        os.close(w)
        os.waitpid(pid, 0)
        print(before, os.read(r, 100).decode())
        """
    )
    before, child_threads, child_serial = map(int, proc.stdout.split())
    assert child_threads == before
    assert child_serial == 0


def test_huge_omp_stacksize_runs_serially_with_a_warning():
    """An OMP_STACKSIZE no thread can be started with would have the OpenMP runtime end the
    process at the first parallel region; the core warns at import and uses one thread."""
    env = dict(os.environ, OMP_STACKSIZE="999999999G")
    proc = _run_script(
        """
        import warnings
        import numpy as np
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from mlsom import SOMStreamClassifier, _core
        X = np.random.default_rng(0).normal(size=(20000, 8))
        Y = (X[:, :2] > 0).astype(np.uint8)
        m = SOMStreamClassifier(grid_size=4, random_state=0, n_jobs=2).fit(X, Y)
        m.predict(X)
        print(_core.max_threads(), _core.openmp_enabled())
        print("|".join(str(w.message) for w in caught))
        """,
        env=env,
    )
    first, messages = proc.stdout.split("\n", 1)
    threads, openmp = first.split()
    assert threads == "1"
    if openmp == "True" and os.cpu_count() > 1:
        assert "OMP_STACKSIZE='999999999G'" in messages
        assert "one thread" in messages


def test_huge_omp_stacksize_under_an_address_space_limit():
    """The review's case: the same setting under RLIMIT_AS (the process's own limit counts)."""
    resource = pytest.importorskip("resource")
    env = dict(os.environ, OMP_STACKSIZE="999999999G")
    limit = 6 * 2**30

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import numpy as np\n"
            "from mlsom import SOMStreamClassifier\n"
            "X = np.random.default_rng(0).normal(size=(20000, 8))\n"
            "Y = (X[:, :2] > 0).astype(np.uint8)\n"
            "m = SOMStreamClassifier(grid_size=4, random_state=0, n_jobs=2).fit(X, Y)\n"
            "print(m.predict(X).sum())\n",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        preexec_fn=preexec,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Thread creation failed" not in proc.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512", 512 * 1024),
        ("512k", 512 * 1024),
        ("16M", 16 * 2**20),
        (" 2 g ", 2 * 2**30),
        ("100B", 100),
        ("999999999G", 999999999 * 2**30),
        ("12X", None),
        ("-4M", None),
        ("", None),
        ("1" * 100, None),
    ],
)
def test_stacksize_syntax(text, expected):
    from mlsom._config import _stack_bytes

    assert _stack_bytes(text) == expected
