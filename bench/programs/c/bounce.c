/* are-we-fast-yet Bounce (smarr/are-we-fast-yet: benchmarks/Java/src/Bounce.java,
 * benchmarks/C++/src/bounce.h, som/Random): 100 balls placed and launched with
 * the AWFY Random (seed 74755, `seed = ((seed * 1309) + 13849) & 65535`), then
 * 50 steps in which every ball moves and bounces off the walls of a 500x500
 * box, all in integer arithmetic; published answer (verifyResult): 1331 bounces.
 * C port of the C++ version: the balls are structs in a local array. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 20000
#endif
#define EXPECTED 1331
#define BALL_COUNT 100

typedef struct { int32_t seed; } Random;

/* The Random's initial seed, read through a volatile: without it benchmark() is a
 * pure function and cc -O2 computes it once for all REPS repetitions. */
static volatile int32_t initial_seed = 74755;

static int32_t next(Random *r) {
    r->seed = ((r->seed * 1309) + 13849) & 65535;
    return r->seed;
}

typedef struct {
    int32_t x, y, x_vel, y_vel;
} Ball;

static Ball new_ball(Random *random) {
    Ball b;
    /* Fields are drawn in the original's order: x, y, xVel, yVel. */
    b.x = next(random) % 500;
    b.y = next(random) % 500;
    b.x_vel = (next(random) % 300) - 150;
    b.y_vel = (next(random) % 300) - 150;
    return b;
}

static bool bounce(Ball *ball) {
    const int32_t x_limit = 500;
    const int32_t y_limit = 500;
    bool bounced = false;

    ball->x += ball->x_vel;
    ball->y += ball->y_vel;
    if (ball->x > x_limit) {
        ball->x = x_limit;
        ball->x_vel = 0 - abs(ball->x_vel);
        bounced = true;
    }
    if (ball->x < 0) {
        ball->x = 0;
        ball->x_vel = abs(ball->x_vel);
        bounced = true;
    }
    if (ball->y > y_limit) {
        ball->y = y_limit;
        ball->y_vel = 0 - abs(ball->y_vel);
        bounced = true;
    }
    if (ball->y < 0) {
        ball->y = 0;
        ball->y_vel = abs(ball->y_vel);
        bounced = true;
    }
    return bounced;
}

static int32_t benchmark(void) {
    Random random = {initial_seed};
    int32_t bounces = 0;
    Ball balls[BALL_COUNT];
    for (int i = 0; i < BALL_COUNT; i++) balls[i] = new_ball(&random);
    for (int j = 0; j < 50; j++) {
        for (int i = 0; i < BALL_COUNT; i++) {
            if (bounce(&balls[i])) bounces += 1;
        }
    }
    return bounces;
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
        printf("bounce: wrong result %d expected %d\n", result, EXPECTED);
        return 1;
    }
    printf("bounce: %d bounces, ok\n", result);
    return 0;
}
