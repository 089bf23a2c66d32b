/*
 * The hot loops of mlsom, with SIMD paths chosen at run time.
 *
 * Distances are screened, never decided, here: the screening value of neuron j for an instance x
 * is |x'|^2 + |w_j'|^2 - 2 x'.w_j' in float32, where x' = x - c and w' = w - c are float32 copies
 * centred on a common point c (one multiply-add per feature, free to re-associate, half the
 * memory traffic of float64). The compiled core knows a bound on the difference between this
 * value and the exact distance (_core.pyx, _tol_scale), and computes the exact distance (the sum
 * of (x_i - w_i)^2 in a fixed order, in the model's type, in _core.pyx) of every neuron
 * whose order the bound leaves in doubt. Every decision is therefore the exact one, whatever the
 * SIMD path or the thread count.
 *
 * The screening copy of the neurons is stored transposed (feature-major): Ws[i * M + j] is feature
 * i of neuron j. The innermost loops run over neurons, so every lane of a vector register works on
 * one neuron and a compiler vectorises them without -ffast-math.
 *
 * Also here: the small passes over one instance's screening values (minimum and candidates,
 * maximum, counting below a value, gathering a window of values) and the sums of the batch SOM
 * update (in float64 double-double arithmetic for both input types).
 *
 * On x86-64 with GCC or clang each kernel is compiled three times (baseline SSE2, AVX2, AVX-512F)
 * and the widest path the processor supports is picked once at import. Elsewhere (MSVC, ARM) the
 * baseline path is used; on ARM64 it is NEON-vectorised by the compiler.
 *
 * The files: _kernels_common.h holds what the families share (the entry type, the restrict and
 * x86 vector macros) and every kernel's signature, once (MLSOM_*_ARGS, used by the kernels'
 * definitions and their pointers' types); _kernels.pxd declares the same for Cython. Each family
 * has one self-contained file (include guard, includes _kernels_common.h) with its plain-C
 * bodies and its hand-written AVX2 and AVX-512F kernels, twins side by side: _kernels_screen.h
 * (screening values: one instance, four rows, 64 rows; the smallest two), _kernels_sums.h (the
 * batch update's sums), _kernels_search.h (the ranking's passes over one instance's values),
 * _kernels_lanes.h (frozen scoring's ranking 16 rows at a time), _kernels_moves.h (the robust
 * variant's moves of a whole map), _kernels_guards.h (the nearest of a label's guards). This file
 * includes them all, compiles the plain-C bodies once per path (MLSOM_DEFINE_PATH), and holds
 * the processor check (mlsom_cpu_level) and the dispatch: one table of kernel pointers per SIMD
 * level (mlsom_kernels_*), of which mlsom_set_simd_level selects one (mlsom_k).
 */
#ifndef MLSOM_KERNELS_H
#define MLSOM_KERNELS_H

#include "_kernels_common.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------ the families, one file each */
#include "_kernels_screen.h"
#include "_kernels_sums.h"
#include "_kernels_search.h"
#include "_kernels_lanes.h"
#include "_kernels_moves.h"
#include "_kernels_guards.h"

/* Input validation: how many of x[0:n] are NaN or outside [-lim, lim] (a NaN fails both
 * compares). The compares are joined with a bitwise & so that the loop has no branch and the
 * compiler vectorizes it. */
#define MLSOM_COUNT_OUT(NAME, T)                                                         \
    static Py_ssize_t NAME(const T *x, Py_ssize_t n, T lim)                              \
    {                                                                                    \
        Py_ssize_t i, bad = 0;                                                           \
        for (i = 0; i < n; i++) bad += !((x[i] >= -lim) & (x[i] <= lim));                \
        return bad;                                                                      \
    }
MLSOM_COUNT_OUT(mlsom_count_out_d, double)
MLSOM_COUNT_OUT(mlsom_count_out_f, float)
#undef MLSOM_COUNT_OUT

