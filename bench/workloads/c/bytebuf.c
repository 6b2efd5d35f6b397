/* C baseline of bench/workloads/bytebuf.tern (same operations). */
#include "common.h"
#define STR PARAM

typedef struct { uint8_t *p; int64_t len; } bytes;

static bytes exercise(bytes b, int64_t n, int64_t need) {
    if (need > b.len - n) {
        int64_t want = 2 * b.len + 64;
        if (want < n + need) want = n + need;
        uint8_t *p = realloc(b.p, (size_t)want);
        if (!p) fail("bytebuf");
        memset(p + b.len, 0, (size_t)(want - b.len));
        b.p = p;
        b.len = want;
    }
    return b;
}

int main(void) {
    uint8_t *text = calloc(STR, 1);
    if (!text) fail("bytebuf");
    for (int64_t k = 0; k < STR; k++) text[k] = (uint8_t)(97 + k % 26);
    bytes buf = {NULL, 0};
    int64_t n = 0;
    seed = 99;
    for (int64_t r = 0; r < N_OPS; r++) {
        int64_t v = lcg();
        int64_t s = (int64_t)seed;
        buf = exercise(buf, n, 20 + STR);
        int64_t x = r;
        while (x >= 128) {
            buf.p[n++] = (uint8_t)((x & 127) | 128);
            x >>= 7;
        }
        buf.p[n++] = (uint8_t)x;
        x = v;
        while (x >= 128) {
            buf.p[n++] = (uint8_t)((x & 127) | 128);
            x >>= 7;
        }
        buf.p[n++] = (uint8_t)x;
        for (int k = 0; k < 8; k++) buf.p[n + k] = (uint8_t)(s >> (8 * k));
        n += 8;
        for (int64_t k = 0; k < STR; k++) buf.p[n + k] = text[(k + r) % STR];
        n += STR;
    }
    int64_t pos = 0;
    uint64_t sum = 0;
    for (int64_t r = 0; r < N_OPS; r++) {
        for (int64_t field = 0; field < 2; field++) {
            int64_t x = 0;
            int shift = 0;
            while (buf.p[pos] >= 128) {
                x |= ((int64_t)(buf.p[pos] & 127)) << shift;
                shift += 7;
                pos++;
            }
            x |= ((int64_t)buf.p[pos]) << shift;
            pos++;
            sum = sum * 31 + (uint64_t)x + (uint64_t)field;
        }
        uint64_t fixed = 0;
        for (int k = 0; k < 8; k++) fixed |= ((uint64_t)buf.p[pos + k]) << (8 * k);
        pos += 8;
        sum ^= fixed;
        for (int64_t k = 0; k < STR; k++) sum += (uint64_t)buf.p[pos + k] * (uint64_t)(k + 1);
        pos += STR;
    }
    printf("%lld\n", (long long)(sum + (uint64_t)n));
    free(buf.p);
    free(text);
    return 0;
}
