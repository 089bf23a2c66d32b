#!/usr/bin/env bash
# Emulated aarch64 stage (docs/platforms.md): the extension cross-compiled for aarch64 and tested
# under qemu-aarch64 with Debian's arm64 Python 3.11 and NumPy's manylinux aarch64 wheel.
#
#   1. Debian's cross compiler and qemu-user (apt-get, when missing);
#   2. Debian's arm64 Python (python3.11-minimal, libpython3.11-stdlib, libpython3.11-dev, libc6,
#      libgomp1, ...) downloaded with apt-get and unpacked into a folder of its own, apt's arm64
#      package lists kept in that folder too (no `dpkg --add-architecture`, nothing installed);
#   3. NumPy (the native NumPy's version), pytest, Cython and setuptools as aarch64 wheels;
#   4. _core.pyx translated to C natively (the C is the same for every platform), then setup.py
#      run by the arm64 Python under qemu with the cross compiler: the flags, OpenMP detection and
#      SIMD dispatch of a native aarch64 build (baseline path: x86 dispatch is compiled out);
#   5. GCC's vectorization report on the kernels (_kernels*.h) for aarch64 (NEON);
#   6. the tests of .ci/emulated-tests.txt under qemu-aarch64;
#   7. the digests of tests/helpers/platform_fixtures.py under qemu-aarch64 against the native x86-64 ones.
#
# Needs root (apt-get) and the network to Debian and PyPI. Uses the CI's .venv (or
# $MLSOM_NATIVE_PYTHON) as the native build, or builds one. Leaves nothing behind but the Debian
# packages of step 1. Run by hand: bash .ci/emulated-aarch64.sh
set -euo pipefail
STAGE="emulated aarch64"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mlsom-aarch64.XXXXXX")
# shellcheck source=.ci/emulated-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/emulated-common.sh"
trap on_exit EXIT
cd "$ROOT"

# Debian arm64 packages of the emulated Python: the interpreter, its standard library and headers,
# and the shared libraries that it, NumPy's wheel (libstdc++) and the extension (libgomp) load.
ARM_DEBS=(
    python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev
    libc6 libgcc-s1 libstdc++6 libgomp1
    libexpat1 zlib1g libffi8 libbz2-1.0 liblzma5 libssl3 libuuid1
)
WHEEL_PLATFORMS=(--platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64
    --platform manylinux2014_aarch64)

emulated_tests
need_apt gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
native_python

