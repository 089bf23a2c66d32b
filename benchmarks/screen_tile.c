/* The 64-row screening tile of frozen `predict` alone, on each vector path this processor has:
 * time per call of 64 rows and the multiply-add rate (multiply-adds per nanosecond), to set
 * against the sgemm floor of benchmarks/suite.py (the same products: 1,000,000 rows x M x A).
 *
 *     gcc -O3 -ffp-contract=off -fno-math-errno \
 *         -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
 *         -Isrc/mlsom benchmarks/screen_tile.c -o /tmp/screen_tile -lm
 *     /tmp/screen_tile [calls] [M] [A] [L]      # defaults 3000 527 128 7 (the suite's model)
 *
 * The flags are setup.py's. Random inputs: the tile's time does not depend on the values. */
#include "_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *floats(Py_ssize_t n)
{
    float *p = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
    Py_ssize_t i;
    if (p == NULL) exit(1);
    for (i = 0; i < n; i++) p[i] = (float)rand() / (float)RAND_MAX;
    return p;
}

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? atoi(argv[1]) : 3000;
    const Py_ssize_t M = argc > 2 ? atol(argv[2]) : 527, A = argc > 3 ? atol(argv[3]) : 128;
    const Py_ssize_t L = argc > 4 ? atol(argv[4]) : 7;
    float *xb = floats(64 * A), *Ws = floats(A * M), *base = floats(64), *ww = floats(M);
    float *gt = floats(64 * M), *m1 = floats(64 * L), *m2 = floats(64 * L), *hi = floats(64);
    int32_t *i1 = malloc(sizeof(int32_t) * 64 * (size_t)L);
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(L + 1));
    const char *names[3] = {"baseline", "avx2", "avx512f"};
    int fma, top, level, rep, r;
    Py_ssize_t c;
    if (calls < 1 || M < L || A < 1 || L < 1 || i1 == NULL || off == NULL) return 1;
    for (c = 0; c <= L; c++) off[c] = c * M / L;
    top = mlsom_cpu_level(&fma);
    for (level = 1; level <= top; level++) {
        double best = 1e30;
        mlsom_set_simd_level(level);
        if (mlsom_k->screen64maps_f == NULL) continue;
        for (rep = 0; rep < 5; rep++) {
            double t = seconds();
            for (r = 0; r < calls; r++)
                mlsom_k->screen64maps_f(xb, Ws, A, M, base, ww, off, L, gt, m1, i1, m2, hi);
            t = seconds() - t;
            if (t < best) best = t;
        }
        printf("%-8s %9.2f us per 64 rows  %6.2f multiply-adds/ns  (M=%zd A=%zd L=%zd)\n",
               names[level], 1e6 * best / calls, 64.0 * (double)(M * A) * calls / best * 1e-9,
               M, A, L);
    }
    if (top < 2) printf("avx512f  not on this processor\n");
    return 0;
}
