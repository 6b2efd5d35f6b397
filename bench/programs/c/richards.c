/* richards: the "are we fast yet" benchmark Richards (smarr/are-we-fast-yet,
 * benchmarks/Java/src/Richards.java and the richards package): Martin Richards'
 * simulation of an operating system's task scheduler. Six tasks (an idler,
 * a worker, two handlers, two devices), each a task control block with a
 * priority, a state (packet pending / waiting / holding), a queue of input
 * packets and private data, pass ten packets around until the idler has run
 * 10000 times.
 * Published answer (Scheduler.start): queuePacketCount == 23246 and
 * holdCount == 9297.
 * The original's objects are malloc'd structs linked by pointers (NULL for
 * its NO_TASK / NO_WORK); its closures are function pointers with a
 * `void *` to the task's data record. Tracing (off in the original) is left out.
 * C twin of bench/programs/richards.tern (same algorithm, same output). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REPS
#define REPS 400
#endif

#define EXPECTED_QUEUE_PACKET_COUNT 23246
#define EXPECTED_HOLD_COUNT 9297

enum { IDLER = 0, WORKER = 1, HANDLER_A = 2, HANDLER_B = 3, DEVICE_A = 4, DEVICE_B = 5, NUM_TYPES = 6 };
enum { DEVICE_PACKET_KIND = 0, WORK_PACKET_KIND = 1 };
#define DATA_SIZE 4
#define NUM_PACKETS 10

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) { fputs("richards: out of memory\n", stderr); exit(2); }
    return p;
}

typedef struct Packet {
    struct Packet *link;
    int64_t identity;
    int64_t kind;
    int64_t datum;
    int64_t data[DATA_SIZE];
} Packet;

static Packet *new_packet(Packet *link, int64_t identity, int64_t kind) {
    Packet *p = xmalloc(sizeof(Packet));
    p->link = link;
    p->identity = identity;
    p->kind = kind;
    p->datum = 0;
    for (int64_t i = 0; i < DATA_SIZE; i++) p->data[i] = 0;
    return p;
}

/* RBObject.append: `packet` at the end of the queue at `queue_head`. */
static Packet *append(Packet *packet, Packet *queue_head) {
    packet->link = NULL;
    if (queue_head == NULL) return packet;
    Packet *mouse = queue_head;
    Packet *link;
    while ((link = mouse->link) != NULL) mouse = link;
    mouse->link = packet;
    return queue_head;
}

typedef struct TaskState {
    bool packet_pending;
    bool task_waiting;
    bool task_holding;
} TaskState;

static void running(TaskState *s) {
    s->packet_pending = s->task_waiting = s->task_holding = false;
}
static void packet_pending(TaskState *s) {
    s->packet_pending = true;
    s->task_waiting = false;
    s->task_holding = false;
}
static void waiting(TaskState *s) {
    s->packet_pending = s->task_holding = false;
    s->task_waiting = true;
}
static void waiting_with_packet(TaskState *s) {
    s->task_holding = false;
    s->task_waiting = s->packet_pending = true;
}
static bool is_task_holding_or_waiting(const TaskState *s) {
    return s->task_holding || (!s->packet_pending && s->task_waiting);
}
static bool is_waiting_with_packet(const TaskState *s) {
    return s->packet_pending && s->task_waiting && !s->task_holding;
}
static TaskState create_running(void) { TaskState t; running(&t); return t; }
static TaskState create_waiting(void) { TaskState t; waiting(&t); return t; }
static TaskState create_waiting_with_packet(void) { TaskState t; waiting_with_packet(&t); return t; }

struct Scheduler;
struct Tcb;
typedef struct Tcb *(*ProcessFunction)(struct Scheduler *s, Packet *work, void *data);

typedef struct Tcb {
    TaskState state;
    struct Tcb *link;
    int64_t identity;
    int64_t priority;
    Packet *input;
    ProcessFunction function;
    void *handle;
} Tcb;

typedef struct { Packet *pending; } DeviceTaskDataRecord;
typedef struct { Packet *work_in; Packet *device_in; } HandlerTaskDataRecord;
typedef struct { int64_t control; int64_t count; } IdleTaskDataRecord;
typedef struct { int64_t destination; int64_t count; } WorkerTaskDataRecord;

typedef struct Scheduler {
    Tcb *task_list;
    Tcb *current_task;
    int64_t current_task_identity;
    Tcb *task_table[NUM_TYPES];
    int64_t queue_packet_count;
    int64_t hold_count;
    /* Every packet made, to free them at the end (the original has a GC). */
    Packet *packets[NUM_PACKETS];
    int64_t packet_count;
} Scheduler;

