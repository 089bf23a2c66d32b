# Shared by .ci/emulated-aarch64.sh and .ci/emulated-nehalem.sh, which source it after setting
# STAGE (the stage's name) and WORK (a temporary folder the stage removes on exit). Not run alone.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off PIP_NO_CACHE_DIR=1
# Under emulation an OpenMP thread that waits spins through emulated instructions: let it sleep.
# Python's faulthandler prints the Python frames of a process that dies of a signal (SIGILL too).
EMU_ENV=(OMP_WAIT_POLICY=passive PYTHONFAULTHANDLER=1)
STAGE_T0=$SECONDS
CURRENT_STEP="start"

step() {  # announce a step, with the seconds since the stage began
    CURRENT_STEP=$*
    printf '[%s %4ds] %s\n' "$STAGE" "$((SECONDS - STAGE_T0))" "$*"
}

fail() {
    echo "$STAGE: FAILED after $((SECONDS - STAGE_T0))s: $*" >&2
    exit 1
}

on_exit() {  # the EXIT trap: clean up; say which step failed when the script did not finish
    local rc=$?
    if [ "${MLSOM_EMULATED_KEEP:-0}" = 1 ]; then
        echo "$STAGE: MLSOM_EMULATED_KEEP=1: the work folder $WORK is kept"
    else
        rm -rf "$WORK"
    fi
    if ((rc != 0)); then
        echo "$STAGE: FAILED (status $rc) at step: $CURRENT_STEP" >&2
    fi
    exit "$rc"
}

run_logged() {  # LOG CMD...: run quietly; on failure show the end of the log and fail
    local log=$1
    shift
    if ! "$@" > "$log" 2>&1; then
        tail -n 60 "$log" >&2
        fail "$* (log above)"
    fi
}

sigill_report() {  # CMD...: where the emulated process of CMD died of SIGILL, from qemu's core file
    local core exe="" a seen=0
    core=$(ls -t qemu_*.core 2> /dev/null | head -n 1 || true)
    if [ -z "$core" ]; then
        echo "  (no core file of qemu's in $PWD to say where)" >&2
        return 0
    fi
    for a in "$@"; do  # the guest program: the first executable file after the qemu command
        case $a in qemu-*) seen=1 && continue ;; esac
        if ((seen)) && [ -f "$a" ] && [ -x "$a" ]; then
            exe=$(readlink -f "$a")
            break
        fi
    done
    if command -v gdb > /dev/null; then
        echo "  the faulting instruction and its frames (gdb, $core):" >&2
        timeout 120 gdb -batch -q -ex 'info symbol $pc' -ex 'x/2i $pc' -ex 'bt 12' \
            ${exe:+"$exe"} "$core" 2>&1 | grep -v -e '^warning:' -e 'libthread_db' | head -n 24 \
            | sed 's/^/    /' >&2 || true
    else
        echo "  (gdb is not installed: $core not read)" >&2
    fi
    rm -f qemu_*.core core
}

checked() {  # CMD...: run an emulated command; an illegal instruction is named as such
    # A SIGILL is reported with the instruction that raised it (qemu's core file, read by gdb;
    # Python's faulthandler prints the Python frames), then the command runs once more: an
    # instruction the CPU model lacks raises it again on the same command, which fails the
    # stage. A SIGILL that does not recur (seen once in CI, on `import mlsom` under -cpu Nehalem,
    # on a tree that passed the stage before and after, unchanged) is an emulator
    # fault: it is reported as such in the log and in the stage's last line, not hidden.
    local rc try
    for try in 1 2; do
        rc=0
        (ulimit -c unlimited 2> /dev/null || true; exec "$@") || rc=$?  # core files: sigill_report
        ((rc == 132)) || break
        echo "$STAGE: illegal instruction (SIGILL) in: $*" >&2
        sigill_report "$@"
        ((try == 2)) && fail "illegal instruction (SIGILL), twice, in: $*"
        echo "$STAGE: running it once more: a missing instruction raises SIGILL again" >&2
    done
    if ((rc != 0)); then
        ((try == 1)) || fail "status $rc from: $* (after a SIGILL on the first try)"
        fail "status $rc from: $*"
    fi
    if ((try == 2)); then
        echo "$*" >> "$WORK/sigill-not-recurring.txt"
        echo "$STAGE: WARNING: the SIGILL did not recur: an emulator fault, not a missing" \
            "instruction (listed again in the stage's last line)" >&2
    fi
}

