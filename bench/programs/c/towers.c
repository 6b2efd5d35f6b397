/* are-we-fast-yet Towers (smarr/are-we-fast-yet: benchmarks/Java/src/Towers.java,
 * benchmarks/C++/src/towers.h): towers of Hanoi whose three piles are linked lists
 * of disk objects. buildTowerAt(0, 13) stacks disks 13, 12, ..., 0 on pile 0 (disk
 * objects allocated per iteration), moveDisks(13, 0, 1) moves the top 13 of them;
 * published answer (verifyResult): 8191 moves (2^13 - 1).
 * C port of the C++ version: each disk malloc'ed, freed at the end of the iteration. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 8000
#endif
#define EXPECTED 8191

typedef struct TowersDisk {
    int32_t size;
    struct TowersDisk *next;
} TowersDisk;

static TowersDisk *piles[3];
static int32_t moves_done;

static void die(const char *msg) {
    fprintf(stderr, "%s\n", msg);
    exit(1);
}

static void push_disk(TowersDisk *disk, int32_t pile) {
    TowersDisk *top = piles[pile];
    if (top != NULL && disk->size >= top->size) die("Cannot put a big disk on a smaller one");
    disk->next = top;
    piles[pile] = disk;
}

static TowersDisk *pop_disk_from(int32_t pile) {
    TowersDisk *top = piles[pile];
    if (top == NULL) die("Attempting to remove a disk from an empty pile");
    piles[pile] = top->next;
    top->next = NULL;
    return top;
}

static void move_top_disk(int32_t from_pile, int32_t to_pile) {
    push_disk(pop_disk_from(from_pile), to_pile);
    moves_done += 1;
}

static void build_tower_at(int32_t pile, int32_t disks) {
    for (int32_t i = disks; i >= 0; i -= 1) {
        TowersDisk *disk = malloc(sizeof(TowersDisk));
        if (disk == NULL) die("out of memory");
        disk->size = i;
        disk->next = NULL;
        push_disk(disk, pile);
    }
}

static void move_disks(int32_t disks, int32_t from_pile, int32_t to_pile) {
    if (disks == 1) {
        move_top_disk(from_pile, to_pile);
    } else {
        int32_t other_pile = (3 - from_pile) - to_pile;
        move_disks(disks - 1, from_pile, other_pile);
        move_top_disk(from_pile, to_pile);
        move_disks(disks - 1, other_pile, to_pile);
    }
}

static int32_t benchmark(void) {
    piles[0] = piles[1] = piles[2] = NULL;
    build_tower_at(0, 13);
    moves_done = 0;
    move_disks(13, 0, 1);
    /* The C++ destructors delete each pile's chain of disks. */
    for (int p = 0; p < 3; p++) {
        TowersDisk *d = piles[p];
        while (d != NULL) {
            TowersDisk *next = d->next;
            free(d);
            d = next;
        }
    }
    return moves_done;
}

int main(void) {
    /* Every repetition is verified, as the AWFY harness's inner loop does. */
    int64_t failures = 0;
    int32_t result = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        result = benchmark();
        if (result != EXPECTED) failures += 1;
    }
    if (failures != 0) {
        printf("towers: wrong result %d expected %d\n", result, EXPECTED);
        return 1;
    }
    printf("towers: %d moves, ok\n", result);
    return 0;
}
