/* queens: the "are we fast yet" benchmark Queens (smarr/are-we-fast-yet,
 * benchmarks/Java/src/Queens.java), a port of the SOM class library's version:
 * place 8 queens on a chessboard by backtracking, column by column, over
 * boolean arrays of free rows (8), free diagonals (freeMaxs, 16, index c+r)
 * and free anti-diagonals (freeMins, 16, index c-r+7), recording each row's
 * queen in queenRows. One benchmark() solves it 10 times, each with fresh
 * arrays. Published answer (Queens.verifyResult): true (a solution found).
 * C twin of bench/programs/queens.tern (same algorithm, same output). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 18000
#endif

/* The original's object state: four arrays, allocated anew by each queens(). */
typedef struct {
    bool *free_rows;
    bool *free_maxs;
    bool *free_mins;
    int64_t *queen_rows;
} Queens;

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) { fputs("queens: out of memory\n", stderr); exit(2); }
    return p;
}

static bool get_row_column(Queens *q, int64_t r, int64_t c) {
    return q->free_rows[r] && q->free_maxs[c + r] && q->free_mins[c - r + 7];
}

static void set_row_column(Queens *q, int64_t r, int64_t c, bool v) {
    q->free_rows[r] = v;
    q->free_maxs[c + r] = v;
    q->free_mins[c - r + 7] = v;
}

static bool place_queen(Queens *q, int64_t c) {
    for (int64_t r = 0; r < 8; r++) {
        if (get_row_column(q, r, c)) {
            q->queen_rows[r] = c;
            set_row_column(q, r, c, false);
            if (c == 7) {
                return true;
            }
            if (place_queen(q, c + 1)) {
                return true;
            }
            set_row_column(q, r, c, true);
        }
    }
    return false;
}

/* Arrays.fill(..., v) of the original. */
static void fill_bools(bool *xs, int64_t n, bool v) {
    for (int64_t i = 0; i < n; i++) xs[i] = v;
}

static bool queens(void) {
    Queens q;
    q.free_rows = xmalloc(8 * sizeof(bool));
    q.free_maxs = xmalloc(16 * sizeof(bool));
    q.free_mins = xmalloc(16 * sizeof(bool));
    q.queen_rows = xmalloc(8 * sizeof(int64_t));
    fill_bools(q.free_rows, 8, true);
    fill_bools(q.free_maxs, 16, true);
    fill_bools(q.free_mins, 16, true);
    for (int64_t i = 0; i < 8; i++) q.queen_rows[i] = -1;

    bool result = place_queen(&q, 0);

    free(q.free_rows);
    free(q.free_maxs);
    free(q.free_mins);
    free(q.queen_rows);
    return result;
}

static bool benchmark(void) {
    bool result = true;
    for (int64_t i = 0; i < 10; i++) {
        result = result && queens();
    }
    return result;
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        if (!benchmark()) {
            failures++;
        }
    }
    if (failures > 0) {
        printf("queens: no solution found, FAILED\n");
        return 1;
    }
    printf("queens: 8 queens placed, ok\n");
    return 0;
}