emulator_faults() {  # for a stage's last line: the SIGILLs that did not recur, if any
    if [ -s "$WORK/sigill-not-recurring.txt" ]; then
        printf '; WARNING: %s command(s) raised a SIGILL once that a second run did not (an emulator fault, see the log)' \
            "$(wc -l < "$WORK/sigill-not-recurring.txt")"
    fi
}

need_apt() {  # PACKAGE...: install those of Debian's packages that are missing
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        step "Debian packages already installed: $*"
        return 0
    fi
    step "apt-get install ${missing[*]}"
    run_logged "$WORK/apt.log" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive run_logged "$WORK/apt.log" \
        apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

copy_tree() {  # DEST: a copy of what a build of the package needs, without build products
    mkdir -p "$1"
    cp -R "$ROOT/setup.py" "$ROOT/pyproject.toml" "$ROOT/README.md" "$ROOT/LICENSE" \
        "$ROOT/MANIFEST.in" "$ROOT/src" "$1/"
    find "$1/src" \( -name '*.so' -o -name '*.pyd' -o -name '_core.c' -o -name '_core.html' \
        -o -name '__pycache__' -o -name '*.egg-info' \) -prune -exec rm -rf {} +
}

native_python() {  # sets NATIVE_PY: a native Python with this tree's mlsom installed, and pytest
    local py=${MLSOM_NATIVE_PYTHON:-$ROOT/.venv/bin/python}
    py=$(realpath -sm "$py")  # absolute (the stages change folder), the venv's link kept
    if [ -x "$py" ] && (cd "$WORK" && "$py" -c "import mlsom._core, pytest") > /dev/null 2>&1; then
        NATIVE_PY=$py
    else
        step "no native build at $py: building this tree into a virtual environment"
        copy_tree "$WORK/native-src"  # pip builds in the folder it is given
        python3 -m venv "$WORK/venv-native"
        run_logged "$WORK/native-build.log" "$WORK/venv-native/bin/pip" install "$WORK/native-src" pytest
        NATIVE_PY=$WORK/venv-native/bin/python
    fi
    step "native build: $(cd "$WORK" && "$NATIVE_PY" -c \
        'import mlsom, numpy; print(mlsom.__file__, "with NumPy", numpy.__version__)')"
}

emulated_tests() {  # sets TESTS (pytest's arguments) and TESTS_WHAT (their description)
    if [ "${MLSOM_EMULATED_FULL:-0}" = 1 ]; then
        # by hand: the core test files whole (about 7 minutes under qemu-aarch64 on an idle
        # machine); the sparse-input test needs SciPy, which the emulated Python does not have
        TESTS=(tests/core/test_reference.py tests/core/test_determinism.py
            tests/core/test_screening.py
            tests/core/test_testing_interface.py tests/estimator/test_api.py
            --deselect tests/estimator/test_api.py::test_sparse_input_is_refused_with_a_hint)
        TESTS_WHAT="the core test files (MLSOM_EMULATED_FULL=1)"
        return 0
    fi
    mapfile -t TESTS < <(grep -v '^[[:space:]]*#' "$ROOT/.ci/emulated-tests.txt" | grep -v '^[[:space:]]*$')
    ((${#TESTS[@]} > 0)) || fail ".ci/emulated-tests.txt lists no test"
    TESTS_WHAT="the ${#TESTS[@]} test ids of .ci/emulated-tests.txt"
}

native_hashes() {
    # The reference digests, computed natively at every SIMD level of this processor (they must
    # agree) into $WORK/native.json; where NumPy has AVX-512 routines on this processor, computed
    # again with them off, which must change nothing either (fit once used NumPy's float64 exp
    # and log, which round differently there: docs/platforms.md).
    local avx512
    avx512=$("$NATIVE_PY" - <<'PY'
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
except ImportError:  # NumPy 1.x
    from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
print(" ".join(f for f in __cpu_dispatch__
               if __cpu_features__.get(f) and ("AVX512" in f or f == "X86_V4")))
PY
    )
    step "native digests, every SIMD level"
    run_logged "$WORK/native-hashes.log" \
        "$NATIVE_PY" "$ROOT/.ci/platform_hashes.py" --levels all --out "$WORK/native.json"
    tail -n 1 "$WORK/native-hashes.log" | sed "s/^/  /"
    if [ -n "$avx512" ]; then
        step "native digests with NumPy's AVX-512 routines off ($avx512)"
        NPY_DISABLE_CPU_FEATURES="$avx512" run_logged "$WORK/native-hashes-numpy.log" \
            "$NATIVE_PY" "$ROOT/.ci/platform_hashes.py" --compare "$WORK/native.json"
        tail -n 1 "$WORK/native-hashes-numpy.log" | sed "s/^/  /"
    fi
}
