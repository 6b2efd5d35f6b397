/* C baseline of benches/workloads/resize.tern (same operations). */
#include "common.h"
#define K 512

int main(void) {
    static slice slots[K];
    seed = 4242;
    for (int64_t k = 0; k < K; k++) slots[k] = s_alloc(lcg() % PARAM);
    for (int64_t i = 0; i < N_OPS; i++) {
        int64_t r = lcg();
        int64_t k = r % K;
        int64_t n = (r >> 10) % PARAM;
        slice s = s_resize(slots[k], n);
        if (n > 0) s.p[n - 1] = mk(i);
        slots[k] = s;
    }
    printf("%lld\n", (long long)contents(slots, K, 0));
    for (int k = 0; k < K; k++) s_free(slots[k]);
    return 0;
}
