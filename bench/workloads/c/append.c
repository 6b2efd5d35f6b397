/* C baseline of benches/workloads/append.tern (same operations). */
#include "common.h"
#define K 256

int main(void) {
    static slice slots[K];
    seed = 12345;
    uint64_t retired = 0;
    int64_t i = 0;
    while (i < N_OPS) {
        int64_t r = lcg();
        int64_t k = r % K;
        int64_t burst = 1 + (r >> 12) % 4;
        slice s = slots[k];
        for (int64_t b = 0; b < burst; b++) {
            if (s.len == PARAM) {
                retired += (uint64_t)val(s.p[PARAM - 1]);
                s_free(s);
                s = s_alloc(0);
            }
            s = s_append(s, mk(i + b));
        }
        slots[k] = s;
        i += burst;
    }
    printf("%lld\n", (long long)contents(slots, K, retired));
    for (int k = 0; k < K; k++) s_free(slots[k]);
    return 0;
}
