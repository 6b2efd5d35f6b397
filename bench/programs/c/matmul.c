/* matmul: the dense integer matrix product C = A * B of two 128 x 128
 * matrices, in the i-k-j loop order every textbook cache-aware version uses
 * (a row of C accumulates a row of B scaled by one entry of A), the kernel
 * of the matrix benchmarks of most suites. Integers, as in the Tern
 * version: A and B are filled from a linear congruential generator with
 * entries in [-100, 100], and each repetition feeds C back into A (reduced
 * to the same range) so no repetition repeats another.
 * Verified by an identity instead of a recorded answer: the sum of C's
 * entries equals the sum over k of (column k of A's sum) times (row k of
 * B's sum), and one entry is recomputed as a plain dot product.
 * C twin of bench/programs/matmul.tern (same loops, same output). */
#include <stdint.h>
#include <stdio.h>

#ifndef REPS
#define REPS 400
#endif

#define N 128

static uint64_t state = 42;

static int64_t next(void) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int64_t)((state >> 33) % 201) - 100;
}

static void fill(int64_t m[N][N]) {
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) m[i][j] = next();
}

static void multiply(int64_t a[N][N], int64_t b[N][N], int64_t c[N][N]) {
    for (int64_t i = 0; i < N; i++) {
        for (int64_t j = 0; j < N; j++) c[i][j] = 0;
        for (int64_t k = 0; k < N; k++) {
            int64_t aik = a[i][k];
            for (int64_t j = 0; j < N; j++) c[i][j] += aik * b[k][j];
        }
    }
}

/* Whether C = A * B passes the sum identity and the dot product at (r, s). */
static int verified(int64_t a[N][N], int64_t b[N][N], int64_t c[N][N], int64_t r, int64_t s) {
    int64_t total = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) total += c[i][j];
    int64_t expected = 0;
    for (int64_t k = 0; k < N; k++) {
        int64_t col = 0, row = 0;
        for (int64_t i = 0; i < N; i++) {
            col += a[i][k];
            row += b[k][i];
        }
        expected += col * row;
    }
    int64_t dot = 0;
    for (int64_t k = 0; k < N; k++) dot += a[r][k] * b[k][s];
    return total == expected && dot == c[r][s];
}

static int64_t a[N][N], b[N][N], c[N][N];

int main(void) {
    fill(a);
    fill(b);
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        multiply(a, b, c);
        if (!verified(a, b, c, rep % N, (rep * 7) % N)) failures++;
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < N; j++) a[i][j] = c[i][j] % 101;
    }
    if (failures > 0) {
        printf("matmul: wrong product in %lld repetitions, FAILED\n", (long long)failures);
        return 1;
    }
    printf("matmul: 128x128 products verified, ok\n");
    return 0;
}