static Tcb *add_input_and_check_priority(Tcb *t, Packet *packet, Tcb *old_task) {
    if (t->input == NULL) {
        t->input = packet;
        t->state.packet_pending = true;
        if (t->priority > old_task->priority) return t;
    } else {
        t->input = append(packet, t->input);
    }
    return old_task;
}

static Tcb *run_task(Scheduler *s, Tcb *t) {
    Packet *message;
    if (is_waiting_with_packet(&t->state)) {
        message = t->input;
        t->input = message->link;
        if (t->input == NULL) {
            running(&t->state);
        } else {
            packet_pending(&t->state);
        }
    } else {
        message = NULL;
    }
    return t->function(s, message, t->handle);
}

static Tcb *find_task(Scheduler *s, int64_t identity) {
    Tcb *t = s->task_table[identity];
    if (t == NULL) { fputs("richards: findTask failed\n", stderr); exit(2); }
    return t;
}

static Tcb *hold_self(Scheduler *s) {
    s->hold_count++;
    s->current_task->state.task_holding = true;
    return s->current_task->link;
}

static Tcb *queue_packet(Scheduler *s, Packet *packet) {
    Tcb *t = find_task(s, packet->identity);
    s->queue_packet_count++;
    packet->link = NULL;
    packet->identity = s->current_task_identity;
    return add_input_and_check_priority(t, packet, s->current_task);
}

static Tcb *release(Scheduler *s, int64_t identity) {
    Tcb *t = find_task(s, identity);
    t->state.task_holding = false;
    if (t->priority > s->current_task->priority) return t;
    return s->current_task;
}

static Tcb *mark_waiting(Scheduler *s) {
    s->current_task->state.task_waiting = true;
    return s->current_task;
}

static void create_task(Scheduler *s, int64_t identity, int64_t priority, Packet *work,
                        TaskState state, ProcessFunction function, void *data) {
    Tcb *t = xmalloc(sizeof(Tcb));
    t->link = s->task_list;
    t->identity = identity;
    t->priority = priority;
    t->input = work;
    t->state = state;
    t->function = function;
    t->handle = data;
    s->task_list = t;
    s->task_table[identity] = t;
}

/* The four task functions (the original's closures). */

static Tcb *device_function(Scheduler *s, Packet *work, void *word) {
    DeviceTaskDataRecord *data = word;
    Packet *function_work = work;
    if (function_work == NULL) {
        if ((function_work = data->pending) == NULL) return mark_waiting(s);
        data->pending = NULL;
        return queue_packet(s, function_work);
    }
    data->pending = function_work;
    return hold_self(s);
}

static Tcb *handler_function(Scheduler *s, Packet *work, void *word) {
    HandlerTaskDataRecord *data = word;
    if (work != NULL) {
        if (work->kind == WORK_PACKET_KIND) {
            data->work_in = append(work, data->work_in);
        } else {
            data->device_in = append(work, data->device_in);
        }
    }
    Packet *work_packet = data->work_in;
    if (work_packet == NULL) return mark_waiting(s);
    int64_t count = work_packet->datum;
    if (count >= DATA_SIZE) {
        data->work_in = work_packet->link;
        return queue_packet(s, work_packet);
    }
    Packet *device_packet = data->device_in;
    if (device_packet == NULL) return mark_waiting(s);
    data->device_in = device_packet->link;
    device_packet->datum = work_packet->data[count];
    work_packet->datum = count + 1;
    return queue_packet(s, device_packet);
}

static Tcb *idler_function(Scheduler *s, Packet *work, void *word) {
    (void)work;
    IdleTaskDataRecord *data = word;
    data->count--;
    if (data->count == 0) return hold_self(s);
    if ((data->control & 1) == 0) {
        data->control = data->control / 2;
        return release(s, DEVICE_A);
    }
    data->control = (data->control / 2) ^ 53256;
    return release(s, DEVICE_B);
}

static Tcb *worker_function(Scheduler *s, Packet *work, void *word) {
    WorkerTaskDataRecord *data = word;
    if (work == NULL) return mark_waiting(s);
    data->destination = data->destination == HANDLER_A ? HANDLER_B : HANDLER_A;
    work->identity = data->destination;
    work->datum = 0;
    for (int64_t i = 0; i < DATA_SIZE; i++) {
        data->count++;
        if (data->count > 26) data->count = 1;
        work->data[i] = 65 + data->count - 1;
    }
    return queue_packet(s, work);
}

