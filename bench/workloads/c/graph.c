/* C baseline of bench/workloads/graph.tern (same operations); with
 * -DEXACT_GROWTH, of its graph-exact form (every list grown by one element). */
#include "common.h"

static inline void push(slice *s, int64_t *n, int64_t to) {
#ifdef EXACT_GROWTH
    *s = s_append(*s, mk(to));
#else
    if (*n == s->len) *s = s_resize(*s, 2 * *n + 4);
    s->p[*n] = mk(to);
#endif
    (*n)++;
}

int main(void) {
    const int64_t V = PARAM;
    slice *lists = calloc((size_t)V, sizeof(slice));
    int64_t *counts = calloc((size_t)V, sizeof(int64_t));
    int64_t *dist = malloc((size_t)V * sizeof(int64_t));
    int64_t *queue = calloc((size_t)V, sizeof(int64_t));
    if (!lists || !counts || !dist || !queue) fail("graph");
    seed = 777;
    for (int64_t e = 0; e < N_OPS; e++) {
        int64_t a = lcg() % V;
        int64_t b = lcg() % V;
        push(&lists[a], &counts[a], b);
        push(&lists[b], &counts[b], a);
    }
    const int64_t unit = val(mk(1));
    for (int64_t v = 0; v < V; v++) dist[v] = -1;
    int64_t head = 0, tail = 1;
    dist[0] = 0;
    int64_t sum = 0;
    while (head < tail) {
        int64_t v = queue[head++];
        sum += dist[v] * (v + 1);
        for (int64_t k = 0; k < counts[v]; k++) {
            int64_t w = val(lists[v].p[k]) / unit;
            if (dist[w] < 0) {
                dist[w] = dist[v] + 1;
                queue[tail++] = w;
            }
        }
    }
    printf("%lld\n", (long long)(sum + tail));
    for (int64_t v = 0; v < V; v++) s_free(lists[v]);
    free(lists);
    free(counts);
    free(dist);
    free(queue);
    return 0;
}
