/* C baseline of bench/workloads/strings.tern (same operations; every string
 * freed, as the builtin side does). */
#include "common.h"
#define K 1000
#define STR PARAM

typedef struct { uint8_t *p; int64_t len; } bytes;

static bytes exercise(int64_t r, int64_t i) {
    int64_t n = STR - 7 + (r * 7 + i * 13) % 15;
    bytes s = {calloc((size_t)n, 1), n};
    if (!s.p) fail("strings");
    for (int64_t k = 0; k < n; k++) s.p[k] = (uint8_t)(97 + (i + k + r) % 26);
    return s;
}

int main(void) {
    static bytes keep[K];
    int64_t sum = 0;
    int64_t rounds = N_OPS / K;
    for (int64_t r = 0; r < rounds; r++) {
        for (int64_t i = 0; i < K; i++) keep[i] = exercise(r, i);
        for (int64_t i = 0; i < K; i++) {
            bytes s = keep[i];
            sum += s.len * 131 + s.p[0] + s.p[s.len - 1];
        }
        for (int64_t i = 0; i < K; i++) free(keep[i].p);
    }
    printf("%lld\n", (long long)sum);
    return 0;
}
