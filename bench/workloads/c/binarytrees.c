/* C baseline of bench/workloads/binarytrees.tern (same operations). */
#include "common.h"

static slice *long_lived, *nodes;

static slice exercise(int64_t left, int64_t right) {
    slice s = s_alloc(2);
    s.p[0] = mk(left);
    s.p[1] = mk(right);
    return s;
}

static int64_t build(slice *table, int64_t *next, int64_t depth) {
    int64_t at = (*next)++;
    int64_t left = 0, right = 0;
    if (depth > 0) {
        left = build(table, next, depth - 1) + 1;
        right = build(table, next, depth - 1) + 1;
    }
    table[at] = exercise(left, right);
    return at;
}

static int64_t check(slice *table, int64_t root, int64_t unit) {
    slice s = table[root];
    int64_t left = val(s.p[0]) / unit;
    if (left == 0) return 1;
    return 1 + check(table, left - 1, unit) + check(table, val(s.p[1]) / unit - 1, unit);
}

int main(void) {
    const int64_t unit = val(mk(1));
    const int64_t max_depth = PARAM;
    const int64_t most = ((int64_t)1 << (max_depth + 1)) - 1;
    long_lived = calloc((size_t)most, sizeof(slice));
    nodes = calloc((size_t)most, sizeof(slice));
    if (!long_lived || !nodes) fail("binarytrees");
    int64_t long_next = 0;
    int64_t long_root = build(long_lived, &long_next, max_depth);
    int64_t sum = 0;
    for (int64_t depth = 4; depth <= max_depth; depth += 2) {
        int64_t size = ((int64_t)1 << (depth + 1)) - 1;
        int64_t iterations = N_OPS / size;
        if (iterations < 1) iterations = 1;
        for (int64_t it = 0; it < iterations; it++) {
            int64_t next = 0;
            int64_t root = build(nodes, &next, depth);
            sum += check(nodes, root, unit) * (depth + 1);
            for (int64_t i = 0; i < next; i++) s_free(nodes[i]);
        }
    }
    sum += check(long_lived, long_root, unit);
    printf("%lld\n", (long long)sum);
    for (int64_t i = 0; i < long_next; i++) s_free(long_lived[i]);
    free(long_lived);
    free(nodes);
    return 0;
}
