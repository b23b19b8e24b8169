// SPDX-License-Identifier: GPL-2.0
/*
 * Connections are closed by a thread of their own, never by the event loop.
 *
 * Closing a connection drops the messages still queued on it, and with
 * them the descriptors they carry (SCM_RIGHTS) that their sender no longer
 * holds. Dropping the last reference to a file runs its release in the
 * task that dropped it, and some releases wait as long as whoever made the
 * file chooses: a TCP socket with SO_LINGER and data its peer never reads,
 * a FUSE file whose server does not answer the flush, a tty whose output
 * does not drain. Any local user may connect and send such a descriptor.
 * So the event loop never holds the last reference to a file it was sent:
 * on_request() leaves a message that carries descriptors on the queue and
 * closes the connection, and every connection's descriptor is closed here,
 * where a release that blocks stops only this thread. Until its close
 * returns, a connection still counts against its user's connections
 * (arbiter.c's conn_limit()), so one user's blocked closes stay within what
 * it may hold anyway. Where the kernel has SO_PASSRIGHTS (Linux 6.16), the
 * listening socket refuses descriptors from the start (arbiter_socket.c).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "arbiter_int.h"

/* How long an exiting arbiter waits for a close that blocks. */
#define CLOSER_EXIT_WAIT_S	1

/*
 * C.lock guards todo, done and stop: the event loop puts connections on
 * todo and takes them from done, the thread the other way round. efd
 * counts the connections put on done since the event loop last looked.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct arb_client *todo;	/* to close, on close_next */
	struct arb_client *done;	/* closed, to free */
	bool stop;
	bool running;			/* the thread was started */
	pthread_t thread;
	int efd;
} C = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

static void *closer_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&C.lock);
	for (;;) {
		struct arb_client *c;

		while (!C.todo && !C.stop)
			pthread_cond_wait(&C.wake, &C.lock);
		c = C.todo;
		if (!c)
			break;
		C.todo = c->close_next;
		pthread_mutex_unlock(&C.lock);
		close(c->fd);
		pthread_mutex_lock(&C.lock);
		c->close_next = C.done;
		C.done = c;
		eventfd_write(C.efd, 1);
	}
	pthread_mutex_unlock(&C.lock);
	return NULL;
}

int closer_start(void)
{
	int err;

	C.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (C.efd < 0) {
		gs_log(LOG_ERR, "eventfd: %s", strerror(errno));
		return -1;
	}
	/* Started with the signals blocked, as signalfd needs of every thread. */
	err = pthread_create(&C.thread, NULL, closer_main, NULL);
	if (err) {
		gs_log(LOG_ERR, "the closing thread: %s", strerror(err));
		close(C.efd);
		C.efd = -1;
		return -1;
	}
	C.running = true;
	return C.efd;
}

void closer_put(struct arb_client *c)
{
	/* No thread (a program that links the arbiter, as the fuzz target). */
	if (!C.running) {
		close(c->fd);
		conn_release(c);
		return;
	}
	pthread_mutex_lock(&C.lock);
	c->close_next = C.todo;
	C.todo = c;
	pthread_cond_signal(&C.wake);
	pthread_mutex_unlock(&C.lock);
}

void closer_reap(void)
{
	struct arb_client *c;
	eventfd_t n;

	if (eventfd_read(C.efd, &n) && errno != EAGAIN)
		gs_log(LOG_ERR, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&C.lock);
	c = C.done;
	C.done = NULL;
	pthread_mutex_unlock(&C.lock);
	while (c) {
		struct arb_client *next = c->close_next;

		conn_release(c);
		c = next;
	}
}

void closer_stop(void)
{
	struct timespec until;
	int err;

	if (!C.running)
		return;
	pthread_mutex_lock(&C.lock);
	C.stop = true;
	pthread_cond_signal(&C.wake);
	pthread_mutex_unlock(&C.lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CLOSER_EXIT_WAIT_S;
	err = pthread_timedjoin_np(C.thread, NULL, &until);
	if (err) {
		/* Exiting ends the close (the task is killed): not waited for. */
		gs_log(LOG_WARNING, "a connection's close still blocks after %d s; exiting without it",
		       CLOSER_EXIT_WAIT_S);
		return;
	}
	C.running = false;
	closer_reap();
	close(C.efd);
	C.efd = -1;
}