step "Debian's arm64 Python: package lists, ${#ARM_DEBS[@]} packages, unpacked"
ARM=$WORK/arm64-root
APT_ARM=(-qq -o APT::Architecture=arm64 -o APT::Architectures=arm64
    -o "Dir::State::Lists=$WORK/apt-lists" -o "Dir::Cache=$WORK/apt-cache"
    -o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
mkdir -p "$WORK/apt-lists/partial" "$WORK/apt-cache/archives/partial" "$WORK/debs" "$ARM"
run_logged "$WORK/apt-arm64.log" apt-get "${APT_ARM[@]}" update
(cd "$WORK/debs" && run_logged "$WORK/apt-arm64.log" apt-get "${APT_ARM[@]}" download "${ARM_DEBS[@]}")
for deb in "$WORK"/debs/*.deb; do
    dpkg-deb -x "$deb" "$ARM"
done
ARM_PYTHON=(qemu-aarch64 -L "$ARM" "$ARM/usr/bin/python3.11")
checked env "${EMU_ENV[@]}" "${ARM_PYTHON[@]}" -c \
    "import platform, sys; assert platform.machine() == 'aarch64'; print('  Python', sys.version.split()[0], platform.machine())"

NUMPY_VERSION=$("$NATIVE_PY" -c "import numpy; print(numpy.__version__)")
step "aarch64 wheels: NumPy $NUMPY_VERSION, .ci/requirements-emulated.txt"
SITE=$WORK/arm64-site
run_logged "$WORK/pip-arm64.log" "$NATIVE_PY" -m pip install --target "$SITE" --only-binary=:all: \
    --implementation cp --python-version 3.11 --abi cp311 "${WHEEL_PLATFORMS[@]}" \
    "numpy==$NUMPY_VERSION" -r .ci/requirements-emulated.txt

step "_core.pyx to C, natively (Cython of .ci/requirements-emulated.txt)"
TREE=$WORK/tree
copy_tree "$TREE"
cp -R tests .ci "$TREE/"
run_logged "$WORK/pip-native.log" "$NATIVE_PY" -m pip install --target "$WORK/native-tools" \
    $(grep -iE '^(cython|setuptools)[=<>~ ]' .ci/requirements-emulated.txt)
(cd "$TREE" && PYTHONPATH="$WORK/native-tools" run_logged "$WORK/cythonize.log" \
    "$NATIVE_PY" setup.py --version)
[ -f "$TREE/src/mlsom/_core.c" ] || fail "setup.py did not write src/mlsom/_core.c"

step "setup.py build_ext under qemu-aarch64, compiler aarch64-linux-gnu-gcc"
# CPPFLAGS (setuptools adds it to the sysconfig flags; CFLAGS would replace them): the arm64
# Python's headers first (sysconfig names /usr/include/python3.11, which is the host's), and
# GCC's report of the loops it vectorized.
(cd "$TREE" && export "${EMU_ENV[@]}" PYTHONPATH="$SITE" \
    CPPFLAGS="-I$ARM/usr/include/python3.11 -I$ARM/usr/include -fopt-info-vec-optimized=$WORK/vec-build.txt" \
    && run_logged "$WORK/build.log" "${ARM_PYTHON[@]}" setup.py build_ext --inplace)
grep "^mlsom:" "$WORK/build.log" | sed 's/^/  /'
COMPILE=$(grep -E '^aarch64-linux-gnu-gcc .* -c src/mlsom/_core\.c' "$WORK/build.log" | head -n 1)
[ -n "$COMPILE" ] || fail "the build did not compile src/mlsom/_core.c with aarch64-linux-gnu-gcc"
SO=$(ls "$TREE"/src/mlsom/_core.cpython-311-aarch64-linux-gnu.so)
# ELF e_machine (bytes 18-19, little-endian) 0xB7: AArch64
[ "$(od -An -tx1 -j18 -N2 "$SO" | tr -d ' \n')" = "b700" ] || fail "$SO is not an AArch64 ELF file"
echo "  $(basename "$SO"): AArch64, $(wc -c < "$SO") bytes"
echo "  compile: ${COMPILE#aarch64-linux-gnu-gcc }" | cut -c1-400

step "NEON: GCC's vectorization of the kernels (_kernels.h and its family files, -fopt-info-vec)"
"$NATIVE_PY" .ci/neon_vec_report.py --cc aarch64-linux-gnu-gcc \
    --flags "${COMPILE#aarch64-linux-gnu-gcc }" > "$WORK/neon.txt" \
    || { cat "$WORK/neon.txt"; fail "neon_vec_report.py"; }
sed 's/^/  /' "$WORK/neon.txt"
NEON_SUMMARY=$(tail -n 1 "$WORK/neon.txt")
echo "  the whole build: $(grep -c 'loop vectorized' "$WORK/vec-build.txt" || true) loops vectorized" \
    "($(grep -E '_kernels(_[a-z]+)?\.h' "$WORK/vec-build.txt" | grep -c 'loop vectorized' || true) in the kernels)"

step "the compiled core under qemu-aarch64"
cd "$TREE"
ARM_ENV=("${EMU_ENV[@]}" PYTHONPATH="$SITE:$TREE/src" MLSOM_EXPECT_OPENMP=1)
checked env "${ARM_ENV[@]}" "${ARM_PYTHON[@]}" -c "import mlsom; mlsom.show_config()" \
    | sed 's/^/  /'
checked env "${ARM_ENV[@]}" "${ARM_PYTHON[@]}" -c "
from mlsom import _core
assert _core.simd_info() == ('baseline (neon)', 'baseline (neon)'), _core.simd_info()
assert _core.openmp_enabled(), 'built without OpenMP'"

step "$TESTS_WHAT under qemu-aarch64"
checked env "${ARM_ENV[@]}" "${ARM_PYTHON[@]}" -m pytest -p no:cacheprovider -q "${TESTS[@]}" \
    2>&1 | tee "$WORK/pytest.log"
PASSED=$(grep -oE '[0-9]+ passed' "$WORK/pytest.log" | tail -n 1)

native_hashes
step "digests under qemu-aarch64, against the native ones"
checked env "${ARM_ENV[@]}" "${ARM_PYTHON[@]}" .ci/platform_hashes.py --expect-simd "baseline (neon)" \
    --compare "$WORK/native.json" > "$WORK/hashes.log" 2>&1 \
    || { cat "$WORK/hashes.log"; exit 1; }
grep -E '^platform hashes' "$WORK/hashes.log" | sed 's/^/  /'

DIGESTS=$(grep -oE '[0-9]+ cases x [0-9]+ digests' "$WORK/hashes.log" | head -n 1)
echo "$STAGE: PASSED in $((SECONDS - STAGE_T0))s: $PASSED under qemu-aarch64 (Debian arm64" \
    "Python 3.11, NumPy $NUMPY_VERSION); platform digests ($DIGESTS) identical to native" \
    "x86-64; NEON: $NEON_SUMMARY$(emulator_faults)"
