/* C baseline of benches/workloads/fragmented.tern (same operations). */
#include "common.h"
#define K 1024

int main(void) {
    static slice slots[K];
    seed = 777;
    for (int64_t k = 0; k < K; k++) {
        int64_t n = 1 + lcg() % PARAM;
        slice s = s_alloc(n);
        s.p[0] = mk(k);
        slots[k] = s;
    }
    for (int64_t round = 0; round < N_OPS; round++) {
        int64_t phase = round % 3;
        for (int64_t k = phase; k < K; k += 3) s_free(slots[k]);
        for (int64_t k = phase; k < K; k += 3) {
            int64_t n = 1 + lcg() % (2 * PARAM);
            slice s = s_alloc(n);
            s.p[n - 1] = mk(round + k);
            slots[k] = s;
        }
    }
    printf("%lld\n", (long long)contents(slots, K, 0));
    for (int k = 0; k < K; k++) s_free(slots[k]);
    return 0;
}
