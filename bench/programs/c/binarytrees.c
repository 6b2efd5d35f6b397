/* binarytrees: the Computer Language Benchmarks Game "binary-trees"
 * (https://benchmarksgame-team.pages.debian.net/benchmarksgame/, the plain
 * C program binarytrees.gcc: malloc per node, recursive item check, recursive
 * free). Complete binary trees are built bottom-up, checked (a tree of depth d
 * has 2^(d+1)-1 nodes) and freed: one stretch tree of depth MAX_DEPTH+1, one
 * long-lived tree of depth MAX_DEPTH kept throughout, and 2^(MAX_DEPTH-d+4)
 * trees of each depth d = 4, 6, ..., MAX_DEPTH.
 * Published answer: the site's binarytrees-output.txt is the output for max
 * depth 10 (stretch 4095, ..., long lived 2047); we run max depth 15 (depth 16
 * takes about 0.6 s in C, too long for one repetition), whose output by the
 * same program and formula is:
 *   stretch tree of depth 16	 check: 131071
 *   32768	 trees of depth 4	 check: 1015808
 *   8192	 trees of depth 6	 check: 1040384
 *   2048	 trees of depth 8	 check: 1046528
 *   512	 trees of depth 10	 check: 1048064
 *   128	 trees of depth 12	 check: 1048448
 *   32	 trees of depth 14	 check: 1048544
 *   long lived tree of depth 15	 check: 65535
 * Each of REPS repetitions runs the whole program and is checked against
 * these; the lines are printed once, at the end, then "binarytrees: ok".
 * C twin of bench/programs/binarytrees.tern (same algorithm, same output). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 2
#endif

#define MIN_DEPTH 4
#define MAX_DEPTH 15
#define LINES (2 + (MAX_DEPTH - MIN_DEPTH) / 2 + 1)

/* The check of each output line, in order: stretch, depths 4..14, long lived. */
static const int64_t EXPECTED[LINES] = {
    131071, 1015808, 1040384, 1046528, 1048064, 1048448, 1048544, 65535,
};

typedef struct Node {
    struct Node *left;
    struct Node *right;
} Node;

static Node *new_node(Node *left, Node *right) {
    Node *n = malloc(sizeof(Node));
    if (!n) { fputs("binarytrees: out of memory\n", stderr); exit(2); }
    n->left = left;
    n->right = right;
    return n;
}

/* Children first, then their parent, as the original builds it. */
static Node *bottom_up_tree(int64_t depth) {
    if (depth > 0) {
        Node *left = bottom_up_tree(depth - 1);
        Node *right = bottom_up_tree(depth - 1);
        return new_node(left, right);
    }
    return new_node(NULL, NULL);
}

static int64_t item_check(const Node *tree) {
    if (tree->left == NULL) return 1;
    return 1 + item_check(tree->left) + item_check(tree->right);
}

static void delete_tree(Node *tree) {
    if (tree->left != NULL) {
        delete_tree(tree->left);
        delete_tree(tree->right);
    }
    free(tree);
}

/* One run of the original program: the check of each output line into `checks`. */
static void run(int64_t checks[LINES]) {
    int64_t line = 0;
    Node *stretch = bottom_up_tree(MAX_DEPTH + 1);
    checks[line++] = item_check(stretch);
    delete_tree(stretch);

    Node *long_lived = bottom_up_tree(MAX_DEPTH);
    for (int64_t depth = MIN_DEPTH; depth <= MAX_DEPTH; depth += 2) {
        int64_t iterations = (int64_t)1 << (MAX_DEPTH - depth + MIN_DEPTH);
        int64_t check = 0;
        for (int64_t i = 1; i <= iterations; i++) {
            Node *tree = bottom_up_tree(depth);
            check += item_check(tree);
            delete_tree(tree);
        }
        checks[line++] = check;
    }
    checks[line++] = item_check(long_lived);
    delete_tree(long_lived);
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t checks[LINES];
    int64_t failures = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        run(checks);
        for (int64_t i = 0; i < LINES; i++) {
            if (checks[i] != EXPECTED[i]) failures++;
        }
    }
    /* The original's output, from the last repetition. */
    int64_t line = 0;
    printf("stretch tree of depth %d\t check: %lld\n", MAX_DEPTH + 1, (long long)checks[line++]);
    for (int64_t depth = MIN_DEPTH; depth <= MAX_DEPTH; depth += 2) {
        int64_t iterations = (int64_t)1 << (MAX_DEPTH - depth + MIN_DEPTH);
        printf("%lld\t trees of depth %lld\t check: %lld\n", (long long)iterations,
               (long long)depth, (long long)checks[line++]);
    }
    printf("long lived tree of depth %d\t check: %lld\n", MAX_DEPTH, (long long)checks[line++]);
    if (failures > 0) {
        printf("binarytrees: wrong checks, FAILED\n");
        return 1;
    }
    printf("binarytrees: ok\n");
    return 0;
}
