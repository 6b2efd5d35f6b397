/* C baseline of bench/workloads/bignum.tern (same operations). */
#include "common.h"
#define BASE 10000

static inline slice push(slice s, int64_t n, int64_t limb) {
    if (n == s.len) s = s_resize(s, 2 * n + 4);
    s.p[n] = mk(limb);
    return s;
}

int main(void) {
    const int64_t unit = val(mk(1));
    slice limbs = push(s_alloc(0), 0, 1);
    int64_t n = 1;
    for (int64_t k = 2; k < N_OPS + 1; k++) {
        int64_t carry = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t x = val(limbs.p[i]) / unit * k + carry;
            limbs.p[i] = mk(x % BASE);
            carry = x / BASE;
        }
        while (carry > 0) {
            limbs = push(limbs, n, carry % BASE);
            n++;
            carry /= BASE;
        }
    }
    uint64_t sum = (uint64_t)n;
    for (int64_t i = 0; i < n; i++) sum = sum * 31 + (uint64_t)(val(limbs.p[i]) / unit);
    printf("%lld\n", (long long)sum);
    s_free(limbs);
    return 0;
}
