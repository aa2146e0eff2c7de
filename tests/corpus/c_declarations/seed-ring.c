// SPDX-License-Identifier: MIT
/*
 * The perf evidence fixture: a single-producer single-consumer ring whose
 * control block shares one cacheline between fields of different access
 * patterns, recorded with perf's data-type profiling (see record.sh).
 *
 * Its design, which `cachelint draft` is tested against:
 *   head   written by produce() only (plain stores): a serialized writer
 *   tail   written by consume() only (plain stores): another one
 *   mask   set once, read by both: hot-read
 *   cells  set once, read by both: hot-read
 *   events atomically added to by both: lockless-write
 *   drops  written only with lock held: lock-protected by lock
 *   lock   the lock of drops
 * head, tail, mask, events and drops share line 0, so the producer's and
 * the consumer's writes take the line from each other and from the readers
 * of mask.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define noinline __attribute__((noinline))

/* The kernel's atomic_long_t, and its operations as GCC builtins. */
typedef struct {
	long counter;
} atomic_long_t;
#define atomic_long_inc(v) __atomic_fetch_add(&(v)->counter, 1, __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)

struct cell {
	unsigned long seq;
	unsigned long data;
};

struct ring {
	unsigned long head;
	unsigned long tail;
	unsigned long mask;
	atomic_long_t events;
	unsigned long drops;
	pthread_mutex_t lock;
	struct cell *cells;
};

static volatile int stop;

/* One item in, or a drop counted under the lock when the ring is full. */
static noinline void produce(struct ring *r, unsigned long item)
{
	unsigned long pos = READ_ONCE(r->head);
	struct cell *c = &r->cells[pos & r->mask];

	if (smp_load_acquire(&c->seq) == pos) {
		c->data = item;
		smp_store_release(&c->seq, pos + 1);
		WRITE_ONCE(r->head, pos + 1);
	} else {
		pthread_mutex_lock(&r->lock);
		r->drops++;
		pthread_mutex_unlock(&r->lock);
	}
	atomic_long_inc(&r->events);
}

/* One item out, if there is one; its data is added to *sum. */
static noinline void consume(struct ring *r, unsigned long *sum)
{
	unsigned long pos = READ_ONCE(r->tail);
	struct cell *c = &r->cells[pos & r->mask];

	if (smp_load_acquire(&c->seq) == pos + 1) {
		*sum += c->data;
		smp_store_release(&c->seq, pos + r->mask + 1);
		WRITE_ONCE(r->tail, pos + 1);
	}
	atomic_long_inc(&r->events);
}

/* Before the threads start: its writes are no one's but the creator's. */
static noinline void ring_init(struct ring *r, unsigned long size)
{
	r->mask = size - 1;
	r->cells = calloc(size, sizeof(*r->cells));
	for (unsigned long i = 0; i < size; i++)
		r->cells[i].seq = i;
}

static void *producer(void *arg)
{
	for (unsigned long i = 0; !stop; i++)
		produce(arg, i);
	return NULL;
}

static void *consumer(void *arg)
{
	unsigned long sum = 0;

	while (!stop)
		consume(arg, &sum);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	static struct ring ring = { .lock = PTHREAD_MUTEX_INITIALIZER };
	unsigned long size = 64;
	int seconds = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t p, c;

	ring_init(&ring, size);
	pthread_create(&p, NULL, producer, &ring);
	pthread_create(&c, NULL, consumer, &ring);
	nanosleep(&(struct timespec){ .tv_sec = seconds }, NULL);
	stop = 1;
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("head %lu tail %lu drops %lu events %ld\n", ring.head, ring.tail,
	       ring.drops, ring.events.counter);
	return 0;
}
