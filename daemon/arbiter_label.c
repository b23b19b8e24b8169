// SPDX-License-Identifier: GPL-2.0
/*
 * A client's GPUSCHED_LABEL, read by threads of their own.
 *
 * The label is in the client's environment, and /proc/PID/environ is the
 * process's own memory: reading it faults in the pages there, and a
 * process may map over its environment a file whose reads block as long as
 * it likes (a FUSE file, a range of its userfaultfd). So the event loop
 * never reads it. label_want() starts a thread that reads it; the thread
 * hands the answer back through an eventfd, and label_reap() gives it to
 * the client (label_got()). An ATTACH whose rules look at labels is
 * answered once the label is read, or after LABEL_WAIT_NS without it
 * (arbiter_token.c); a label read later applies then, as a reload would.
 *
 * At most LABEL_READERS reads run at once, LABEL_READERS_UID of one user;
 * the others wait in line for one to end. A user whose reads block holds
 * up only its own clients' labels, and a read that never ends keeps only
 * its thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "arbiter_int.h"
#include "rules.h"

/* Reads at once, in all and of one user: the first well above the few a
 * burst of attaches needs, the second as many as a process's GPUs. */
#define LABEL_READERS		32
#define LABEL_READERS_UID	8
/* A reader's stack: it reads into the heap. */
#define LABEL_STACK		(64 << 10)

struct label_req {
	struct label_req *next;
	uint64_t id;			/* the client's */
	pid_t pid;
	uid_t uid;
	uint64_t start;			/* the process's; 0: not known */
	bool found;
	char label[GS_LABEL_LEN];
};

/*
 * L.lock guards done, which the readers fill and label_reap() empties;
 * the rest is the event loop's alone.
 */
static struct {
	pthread_mutex_t lock;
	struct label_req *done;
	int efd;
	struct label_req *queue, **queue_tail;	/* waiting to start */
	unsigned int running;
	void *uids;			/* running reads per uid (uid_get()) */
} L = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.efd = -1,
	.queue_tail = &L.queue,
};

static void *reader(void *arg)
{
	struct label_req *r = arg;

	r->found = gs_proc_label(r->pid, r->label, sizeof(r->label));
	/* Another process has the pid by now: not its label. */
	if (r->found && r->start && gs_proc_start(r->pid) != r->start) {
		r->found = false;
		r->label[0] = '\0';
	}
	pthread_mutex_lock(&L.lock);
	r->next = L.done;
	L.done = r;
	eventfd_write(L.efd, 1);
	pthread_mutex_unlock(&L.lock);
	return NULL;
}

int label_init(void)
{
	L.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (L.efd < 0)
		gs_log(LOG_ERR, "eventfd: %s", strerror(errno));
	return L.efd;
}

/* Start @r's reader; false if its user has as many as it may. */
static bool start(struct label_req *r)
{
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (uid_get(&L.uids, r->uid, LABEL_READERS_UID, false))
		return false;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, LABEL_STACK);
	L.running++;
	/* The signals stay blocked in the reader: sigprocmask() came first. */
	err = pthread_create(&t, &attr, reader, r);
	pthread_attr_destroy(&attr);
	if (err) {
		/* Answered as a read that found nothing, by label_reap(). */
		gs_log_limited(LOG_ERR, "a thread to read a label: %s", strerror(err));
		pthread_mutex_lock(&L.lock);
		r->next = L.done;
		L.done = r;
		eventfd_write(L.efd, 1);
		pthread_mutex_unlock(&L.lock);
	}
	return true;
}

/* Start what waits in line, in order, as far as the limits let. */
static void start_queued(void)
{
	struct label_req **pp = &L.queue;

	while (*pp && L.running < LABEL_READERS) {
		struct label_req *r = *pp;

		*pp = r->next;
		if (!*pp)
			L.queue_tail = pp;
		r->next = NULL;
		if (start(r))
			continue;
		/* Its user has its reads running: put back, look further. */
		r->next = *pp;
		*pp = r;
		if (!r->next)
			L.queue_tail = &r->next;
		pp = &r->next;
	}
}

void label_want(struct arb_client *c)
{
	struct label_req *r;

	if (c->label_state != ARB_LABEL_UNREAD)
		return;
	r = calloc(1, sizeof(*r));
	if (!r) {
		c->label_state = ARB_LABEL_NONE;
		return;
	}
	c->label_state = ARB_LABEL_READING;
	r->id = c->id;
	r->pid = c->cred.pid;
	r->uid = c->cred.uid;
	r->start = c->start;
	*L.queue_tail = r;
	L.queue_tail = &r->next;
	start_queued();
}

void label_reap(void)
{
	struct label_req *r;
	eventfd_t n;

	if (eventfd_read(L.efd, &n) && errno != EAGAIN)
		gs_log(LOG_ERR, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&L.lock);
	r = L.done;
	L.done = NULL;
	pthread_mutex_unlock(&L.lock);
	while (r) {
		struct label_req *next = r->next;

		L.running--;
		uid_put(&L.uids, r->uid);
		label_got(r->id, r->found ? r->label : NULL);
		free(r);
		r = next;
	}
	start_queued();
}

void label_forget(uint64_t id)
{
	struct label_req **pp = &L.queue;

	while (*pp) {
		struct label_req *r = *pp;

		if (r->id != id) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		if (!*pp)
			L.queue_tail = pp;
		free(r);
		return;
	}
}
