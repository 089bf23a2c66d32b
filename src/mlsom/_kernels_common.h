/*
 * What every kernel family of mlsom shares (_kernels.h and each _kernels_*.h include it): the
 * entry type, the restrict and x86 vector macros, and the kernels' signatures, each declared
 * once, as a macro of its parameter list (MLSOM_*_ARGS) that both the kernels' definitions and
 * their pointers' types (mlsom_*_fn) use. Cython sees the same signatures through _kernels.pxd.
 */
#ifndef MLSOM_KERNELS_COMMON_H
#define MLSOM_KERNELS_COMMON_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* a neuron and its (screening or exact) squared distance */
typedef struct {
    double d;
    Py_ssize_t j;
} mlsom_entry;

#if defined(_MSC_VER)
#define MLSOM_RESTRICT __restrict
#else
#define MLSOM_RESTRICT __restrict__
#endif

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
/* x86 with GCC or clang: every kernel is compiled for three paths (baseline, AVX2, AVX-512F)
 * and the hand-written AVX2 and AVX-512F kernels are there */
#define MLSOM_X86_DISPATCH 1
#include <immintrin.h>

/* the lanes of a block of 16 that hold values, when `left` values remain (all 16 from 16 on) */
static inline __mmask16 mlsom_mask16(Py_ssize_t left)
{
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* AVX2 compares and blends with compare vectors as masks (all ones: the lane is selected) */
#define MLSOM_AVX2_LT(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define MLSOM_AVX2_BLEND(a, b, m) _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m))
#define MLSOM_AVX2_BLENDI(a, b, m) _mm256_blendv_epi8(a, b, m)
#endif

/* ------------------------------------------------------------------- the kernels' signatures */
/* the kernels of every path (_kernels_screen.h, _kernels_sums.h, _kernels_search.h,
 * _kernels_moves.h, _kernels_guards.h) */
#define MLSOM_SCREEN_ARGS(T)                                                             \
    (const T *MLSOM_RESTRICT x2, const T *MLSOM_RESTRICT Wt, Py_ssize_t A, Py_ssize_t M, \
     T base, const T *MLSOM_RESTRICT ww, T *MLSOM_RESTRICT out)
#define MLSOM_SCREEN4_ARGS(T)                                                            \
    (const T *MLSOM_RESTRICT x2, const T *MLSOM_RESTRICT Ws, Py_ssize_t A, Py_ssize_t M,  \
     const T *MLSOM_RESTRICT base, const T *MLSOM_RESTRICT ww, T *MLSOM_RESTRICT out)
#define MLSOM_GROUP_SUMS_ARGS(T)                                                         \
    (const T *MLSOM_RESTRICT X, Py_ssize_t n, Py_ssize_t A, const int64_t *bmu,           \
     double *MLSOM_RESTRICT hi, double *MLSOM_RESTRICT lo, Py_ssize_t ld, Py_ssize_t v0,  \
     Py_ssize_t v1)
#define MLSOM_COMBINE_ARGS                                                               \
    (const double *MLSOM_RESTRICT hi, const double *MLSOM_RESTRICT lo, Py_ssize_t A,      \
     Py_ssize_t ld, const Py_ssize_t *v, const double *h, Py_ssize_t nv, int unit_weights, \
     double *MLSOM_RESTRICT out_hi, double *MLSOM_RESTRICT out_lo)
#define MLSOM_ARGMIN_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, double gap,        \
                              Py_ssize_t *n_cand)
#define MLSOM_COUNT_LT_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T t)
#define MLSOM_COUNT_LT2_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T t1, T t2,    \
                                 Py_ssize_t *c2)
#define MLSOM_GATHER_RANGE_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T a, T b,      \
                                    mlsom_entry *MLSOM_RESTRICT ent)
#define MLSOM_MAX_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, double *lo)
#define MLSOM_COUNT_MAPS_ARGS(T) (const T *MLSOM_RESTRICT d, const int64_t *off, Py_ssize_t L, \
                                 const uint8_t *skip, T t1, T t2, Py_ssize_t *c1,        \
                                 Py_ssize_t *c2)
#define MLSOM_MOVE_MAP_ARGS(T)                                                              \
    (T *MLSOM_RESTRICT wt, float *MLSOM_RESTRICT Ws, Py_ssize_t M, Py_ssize_t A,            \
     const T *MLSOM_RESTRICT x, const double *MLSOM_RESTRICT cc,                            \
     const float *MLSOM_RESTRICT xp, Py_ssize_t npend, const double *MLSOM_RESTRICT f,      \
     float *MLSOM_RESTRICT nr, float *MLSOM_RESTRICT g0, float *MLSOM_RESTRICT g1,          \
     float *MLSOM_RESTRICT g2, Py_ssize_t n, Py_ssize_t skip)
#define MLSOM_NEAREST_BELOW_ARGS(T)                                                         \
    (const T *MLSOM_RESTRICT x, const T *MLSOM_RESTRICT G, Py_ssize_t A, Py_ssize_t n,      \
     double *MLSOM_RESTRICT bound, int first)

