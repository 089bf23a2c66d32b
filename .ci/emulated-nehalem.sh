#!/usr/bin/env bash
# Emulated old-x86 stage (docs/platforms.md): the normal x86-64 build (the CI's .venv) run under
# `qemu-x86_64 -cpu Nehalem`, a processor with SSE4.2 and no AVX, AVX2, FMA or AVX-512.
#
#   1. qemu-user (apt-get, when missing), and a check that the emulator refuses AVX2 under this
#      CPU model (an AVX2 instruction must end in SIGILL, else the stage would prove nothing);
#   2. the build's dispatch: mlsom._core.simd_info() must report the SSE2 baseline;
#   3. the tests of .ci/emulated-tests.txt under the emulator (an instruction the CPU lacks ends
#      the process with SIGILL, which fails the stage and is named as such);
#   4. the digests of tests/helpers/platform_fixtures.py under the emulator against the native ones
#      (which are also checked to agree at every SIMD level of this processor).
#
# Needs root for apt-get when qemu-user is missing. Uses the CI's .venv (or
# $MLSOM_NATIVE_PYTHON) as the build, or builds one. Leaves nothing behind but the Debian
# package. Run by hand: bash .ci/emulated-nehalem.sh
set -euo pipefail
STAGE="emulated Nehalem"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mlsom-nehalem.XXXXXX")
# shellcheck source=.ci/emulated-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/emulated-common.sh"
trap on_exit EXIT
cd "$ROOT"

CPU=Nehalem
EMU=(qemu-x86_64 -cpu "$CPU")
emulated_tests
need_apt qemu-user gcc
native_python

step "the emulator refuses AVX2 under -cpu $CPU"
cat > "$WORK/avx2.c" << 'C'
int main(void)
{
    __asm__ volatile("vpxor %%ymm0, %%ymm0, %%ymm0\n\tvpaddd %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");
    return 0;
}
C
gcc -O1 "$WORK/avx2.c" -o "$WORK/avx2"
rc=0
# (a command after it: the subshell, not this shell, reports the signal, into the log)
(ulimit -c 0; "${EMU[@]}" "$WORK/avx2"; exit $?) > "$WORK/avx2.log" 2>&1 || rc=$?
((rc == 132)) || fail "an AVX2 instruction under ${EMU[*]} gave status $rc, not SIGILL (132)"
echo "  an AVX2 instruction: SIGILL, as on a real $CPU"

step "the x86-64 build under ${EMU[*]}: dispatch"
cd "$WORK"
checked env "${EMU_ENV[@]}" "${EMU[@]}" "$NATIVE_PY" -c "import mlsom; mlsom.show_config()" \
    | sed 's/^/  /'
checked env "${EMU_ENV[@]}" "${EMU[@]}" "$NATIVE_PY" -c "
from mlsom import _core, _testing
assert _core.simd_info() == ('baseline (sse2)', 'baseline (sse2)'), _core.simd_info()
assert _testing.simd_levels() == [0], _testing.simd_levels()
assert _core._switches(simd=2)[2] == 0 and _core._switches()[2] == 0, 'a level above the baseline was accepted'"

step "$TESTS_WHAT under ${EMU[*]}"
# from a folder that holds only a copy of tests/ and pyproject.toml: the installed build is tested
mkdir "$WORK/suite"
cp -R "$ROOT/tests" "$ROOT/pyproject.toml" "$WORK/suite/"
cd "$WORK/suite"
checked env "${EMU_ENV[@]}" MLSOM_EXPECT_OPENMP=1 "${EMU[@]}" "$NATIVE_PY" -m pytest \
    -p no:cacheprovider -q "${TESTS[@]}" 2>&1 | tee "$WORK/pytest.log"
PASSED=$(grep -oE '[0-9]+ passed' "$WORK/pytest.log" | tail -n 1)

native_hashes
step "digests under ${EMU[*]}, against the native ones"
checked env "${EMU_ENV[@]}" "${EMU[@]}" "$NATIVE_PY" "$ROOT/.ci/platform_hashes.py" \
    --expect-simd "baseline (sse2)" --compare "$WORK/native.json" \
    > "$WORK/hashes.log" 2>&1 || { cat "$WORK/hashes.log"; exit 1; }
grep -E '^platform hashes' "$WORK/hashes.log" | sed 's/^/  /'

DIGESTS=$(grep -oE '[0-9]+ cases x [0-9]+ digests' "$WORK/hashes.log" | head -n 1)
echo "$STAGE: PASSED in $((SECONDS - STAGE_T0))s: SSE2 baseline chosen;" \
    "$PASSED under ${EMU[*]}; platform digests ($DIGESTS) identical to native x86-64$(emulator_faults)"
