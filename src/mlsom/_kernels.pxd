# The compiled kernels (_kernels.h) as the core sees them: their types, their signatures (one
# ctypedef per signature, the C one being _kernels_common.h's MLSOM_*_ARGS), the kernels of the
# selected SIMD level, the processor check, the dispatch and the thread cap. _core.pyx cimports
# it; only the build reads it (it declares C names only, so nothing is imported at run time).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t

cdef extern from "_kernels.h" nogil:
    ctypedef struct mlsom_entry:
        double d
        Py_ssize_t j

    # the kernels' signatures
    ctypedef void (*mlsom_screen_f_fn)(const float *x2, const float *Wt, Py_ssize_t A,
                                       Py_ssize_t M, float base, const float *ww,
                                       float *out) noexcept nogil
    ctypedef void (*mlsom_screen4_f_fn)(const float *x2, const float *Ws, Py_ssize_t A,
                                        Py_ssize_t M, const float *base, const float *ww,
                                        float *out) noexcept nogil
    ctypedef void (*mlsom_group_sums_d_fn)(const double *X, Py_ssize_t n, Py_ssize_t A,
                                           const int64_t *bmu, double *hi, double *lo,
                                           Py_ssize_t ld, Py_ssize_t v0,
                                           Py_ssize_t v1) noexcept nogil
    ctypedef void (*mlsom_group_sums_f_fn)(const float *X, Py_ssize_t n, Py_ssize_t A,
                                           const int64_t *bmu, double *hi, double *lo,
                                           Py_ssize_t ld, Py_ssize_t v0,
                                           Py_ssize_t v1) noexcept nogil
    ctypedef void (*mlsom_combine_fn)(const double *hi, const double *lo, Py_ssize_t A,
                                      Py_ssize_t ld, const Py_ssize_t *v, const double *h,
                                      Py_ssize_t nv, int unit_weights, double *out_hi,
                                      double *out_lo) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_argmin_f_fn)(const float *d, Py_ssize_t n, double gap,
                                             Py_ssize_t *n_cand) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_count_lt_f_fn)(const float *d, Py_ssize_t n,
                                               float t) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_count_lt2_f_fn)(const float *d, Py_ssize_t n, float t1,
                                                float t2, Py_ssize_t *c2) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_gather_range_f_fn)(const float *d, Py_ssize_t n, float a,
                                                   float b, mlsom_entry *ent) noexcept nogil
    ctypedef double (*mlsom_max_f_fn)(const float *d, Py_ssize_t n, double *lo) noexcept nogil
    ctypedef void (*mlsom_count_maps_f_fn)(const float *d, const int64_t *off, Py_ssize_t L,
                                           const uint8_t *skip, float t1, float t2,
                                           Py_ssize_t *c1, Py_ssize_t *c2) noexcept nogil
    ctypedef void (*mlsom_move_map_d_fn)(double *wt, float *Ws, Py_ssize_t M, Py_ssize_t A,
                                         const double *x, const double *cc, const float *xp,
                                         Py_ssize_t npend, const double *f, float *nr,
                                         float *g0, float *g1, float *g2, Py_ssize_t n,
                                         Py_ssize_t skip) noexcept nogil
    ctypedef void (*mlsom_move_map_f_fn)(float *wt, float *Ws, Py_ssize_t M, Py_ssize_t A,
                                         const float *x, const double *cc, const float *xp,
                                         Py_ssize_t npend, const double *f, float *nr,
                                         float *g0, float *g1, float *g2, Py_ssize_t n,
                                         Py_ssize_t skip) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_nearest_below_d_fn)(const double *x, const double *G,
                                                    Py_ssize_t A, Py_ssize_t n, double *bound,
                                                    int first) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_nearest_below_f_fn)(const float *x, const float *G,
                                                    Py_ssize_t A, Py_ssize_t n, double *bound,
                                                    int first) noexcept nogil
    ctypedef void (*mlsom_screen64min_f_fn)(const float *xb, const float *Ws, Py_ssize_t A,
                                            Py_ssize_t M, const float *base, const float *ww,
                                            float *gt, int32_t *idx, float *m1,
                                            float *m2) noexcept nogil
    ctypedef void (*mlsom_screen64maps_f_fn)(const float *xb, const float *Ws, Py_ssize_t A,
                                             Py_ssize_t M, const float *base, const float *ww,
                                             const int64_t *off, Py_ssize_t L, float *gt,
                                             float *m1, int32_t *i1, float *m2,
                                             float *hi) noexcept nogil
    ctypedef void (*mlsom_centre16_d_fn)(const double *x, Py_ssize_t A, Py_ssize_t nr,
                                         const double *c, float *buf, float *xb,
                                         double *xx) noexcept nogil
    ctypedef void (*mlsom_centre16_f_fn)(const float *x, Py_ssize_t A, Py_ssize_t nr,
                                         const double *c, float *buf, float *xb,
                                         double *xx) noexcept nogil
    ctypedef uint16_t (*mlsom_lanes_search_f_fn)(const float *g, const int64_t *off,
                                                 Py_ssize_t L, const uint16_t *pool, int32_t k,
                                                 uint16_t act, int max_pass, float *fa,
                                                 int32_t *ca, float *fb, int32_t *cb, float *ht,
                                                 int32_t *hc, uint16_t *hv, int *nh,
                                                 int h_max) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_lanes_window_f_fn)(const float *g, const int64_t *off,
                                                   Py_ssize_t L, const uint16_t *pool, int32_t k,
                                                   uint16_t act, const float *fa,
                                                   const int32_t *ca, const float *fb,
                                                   const int32_t *cb, float *vk, float *vk1,
                                                   int32_t *votes, uint16_t *fm,
                                                   int32_t *fj) noexcept nogil
    ctypedef uint16_t (*mlsom_lanes_winner_fn)(const int32_t *votes, Py_ssize_t L,
                                               const uint16_t *pool, const float *m1,
                                               const float *gapf, uint16_t act,
                                               int32_t *winner) noexcept nogil

    # The kernels of the selected SIMD level: the fields of its table (mlsom_k, which
    # mlsom_set_simd_level points at one table per level). The 64-row screens and the 16-row
    # ranking are NULL on the levels without them.
    mlsom_screen_f_fn mlsom_screen_f "mlsom_k->screen_f"
    mlsom_screen4_f_fn mlsom_screen4_f "mlsom_k->screen4_f"
    mlsom_group_sums_d_fn mlsom_group_sums_d "mlsom_k->group_sums_d"
    mlsom_group_sums_f_fn mlsom_group_sums_f "mlsom_k->group_sums_f"
    mlsom_combine_fn mlsom_combine "mlsom_k->combine"
    mlsom_argmin_f_fn mlsom_argmin_f "mlsom_k->argmin_f"
    mlsom_count_lt_f_fn mlsom_count_lt_f "mlsom_k->count_lt_f"
    mlsom_count_lt2_f_fn mlsom_count_lt2_f "mlsom_k->count_lt2_f"
    mlsom_gather_range_f_fn mlsom_gather_range_f "mlsom_k->gather_range_f"
    mlsom_max_f_fn mlsom_max_f "mlsom_k->max_f"
    mlsom_count_maps_f_fn mlsom_count_maps_f "mlsom_k->count_maps_f"
    mlsom_move_map_d_fn mlsom_move_map_d "mlsom_k->move_map_d"
    mlsom_move_map_f_fn mlsom_move_map_f "mlsom_k->move_map_f"
    mlsom_nearest_below_d_fn mlsom_nearest_below_d "mlsom_k->nearest_below_d"
    mlsom_nearest_below_f_fn mlsom_nearest_below_f "mlsom_k->nearest_below_f"
    mlsom_screen64min_f_fn mlsom_screen64min_f "mlsom_k->screen64min_f"
    mlsom_screen64maps_f_fn mlsom_screen64maps_f "mlsom_k->screen64maps_f"
    mlsom_centre16_d_fn mlsom_centre16_d "mlsom_k->centre16_d"
    mlsom_centre16_f_fn mlsom_centre16_f "mlsom_k->centre16_f"
    mlsom_lanes_search_f_fn mlsom_lanes_search_f "mlsom_k->lanes_search_f"
    mlsom_lanes_window_f_fn mlsom_lanes_window_f "mlsom_k->lanes_window_f"
    mlsom_lanes_winner_fn mlsom_lanes_winner "mlsom_k->lanes_winner"

    # the kernels with one body for every path
    void mlsom_min2_f(const float *g, Py_ssize_t n, int32_t *idx, float *m1,
                      float *m2) noexcept nogil
    void mlsom_prefetch(const void *p, Py_ssize_t n) noexcept nogil
    Py_ssize_t mlsom_count_out_d(const double *x, Py_ssize_t n, double lim) noexcept nogil
    Py_ssize_t mlsom_count_out_f(const float *x, Py_ssize_t n, float lim) noexcept nogil

    # the processor check and the dispatch, with the test-only plain-kernel switches
    int mlsom_simd_level
    unsigned mlsom_plain
    enum:
        MLSOM_K_SCREEN4
        MLSOM_K_MAX
        MLSOM_K_GATHER
        MLSOM_K_SCREEN64
    int mlsom_simd_max_level() noexcept
    int mlsom_set_simd_level(int level) noexcept
    const char *mlsom_simd_name(int level) noexcept

    # OpenMP, the thread cap and the fork guard
    int mlsom_have_openmp() noexcept
    int mlsom_cap_threads(long long n_threads) noexcept nogil
    int mlsom_thread_cap() noexcept nogil
    int mlsom_register_fork_guard() noexcept
    void mlsom_after_fork_in_child() noexcept
    int mlsom_forked_serial
    int mlsom_settings_serial