/* a hint that bytes [p, p + n) will be read soon (a no-op where the compiler has no such hint) */
static void mlsom_prefetch(const void *p, Py_ssize_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    const char *a = (const char *)p;
    Py_ssize_t o;
    for (o = 0; o < n; o += 64) __builtin_prefetch(a + o, 0, 3);
#else
    (void)p;
    (void)n;
#endif
}

/* all kernels of one path, for one target attribute (empty for the baseline) */
#define MLSOM_DEFINE_PATH(SUFFIX, ATTR)                                                  \
    ATTR static void mlsom_screen_f_##SUFFIX MLSOM_SCREEN_ARGS(float)                    \
        MLSOM_SCREEN_BODY(float)                                                         \
    ATTR static void mlsom_screen4_f_##SUFFIX MLSOM_SCREEN4_ARGS(float)                  \
        MLSOM_SCREEN4_BODY(float)                                                        \
    ATTR static void mlsom_group_sums_d_##SUFFIX MLSOM_GROUP_SUMS_ARGS(double)          \
        MLSOM_GROUP_SUMS_BODY(double)                                                   \
    ATTR static void mlsom_group_sums_f_##SUFFIX MLSOM_GROUP_SUMS_ARGS(float)           \
        MLSOM_GROUP_SUMS_BODY(float)                                                    \
    ATTR static void mlsom_combine_##SUFFIX MLSOM_COMBINE_ARGS MLSOM_COMBINE_BODY       \
    ATTR static Py_ssize_t mlsom_argmin_f_##SUFFIX MLSOM_ARGMIN_ARGS(float)             \
        MLSOM_ARGMIN_BODY(float, nextafterf)                                            \
    ATTR static Py_ssize_t mlsom_count_lt_f_##SUFFIX MLSOM_COUNT_LT_ARGS(float)          \
        MLSOM_COUNT_LT_BODY(float)                                                       \
    ATTR static Py_ssize_t mlsom_count_lt2_f_##SUFFIX MLSOM_COUNT_LT2_ARGS(float)        \
        MLSOM_COUNT_LT2_BODY(float)                                                      \
    ATTR static Py_ssize_t mlsom_gather_range_f_##SUFFIX MLSOM_GATHER_RANGE_ARGS(float)  \
        MLSOM_GATHER_RANGE_BODY(float)                                                   \
    ATTR static double mlsom_max_f_##SUFFIX MLSOM_MAX_ARGS(float) MLSOM_MAX_BODY(float)  \
    ATTR static void mlsom_count_maps_f_##SUFFIX MLSOM_COUNT_MAPS_ARGS(float)            \
        MLSOM_COUNT_MAPS_BODY(float)                                                     \
    ATTR static void mlsom_move_map_d_##SUFFIX MLSOM_MOVE_MAP_ARGS(double)               \
        MLSOM_MOVE_MAP_BODY(double)                                                      \
    ATTR static void mlsom_move_map_f_##SUFFIX MLSOM_MOVE_MAP_ARGS(float)                \
        MLSOM_MOVE_MAP_BODY(float)                                                       \
    ATTR static Py_ssize_t mlsom_nearest_below_d_##SUFFIX                                \
        MLSOM_NEAREST_BELOW_ARGS(double)                                                 \
            MLSOM_NEAREST_BELOW_BODY_PATH(double, MLSOM_GV_D_##SUFFIX)                   \
    ATTR static Py_ssize_t mlsom_nearest_below_f_##SUFFIX                                \
        MLSOM_NEAREST_BELOW_ARGS(float)                                                  \
            MLSOM_NEAREST_BELOW_BODY_PATH(float, MLSOM_GV_F_##SUFFIX)

MLSOM_DEFINE_PATH(base, )
#ifdef MLSOM_X86_DISPATCH
MLSOM_DEFINE_PATH(avx2, __attribute__((target("avx2"))))
MLSOM_DEFINE_PATH(avx512, __attribute__((target("avx512f"))))
#endif

#ifdef MLSOM_X86_DISPATCH
#include <cpuid.h>

/* The processor's features, read with cpuid and xgetbv themselves: no compiler-runtime symbol
   (__cpu_model, __cpu_indicator_init) is needed, which some runtimes (Apple's, clang-cl's) lack.
   A vector level counts only where the operating system saves its registers (XCR0). Bits: Intel
   SDM vol. 2A, CPUID leaves 1 and 7; vol. 1, 13.3 (XCR0). */
static unsigned long long mlsom_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* 0 = baseline, 1 = AVX2 (with POPCNT), 2 = AVX-512F; *fma set where FMA is usable too */
static int mlsom_cpu_level(int *fma)
{
    unsigned int a, b, c, d;
    unsigned long long xcr0;
    int popcnt, level;
    *fma = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    popcnt = (c >> 23) & 1;
    /* AVX (bit 28) and OSXSAVE (bit 27), then the XMM and YMM state enabled by the system */
    if (!((c >> 28) & 1) || !((c >> 27) & 1))
        return 0;
    xcr0 = mlsom_xcr0();
    if ((xcr0 & 0x6) != 0x6)
        return 0;
    *fma = (c >> 12) & 1;
    if (__get_cpuid_max(0, 0) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if (!((b >> 5) & 1) || !popcnt) /* AVX2 */
        return 0;
    level = 1;
    /* AVX-512F (bit 16) and the opmask and ZMM state (XCR0 bits 5-7) */
    if (((b >> 16) & 1) && (xcr0 & 0xE0) == 0xE0)
        level = 2;
    return level;
}
#endif

/* 0 = baseline, 1 = AVX2, 2 = AVX-512F */
static int mlsom_simd_max_level(void)
{
#ifdef MLSOM_X86_DISPATCH
    int fma;
    return mlsom_cpu_level(&fma);
#else
    return 0;
#endif
}

/* ----------------------------------------------------------------------------- the dispatch */
/* Every kernel that has a version per SIMD path; the 64-row screens and the 16-row ranking are
 * on the AVX2 (with FMA) and AVX-512F levels only, NULL elsewhere (all or none). */
typedef struct {
    mlsom_screen_f_fn screen_f;
    mlsom_screen4_f_fn screen4_f;
    mlsom_group_sums_d_fn group_sums_d;
    mlsom_group_sums_f_fn group_sums_f;
    mlsom_combine_fn combine;
    mlsom_argmin_f_fn argmin_f;
    mlsom_count_lt_f_fn count_lt_f;
    mlsom_count_lt2_f_fn count_lt2_f;
    mlsom_gather_range_f_fn gather_range_f;
    mlsom_max_f_fn max_f;
    mlsom_count_maps_f_fn count_maps_f;
    mlsom_move_map_d_fn move_map_d;
    mlsom_move_map_f_fn move_map_f;
    mlsom_nearest_below_d_fn nearest_below_d;
    mlsom_nearest_below_f_fn nearest_below_f;
    /* training's 64-row screen (in place of the four-row one) */
    mlsom_screen64min_f_fn screen64min_f;
    /* frozen scoring 16 rows at a time */
    mlsom_screen64maps_f_fn screen64maps_f;
    mlsom_centre16_d_fn centre16_d;
    mlsom_centre16_f_fn centre16_f;
    mlsom_lanes_search_f_fn lanes_search_f;
    mlsom_lanes_window_f_fn lanes_window_f;
    mlsom_lanes_winner_fn lanes_winner;
} mlsom_kernels;

/* the plain-C bodies of path P (MLSOM_DEFINE_PATH) of the kernels that no level replaces by a
 * hand-written one */
#define MLSOM_PATH_KERNELS(P)                                                            \
    .screen_f = mlsom_screen_f_##P, .group_sums_d = mlsom_group_sums_d_##P,              \
    .group_sums_f = mlsom_group_sums_f_##P, .combine = mlsom_combine_##P,                \
    .argmin_f = mlsom_argmin_f_##P, .count_lt_f = mlsom_count_lt_f_##P,                  \
    .count_lt2_f = mlsom_count_lt2_f_##P, .count_maps_f = mlsom_count_maps_f_##P,        \
    .move_map_d = mlsom_move_map_d_##P, .move_map_f = mlsom_move_map_f_##P,              \
    .nearest_below_d = mlsom_nearest_below_d_##P, .nearest_below_f = mlsom_nearest_below_f_##P

/* one table per level (the kernels not named: NULL) */
static const mlsom_kernels mlsom_kernels_base = {
    MLSOM_PATH_KERNELS(base),
    .screen4_f = mlsom_screen4_f_base,
    .gather_range_f = mlsom_gather_range_f_base,
    .max_f = mlsom_max_f_base,
};
#ifdef MLSOM_X86_DISPATCH
/* AVX2 on a processor without FMA */
static const mlsom_kernels mlsom_kernels_avx2 = {
    MLSOM_PATH_KERNELS(avx2),
    .screen4_f = mlsom_screen4_f_avx2,
    .gather_range_f = mlsom_gather_range_f_avx2_mask,
    .max_f = mlsom_max_f_avx2_vec,
};
/* AVX2 with FMA */
static const mlsom_kernels mlsom_kernels_avx2_fma = {
    MLSOM_PATH_KERNELS(avx2),
    .screen4_f = mlsom_screen4_f_avx2_tile,
    .gather_range_f = mlsom_gather_range_f_avx2_mask,
    .max_f = mlsom_max_f_avx2_vec,
    .screen64min_f = mlsom_screen64min_f_avx2,
    .screen64maps_f = mlsom_screen64maps_f_avx2,
    .centre16_d = mlsom_centre16_d_avx2,
    .centre16_f = mlsom_centre16_f_avx2,
    .lanes_search_f = mlsom_lanes_search_f_avx2,
    .lanes_window_f = mlsom_lanes_window_f_avx2,
    .lanes_winner = mlsom_lanes_winner_avx2,
};
static const mlsom_kernels mlsom_kernels_avx512 = {
    MLSOM_PATH_KERNELS(avx512),
    .screen4_f = mlsom_screen4_f_avx512_tile,
    .gather_range_f = mlsom_gather_range_f_avx512_mask,
    .max_f = mlsom_max_f_avx512_mask,
    .screen64min_f = mlsom_screen64min_f_avx512,
    .screen64maps_f = mlsom_screen64maps_f_avx512,
    .centre16_d = mlsom_centre16_d_avx512,
    .centre16_f = mlsom_centre16_f_avx512,
    .lanes_search_f = mlsom_lanes_search_f_avx512,
    .lanes_window_f = mlsom_lanes_window_f_avx512,
    .lanes_winner = mlsom_lanes_winner_avx512,
};
#endif
#undef MLSOM_PATH_KERNELS

/* the selected level (0 = baseline, 1 = AVX2, 2 = AVX-512F) and its kernels */
static int mlsom_simd_level = 0;
static const mlsom_kernels *mlsom_k = &mlsom_kernels_base;

/* For the kernel benchmark (benchmarks/kernel_gains.py, through mlsom._testing): hand-written
 * kernels to replace by the plain-C body of the same path (its compiler-vectorised loop; the
 * smallest-two scan has one plain body, the baseline's; the 64-row training screen gives way to
 * the four-row one). 0 in production. */
enum {
    MLSOM_K_SCREEN4 = 1, MLSOM_K_MAX = 2, MLSOM_K_GATHER = 4, MLSOM_K_SCREEN64 = 8
};
static unsigned mlsom_plain = 0;

#ifdef MLSOM_X86_DISPATCH
/* the selected level's table with the replacements of mlsom_plain, where it has any */
static mlsom_kernels mlsom_kernels_plain;

#define MLSOM_USE_PLAIN(SUFFIX, MASK)                                                    \
    do {                                                                                 \
        mlsom_kernels *k_ = &mlsom_kernels_plain;                                        \
        if ((MASK) & MLSOM_K_SCREEN4) k_->screen4_f = mlsom_screen4_f_##SUFFIX;          \
        if ((MASK) & MLSOM_K_MAX) k_->max_f = mlsom_max_f_##SUFFIX;                      \
        if ((MASK) & MLSOM_K_GATHER) k_->gather_range_f = mlsom_gather_range_f_##SUFFIX; \
        if ((MASK) & MLSOM_K_SCREEN64) k_->screen64min_f = NULL;                         \
    } while (0)
#endif

/* Select a level's table; a level above what the processor supports is lowered. Returns the
 * level used. */
static int mlsom_set_simd_level(int level)
{
    const mlsom_kernels *t = &mlsom_kernels_base;
    int top = mlsom_simd_max_level();
    if (level < 0 || level > top) level = top;
    mlsom_simd_level = level;
#ifdef MLSOM_X86_DISPATCH
    if (level == 1) {
        int fma;
        mlsom_cpu_level(&fma);
        t = fma ? &mlsom_kernels_avx2_fma : &mlsom_kernels_avx2;
    }
    if (level == 2) t = &mlsom_kernels_avx512;
    if (mlsom_plain && level > 0) {
        mlsom_k = t; /* not the copy while it changes */
        mlsom_kernels_plain = *t;
        if (level == 1) MLSOM_USE_PLAIN(avx2, mlsom_plain);
        if (level == 2) MLSOM_USE_PLAIN(avx512, mlsom_plain);
        t = &mlsom_kernels_plain;
    }
#endif
    mlsom_k = t;
    return level;
}

static const char *mlsom_simd_name(int level)
{
    switch (level) {
    case 1: return "avx2";
    case 2: return "avx512f";
    default:
#if defined(__aarch64__) || defined(_M_ARM64)
        return "baseline (neon)";
#elif defined(__x86_64__) || defined(_M_X64)
        return "baseline (sse2)";
#else
        return "baseline";
#endif
    }
}

static int mlsom_have_openmp(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

/* Fork safety. GCC's OpenMP runtime (libgomp, which the Linux wheels bundle) keeps its pool of
   threads across fork() although the child has none of them: a parallel region of more than one
   thread in the child then waits for them forever. So once this process has asked for more than
   one thread (mlsom_threads_used), a child forked after that runs every region on one thread
   (mlsom_forked_serial, set by the pthread_atfork handler), with the same results, since the
   core's results do not depend on the thread count. A child forked before any parallel region
   keeps its threads: its runtime has no pool yet. */
#if defined(_OPENMP) && !defined(_WIN32)
#include <pthread.h>
#define MLSOM_FORK_GUARD 1
#endif
static volatile int mlsom_threads_used = 0;
static volatile int mlsom_forked_serial = 0;
/* set once at import where the OpenMP settings would end the process at a thread's start
   (mlsom._config: a thread stack larger than the process can map) */
static volatile int mlsom_settings_serial = 0;

static void mlsom_after_fork_in_child(void)
{
    if (mlsom_threads_used)
        mlsom_forked_serial = 1;
}

/* Registers the fork handler (once, at import); 0 on success or where there is no fork. */
static int mlsom_register_fork_guard(void)
{
#ifdef MLSOM_FORK_GUARD
    return pthread_atfork(NULL, NULL, mlsom_after_fork_in_child);
#else
    return 0;
#endif
}

/* The most threads the core starts for one call: the processors OpenMP may use (one without
   OpenMP, one in a child forked after this process used threads: see the fork guard above, and
   one where mlsom_settings_serial is set) */
static int mlsom_thread_cap(void)
{
#ifdef _OPENMP
    int cap = mlsom_forked_serial || mlsom_settings_serial ? 1 : omp_get_num_procs();
    return cap < 1 ? 1 : cap;
#else
    return 1;
#endif
}

/* n_threads clamped to [1, mlsom_thread_cap()], for a call about to start its parallel regions:
   whatever a caller asks for, the core never starts more threads than that */
static int mlsom_cap_threads(long long n_threads)
{
    long long cap = mlsom_thread_cap();
    int n = (int)(n_threads < 1 ? 1 : n_threads > cap ? cap : n_threads);
    if (n > 1 && !mlsom_threads_used)
        mlsom_threads_used = 1;
    return n;
}

#endif /* MLSOM_KERNELS_H */