/* the hand-written kernels of the AVX2 (with FMA) and AVX-512F paths only: the 64-row screens
 * (_kernels_screen.h) and the 16-row ranking (_kernels_lanes.h) */
#define MLSOM_SCREEN64MIN_ARGS                                                              \
    (const float *MLSOM_RESTRICT xb, const float *MLSOM_RESTRICT Ws, Py_ssize_t A,          \
     Py_ssize_t M, const float *MLSOM_RESTRICT base, const float *MLSOM_RESTRICT ww,        \
     float *MLSOM_RESTRICT gt, int32_t *idx, float *m1, float *m2)
#define MLSOM_SCREEN64MAPS_ARGS                                                             \
    (const float *MLSOM_RESTRICT xb, const float *MLSOM_RESTRICT Ws, Py_ssize_t A,          \
     Py_ssize_t M, const float *MLSOM_RESTRICT base, const float *MLSOM_RESTRICT ww,        \
     const int64_t *off, Py_ssize_t L, float *MLSOM_RESTRICT gt, float *m1, int32_t *i1,    \
     float *m2, float *hi)
#define MLSOM_CENTRE16_ARGS(T)                                                              \
    (const T *x, Py_ssize_t A, Py_ssize_t nr, const double *c, float *buf, float *xb,       \
     double *xx)
#define MLSOM_LANES_SEARCH_ARGS                                                             \
    (const float *MLSOM_RESTRICT g, const int64_t *off, Py_ssize_t L, const uint16_t *pool, \
     int32_t k, uint16_t act_in, int max_pass, float *fa_, int32_t *ca_, float *fb_,        \
     int32_t *cb_, float *ht, int32_t *hc, uint16_t *hv, int *nh, int h_max)
#define MLSOM_LANES_WINDOW_ARGS                                                             \
    (const float *MLSOM_RESTRICT g, const int64_t *off, Py_ssize_t L, const uint16_t *pool, \
     int32_t k, uint16_t act, const float *fa_, const int32_t *ca_, const float *fb_,       \
     const int32_t *cb_, float *vk_, float *vk1_, int32_t *votes, uint16_t *fm, int32_t *fj)
#define MLSOM_LANES_WINNER_ARGS                                                             \
    (const int32_t *votes, Py_ssize_t L, const uint16_t *pool, const float *m1,             \
     const float *gapf_, uint16_t act, int32_t *winner)

typedef void (*mlsom_screen_f_fn) MLSOM_SCREEN_ARGS(float);
typedef void (*mlsom_screen4_f_fn) MLSOM_SCREEN4_ARGS(float);
typedef void (*mlsom_group_sums_d_fn) MLSOM_GROUP_SUMS_ARGS(double);
typedef void (*mlsom_group_sums_f_fn) MLSOM_GROUP_SUMS_ARGS(float);
typedef void (*mlsom_combine_fn) MLSOM_COMBINE_ARGS;
typedef Py_ssize_t (*mlsom_argmin_f_fn) MLSOM_ARGMIN_ARGS(float);
typedef Py_ssize_t (*mlsom_count_lt_f_fn) MLSOM_COUNT_LT_ARGS(float);
typedef Py_ssize_t (*mlsom_count_lt2_f_fn) MLSOM_COUNT_LT2_ARGS(float);
typedef Py_ssize_t (*mlsom_gather_range_f_fn) MLSOM_GATHER_RANGE_ARGS(float);
typedef double (*mlsom_max_f_fn) MLSOM_MAX_ARGS(float);
typedef void (*mlsom_count_maps_f_fn) MLSOM_COUNT_MAPS_ARGS(float);
typedef void (*mlsom_move_map_d_fn) MLSOM_MOVE_MAP_ARGS(double);
typedef void (*mlsom_move_map_f_fn) MLSOM_MOVE_MAP_ARGS(float);
typedef Py_ssize_t (*mlsom_nearest_below_d_fn) MLSOM_NEAREST_BELOW_ARGS(double);
typedef Py_ssize_t (*mlsom_nearest_below_f_fn) MLSOM_NEAREST_BELOW_ARGS(float);
typedef void (*mlsom_screen64min_f_fn) MLSOM_SCREEN64MIN_ARGS;
typedef void (*mlsom_screen64maps_f_fn) MLSOM_SCREEN64MAPS_ARGS;
typedef void (*mlsom_centre16_d_fn) MLSOM_CENTRE16_ARGS(double);
typedef void (*mlsom_centre16_f_fn) MLSOM_CENTRE16_ARGS(float);
typedef uint16_t (*mlsom_lanes_search_f_fn) MLSOM_LANES_SEARCH_ARGS;
typedef Py_ssize_t (*mlsom_lanes_window_f_fn) MLSOM_LANES_WINDOW_ARGS;
typedef uint16_t (*mlsom_lanes_winner_fn) MLSOM_LANES_WINNER_ARGS;

#endif /* MLSOM_KERNELS_COMMON_H */
