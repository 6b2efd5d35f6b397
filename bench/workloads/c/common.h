/* Shared by the C baselines of `tern bench`: the element type, the LCG and
 * the slice operations with malloc/realloc/free. Built with
 * `cc -O2 -DELEM_BYTES=8|128 -DN_OPS=... -DPARAM=...`.
 * Semantics follow the Tern side exactly where the checksum can see them:
 * allocation and growth zero-fill, length 0 owns no memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ELEM_BYTES == 8
typedef int64_t elem;
static inline elem mk(int64_t x) { return x; }
static inline int64_t val(elem e) { return e; }
#elif ELEM_BYTES == 128
typedef struct { int64_t w[16]; } elem;
static inline elem mk(int64_t x) {
    elem e;
    for (int i = 0; i < 16; i++) e.w[i] = x;
    e.w[15] = x * 3;
    return e;
}
static inline int64_t val(elem e) { return e.w[0] + e.w[15]; }
#else
#error "ELEM_BYTES must be 8 or 128"
#endif

typedef struct { elem *p; int64_t len; } slice;

static uint64_t seed;
/* The Tern side's `seed = seed * A + C; r = (seed >> 33) & 0x7fffffff`. */
static inline int64_t lcg(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((int64_t)seed >> 33) & 0x7fffffff;
}

static void fail(const char *what) {
    fprintf(stderr, "error: out of memory in %s\n", what);
    exit(101);
}

static inline slice s_alloc(int64_t n) {
    slice s = {NULL, n};
    if (n > 0 && !(s.p = calloc((size_t)n, sizeof(elem)))) fail("alloc");
    return s;
}

static inline slice s_resize(slice s, int64_t n) {
    if (n == 0) {
        free(s.p);
        return (slice){NULL, 0};
    }
    elem *p = realloc(s.p, (size_t)n * sizeof(elem));
    if (!p) fail("resize");
    if (n > s.len) memset(p + s.len, 0, (size_t)(n - s.len) * sizeof(elem));
    return (slice){p, n};
}

static inline slice s_append(slice s, elem v) {
    s = s_resize(s, s.len + 1);
    s.p[s.len - 1] = v;
    return s;
}

static inline void s_free(slice s) { free(s.p); }

/* Contents checksum, the first line every side prints. */
static uint64_t contents(slice *slots, int64_t k_count, uint64_t sum) {
    for (int64_t k = 0; k < k_count; k++)
        for (int64_t j = 0; j < slots[k].len; j++)
            sum += (uint64_t)val(slots[k].p[j]) * (uint64_t)(k + 1);
    return sum;
}
