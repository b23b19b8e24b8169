// SPDX-License-Identifier: GPL-2.0
/*
 * A client's GPUSCHED_LABEL, read by threads of their own.
 *
 * The label is in the client's environment, and /proc/PID/environ is the
 * process's own memory: reading it faults in the pages there, and a
 * process may map over its environment a file whose reads block as long as
 * it likes (a FUSE file it serves). So an event loop never reads it:
 * gs_labels_want() starts a thread that reads it, the thread hands the
 * answer back through an eventfd, and gs_labels_reap() gives it to the
 * loop. What the loop does until then is its own (the arbiter holds the
 * ATTACH for a while, the netlink mode applies the rules without it).
 *
 * At most LABEL_READERS reads run at once, LABEL_READERS_UID of one user;
 * the others wait in line for one to end. A user whose reads block holds
 * up only its own clients' labels, and a read that never ends keeps only
 * its thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dlog.h"
#include "labels.h"
#include "rules.h"

/* Reads at once, in all and of one user: the first well above what a
 * burst of attaches needs, the second a process's contexts on 8 GPUs. */
#define LABEL_READERS		32
#define LABEL_READERS_UID	8
/* A reader's stack: it reads into the heap. */
#define LABEL_STACK		(64 << 10)

struct label_req {
	struct label_req *next;
	uint64_t id;			/* the caller's number for it */
	pid_t pid;
	uid_t uid;
	uint64_t start;			/* the process's; 0: not known */
	bool found;
	char label[GS_LABEL_LEN];
};

/*
 * L.lock guards done, which the readers fill and gs_labels_reap() empties;
 * the rest is the event loop's alone.
 */
static struct {
	pthread_mutex_t lock;
	struct label_req *done;
	int efd;
	struct label_req *queue;	/* waiting to start, in order */
	unsigned int running;
	struct {
		uid_t uid;
		unsigned int n;
	} users[LABEL_READERS];		/* running reads per user; n 0: free */
} L = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.efd = -1,
};

/* @r is answered: to the event loop. Any thread. */
static void done_put(struct label_req *r)
{
	pthread_mutex_lock(&L.lock);
	r->next = L.done;
	L.done = r;
	eventfd_write(L.efd, 1);
	pthread_mutex_unlock(&L.lock);
}

static void *reader(void *arg)
{
	struct label_req *r = arg;

	r->found = gs_proc_label(r->pid, r->label, sizeof(r->label));
	/* Another process has the pid by now: not its label. */
	if (r->found && r->start && gs_proc_start(r->pid) != r->start) {
		r->found = false;
		r->label[0] = '\0';
	}
	done_put(r);
	return NULL;
}

int gs_labels_init(void)
{
	L.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (L.efd < 0)
		gs_log(LOG_ERR, "eventfd: %s", strerror(errno));
	return L.efd;
}

/* @uid's slot in L.users, taken if @take and it has none; NULL: none. */
static unsigned int *user_count(uid_t uid, bool take)
{
	unsigned int *free_n = NULL;

	for (size_t i = 0; i < LABEL_READERS; i++) {
		if (L.users[i].n && L.users[i].uid == uid)
			return &L.users[i].n;
		if (!L.users[i].n && !free_n) {
			free_n = &L.users[i].n;
			L.users[i].uid = uid;
		}
	}
	return take ? free_n : NULL;
}

/* Start @r's reader; false if its user has as many as it may. */
static bool start(struct label_req *r)
{
	unsigned int *n = user_count(r->uid, true);
	pthread_attr_t attr;
	pthread_t t;
	int err;

	/* Fewer than LABEL_READERS run: a free slot is there. */
	if (!n || *n >= LABEL_READERS_UID)
		return false;
	(*n)++;
	L.running++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, LABEL_STACK);
	/* Its signals are blocked: the event loop blocked them first. */
	err = pthread_create(&t, &attr, reader, r);
	pthread_attr_destroy(&attr);
	if (err) {
		/* Answered as a read that found nothing. */
		gs_log_limited(LOG_ERR, "a thread to read a label: %s", strerror(err));
		done_put(r);
	}
	return true;
}

/* Start what waits in line, in order, as far as the limits let. */
static void start_queued(void)
{
	struct label_req **pp = &L.queue;

	while (*pp && L.running < LABEL_READERS) {
		struct label_req *r = *pp, *next = r->next;

		*pp = next;
		if (start(r))
			continue;
		/* Its user has its reads running: back in line, look further. */
		r->next = next;
		*pp = r;
		pp = &r->next;
	}
}

bool gs_labels_want(uint64_t id, pid_t pid, uid_t uid, uint64_t start_time)
{
	struct label_req *r = calloc(1, sizeof(*r)), **pp;

	if (!r)
		return false;
	r->id = id;
	r->pid = pid;
	r->uid = uid;
	r->start = start_time;
	for (pp = &L.queue; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	start_queued();
	return true;
}

void gs_labels_reap(void (*got)(uint64_t id, const char *label))
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
		(*user_count(r->uid, false))--;
		got(r->id, r->found ? r->label : NULL);
		free(r);
		r = next;
	}
	start_queued();
}

void gs_labels_forget(uint64_t id)
{
	struct label_req **pp;

	for (pp = &L.queue; *pp; pp = &(*pp)->next) {
		struct label_req *r = *pp;

		if (r->id == id) {
			*pp = r->next;
			free(r);
			return;
		}
	}
}