static void create_device(Scheduler *s, int64_t identity, int64_t priority, Packet *work,
                          TaskState state) {
    DeviceTaskDataRecord *data = xmalloc(sizeof *data);
    data->pending = NULL;
    create_task(s, identity, priority, work, state, device_function, data);
}

static void create_handler(Scheduler *s, int64_t identity, int64_t priority, Packet *work,
                           TaskState state) {
    HandlerTaskDataRecord *data = xmalloc(sizeof *data);
    data->work_in = data->device_in = NULL;
    create_task(s, identity, priority, work, state, handler_function, data);
}

static void create_idler(Scheduler *s, int64_t identity, int64_t priority, Packet *work,
                         TaskState state) {
    IdleTaskDataRecord *data = xmalloc(sizeof *data);
    data->control = 1;
    data->count = 10000;
    create_task(s, identity, priority, work, state, idler_function, data);
}

static void create_worker(Scheduler *s, int64_t identity, int64_t priority, Packet *work,
                          TaskState state) {
    WorkerTaskDataRecord *data = xmalloc(sizeof *data);
    data->destination = HANDLER_A;
    data->count = 0;
    create_task(s, identity, priority, work, state, worker_function, data);
}

static Packet *create_packet(Scheduler *s, Packet *link, int64_t identity, int64_t kind) {
    Packet *p = new_packet(link, identity, kind);
    s->packets[s->packet_count++] = p;
    return p;
}

static void schedule(Scheduler *s) {
    s->current_task = s->task_list;
    while (s->current_task != NULL) {
        if (is_task_holding_or_waiting(&s->current_task->state)) {
            s->current_task = s->current_task->link;
        } else {
            s->current_task_identity = s->current_task->identity;
            s->current_task = run_task(s, s->current_task);
        }
    }
}

/* One benchmark() of the original: a new Scheduler, started; its counts. */
static void benchmark(int64_t *queue_packet_count, int64_t *hold_count) {
    Scheduler *s = xmalloc(sizeof(Scheduler));
    s->task_list = NULL;
    s->current_task = NULL;
    s->current_task_identity = 0;
    for (int64_t i = 0; i < NUM_TYPES; i++) s->task_table[i] = NULL;
    s->queue_packet_count = 0;
    s->hold_count = 0;
    s->packet_count = 0;

    create_idler(s, IDLER, 0, NULL, create_running());
    Packet *work_q = create_packet(s, NULL, WORKER, WORK_PACKET_KIND);
    work_q = create_packet(s, work_q, WORKER, WORK_PACKET_KIND);

    create_worker(s, WORKER, 1000, work_q, create_waiting_with_packet());
    work_q = create_packet(s, NULL, DEVICE_A, DEVICE_PACKET_KIND);
    work_q = create_packet(s, work_q, DEVICE_A, DEVICE_PACKET_KIND);
    work_q = create_packet(s, work_q, DEVICE_A, DEVICE_PACKET_KIND);

    create_handler(s, HANDLER_A, 2000, work_q, create_waiting_with_packet());
    work_q = create_packet(s, NULL, DEVICE_B, DEVICE_PACKET_KIND);
    work_q = create_packet(s, work_q, DEVICE_B, DEVICE_PACKET_KIND);
    work_q = create_packet(s, work_q, DEVICE_B, DEVICE_PACKET_KIND);

    create_handler(s, HANDLER_B, 3000, work_q, create_waiting_with_packet());
    create_device(s, DEVICE_A, 4000, NULL, create_waiting());
    create_device(s, DEVICE_B, 5000, NULL, create_waiting());

    schedule(s);

    *queue_packet_count = s->queue_packet_count;
    *hold_count = s->hold_count;

    Tcb *t = s->task_list;
    while (t != NULL) {
        Tcb *next = t->link;
        free(t->handle);
        free(t);
        t = next;
    }
    for (int64_t i = 0; i < s->packet_count; i++) free(s->packets[i]);
    free(s);
}

int main(void) {
    /* Every repetition is checked, so none of them can be skipped. */
    int64_t failures = 0, queue_packet_count = 0, hold_count = 0;
    for (int64_t rep = 0; rep < REPS; rep++) {
        benchmark(&queue_packet_count, &hold_count);
        if (queue_packet_count != EXPECTED_QUEUE_PACKET_COUNT || hold_count != EXPECTED_HOLD_COUNT) {
            failures++;
        }
    }
    if (failures > 0) {
        printf("richards: queuePacketCount %lld holdCount %lld (expected 23246, 9297), FAILED\n",
               (long long)queue_packet_count, (long long)hold_count);
        return 1;
    }
    printf("richards: queuePacketCount 23246, holdCount 9297, ok\n");
    return 0;
}
