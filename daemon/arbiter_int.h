/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space arbiter's parts, and what they share: arbiter.c (the
 * event loop, connections, the policy file), arbiter_token.c (the token
 * served to clients: the ioctl contract of kmod/uapi/linux/gpusched.h),
 * arbiter_ctl.c (gpuschedctl's control protocol, gpusched_ctl.h, and the
 * metrics page), arbiter_socket.c (the listening socket's file) and
 * arbiter_closer.c (the thread that closes connections); labels.c reads
 * clients' labels for it.
 */
#ifndef GSD_ARBITER_INT_H
#define GSD_ARBITER_INT_H

#include <linux/capability.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/gpusched.h>
#include <gpusched/arbiter_wire.h>

#include "arbiter.h"
#include "dlog.h"
#include "metrics.h"
#include "policy.h"
#include "policyfile.h"
#include "rules.h"

struct arb_client;

struct arb_dev {
	struct arb_dev *next;		/* in index order */
	unsigned char uuid[GPUSCHED_UUID_LEN];
	unsigned int index;
	struct gs_pol_dev pol;
	bool knobs_set;			/* by gpuschedctl: kept when unused */
	void *uids;			/* tsearch(3) tree of struct arb_uid */
	/* Its clients in attach order, which is id order (dumps resume by id). */
	struct arb_client *first, *last;
};

/* A reply of a control connection that is not sent whole yet. */
struct ctl_out {
	bool active;
	uint16_t cmd;
	uint32_t seq;
	int error;			/* a reply without records: its error */
	bool filtered;			/* GET_CLIENTS of one GPU */
	uint32_t gpu;			/* next GPU index to list */
	uint64_t last_id;		/* last client id sent */
};

/* A client's GPUSCHED_LABEL, for the rules (labels.c). */
enum arb_label {
	ARB_LABEL_UNREAD,		/* no rule looked at labels yet */
	ARB_LABEL_READING,
	ARB_LABEL_READ,			/* in label */
	ARB_LABEL_NONE,			/* it has none, or it cannot be read */
};

/* An ATTACH waits this long for its label: a read takes microseconds
 * unless the process makes it block. */
#define LABEL_WAIT_NS		(50 * 1000000ull)

/* arb_client.start of a peer that exited before it was accepted. */
#define ARB_START_GONE	UINT64_MAX

struct arb_client {
	struct arb_client *next, *prev;	/* all clients */
	int fd;
	struct ucred cred;
	/*
	 * When the peer's process started, read as it connected (0: not
	 * visible to us; ARB_START_GONE: exited by then): ATTACH looks at
	 * /proc/PID for the rules, and only while the same process has that
	 * pid (gs_proc_start()).
	 */
	uint64_t start;
	/*
	 * The peer's effective capabilities when it connected, where they
	 * count: in our user namespace (peer_caps()); none in another.
	 */
	uint64_t caps;
	/*
	 * Closed (client_close()): no longer read or answered, still on every
	 * list and in the policy until reap_closed() takes it down after the
	 * event batch, so that no caller's walk or pointer goes stale.
	 */
	bool closed;
	struct arb_client *close_next;	/* on A.closing, then the closer's lists */
	char why[64];			/* why it was closed, for the log */
	uint64_t idle_deadline;		/* closed if no request by then; 0: one came */
	struct arb_dev *dev;		/* NULL until ATTACH */
	struct gs_pol_client pol;
	struct gpusched_status *page;	/* pol.page once attached */
	bool parked;			/* an ACQUIRE or YIELD awaits its reply */
	uint64_t deadline;		/* of the parked request; 0: none */
	/* Attached clients: on their GPU's list, as the module lists them. */
	struct arb_client *dnext, *dprev;
	uint64_t id;
	char comm[16];
	uint64_t cgroup_id;
	/*
	 * The memory channel (arbiter_wire.h): an attached client's cookie
	 * and its channel, if bound; a channel's client. Each is cleared
	 * when the other closes.
	 */
	unsigned char cookie[16];
	bool has_cookie;
	struct arb_client *chan;
	struct arb_client *owner;
	enum arb_label label_state;
	char label[GS_LABEL_LEN];
	/*
	 * An ATTACH whose rules wait for the label (labels.c): its
	 * reply and status page's memfd, sent by attach_answer() once the
	 * label is read or at attach_deadline.
	 */
	bool attach_held;
	uint64_t attach_deadline;
	struct gpusched_wire_attached held_att;
	int held_memfd;
	/* mem_admission's decision, made at its first policy (UNSET: not yet) */
	enum gs_mem_admit admit;
	/* Control connections (gpuschedctl) */
	bool ctl;
	bool subscribed;		/* receives events */
	bool ev_lost;			/* dropped some: EV_LOST is due */
	struct ctl_out out;
};

struct arb_state {
	const struct arb_options *o;
	int epfd, lfd, sfd, tfd;
	int cfd;			/* arbiter_closer.c's eventfd, for epoll */
	int lblfd;			/* labels.c's */
	struct arb_dev *devs;
	unsigned int nr_devs;
	struct arb_client clients;	/* list head */
	unsigned int nr_clients;
	struct arb_client *closing;	/* closed, to take down after the batch */
	void *conn_uids;		/* tsearch(3) tree of connections per uid */
	unsigned int conn_limit;	/* a user's connections; 0: no limit */
	unsigned int users_conns;	/* connections of users but root */
	unsigned int users_limit;	/* ... in all; 0: no limit */
	uint64_t conn_warned_ns;	/* when we last said a user hit it */
	uint64_t users_warned_ns;	/* ... that users hit theirs */
	bool future_write_seal;
	struct gs_policy *pol;		/* the policy file's rules and knobs */
	dev_t sock_dev;
	ino_t sock_ino;
	bool accept_paused;		/* out of descriptors or memory */
	bool rights_refused;		/* SO_PASSRIGHTS off: no descriptor comes */
	uint64_t poll_until;		/* --poll-us: poll, not sleep, until */
	uint64_t started_ns;		/* for the CPU time said at exit */
	uint64_t accept_warned_ns;	/* when we last said so */
	uint64_t next_id;		/* of the next client to attach */
	struct gs_metrics *metrics;
	struct gs_daemon_stats st;	/* for the metrics */
	uint64_t *rule_hits;		/* per rule of pol */
};

/*
 * The arbiter's one state, defined in arbiter.c. One thread, the event
 * loop, reads and writes it: no lock. A client handed to closer_put() is
 * the closing thread's until closer_reap() gives it back.
 */
extern struct arb_state A;

#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

static inline struct arb_client *to_client(struct gs_pol_client *pc)
{
	return container_of(pc, struct arb_client, pol);
}

/* arbiter.c: the event loop, connections and the policy file; dlog.h logs */
/* CLOCK_MONOTONIC, in ns: the policy's clock. */
uint64_t now_ns(void);
/* Watch @c for what its state lets it do next (see the function). */
void watch_update(struct arb_client *c);
/*
 * Close @c's connection (@why, if any, is logged): from now on it is not
 * read or answered. Safe anywhere, inside reply() and apply() too: it
 * only marks @c; reap_closed() does the rest.
 */
void client_close(struct arb_client *c, const char *why);
/*
 * Free @c, whose descriptor arbiter_closer.c has closed, and the
 * connection it counted against its user.
 */
void conn_release(struct arb_client *c);

/*
 * arbiter_closer.c: connections closed by a thread of their own. The
 * event loop calls all four; closer_start() returns the descriptor that
 * becomes readable when connections were closed (then closer_reap()).
 */
int closer_start(void);
/*
 * Close @c's descriptor, then have closer_reap() conn_release() it; at
 * once, without closer_start().
 */
void closer_put(struct arb_client *c);
void closer_reap(void);
/* At exit: wait a little for the closes under way, and free what they left. */
void closer_stop(void);

/* arbiter.c: client @id's label is @label (NULL: none), from labels.c. */
void label_got(uint64_t id, const char *label);
/*
 * arbiter.c: is @c's label being read for the rules? Starts the read if
 * a rule looks at labels and it was not read.
 */
bool client_label_due(struct arb_client *c);
/* Apply @c's rules and send its held ATTACH reply. */
void attach_answer(struct arb_client *c);
/*
 * Take down the clients closed during this batch of events: a closed
 * file, as the module releases it. Only the event loop calls it, between
 * batches, where nothing points at a client.
 */
void reap_closed(void);
/*
 * Take down @c, closed and already off A.closing: a closed file, as the
 * module releases it. Its grants may close others (onto A.closing).
 */
void client_reap(struct arb_client *c);
/*
 * The policy file's knobs for @d; for @c its first matching rule, then
 * mem_admission's decision (made at the first call, kept after).
 */
void dev_apply_policy(struct arb_dev *d);
void client_apply_policy(struct arb_client *c);
/* An administrator's change to @c (a rule, gpuschedctl). */
int client_admin_set(struct arb_client *c, const struct gpusched_params *p);
/* The timer fired: the policy's events and parked requests' deadlines. */
void on_timer(void);
/* @c is readable: one request, a client's or a control connection's. */
void on_request(struct arb_client *c);

/* arbiter_token.c: the token, as kmod/chardev.c and token.c serve it */
/* Publish @c's state on its status page (a sequence count around it). */
void status_sync(struct arb_client *c, uint64_t now);
/* @c's state as GET_INFO and the records say it: GPUSCHED_STATE_*. */
uint32_t client_state(const struct arb_client *c);
/* Answer @c's request: @ret, @size bytes of @arg, @memfd (-1: none). */
void reply(struct arb_client *c, int ret, const void *arg, size_t size,
	   int memfd);
/* Hold back (@on) or release @c's reply to a blocking request. */
void park(struct arb_client *c, bool on);
/*
 * Per-user counts in the tsearch(3) tree at @tree (a GPU's clients, the
 * connections): one more for @uid, 0 or -EUSERS past @limit (0: none; not
 * for root, @exempt) or -ENOMEM; one fewer.
 */
int uid_get(void **tree, uid_t uid, unsigned int limit, bool exempt);
void uid_put(void **tree, uid_t uid);
/*
 * Does @c have capability @cap (CAP_*), as the module asks capable() of
 * its callers: CAP_SYS_NICE to raise its own share, CAP_NET_ADMIN to
 * change GPUs and others. And root when it connected (SO_PEERCRED): the
 * capabilities are read at accept(), by then those of whatever the peer
 * exec'd (a setuid program), while a copy of its socket may be elsewhere.
 */
static inline bool client_capable(const struct arb_client *c, int cap)
{
	return c->cred.uid == 0 && (c->caps & (1ull << cap));
}
/* Tell the clients what the policy decided; after every policy call. */
void apply(struct arb_dev *d, struct gs_pol_effects *fx, uint64_t now);
/* Set @c's parameters; unless @priv, only lowering its share. */
int client_set(struct arb_client *c, const struct gpusched_params *p,
	       bool priv);
/* Can status pages be sealed against a writable mapping? */
bool probe_future_write_seal(void);
/* One request of a client (not a control connection), answered. */
void token_request(struct arb_client *c, const struct gpusched_wire_req *req);
/* One request on a memory channel @ch, answered on @ch for its client. */
void chan_request(struct arb_client *ch, const struct gpusched_wire_req *req);

/* arbiter_ctl.c: gpuschedctl's control protocol, and the metrics page */
/* Event @cmd about client @c to every subscriber. */
void ctl_event(uint16_t cmd, struct arb_client *c);
/* Send what is left of @c's reply: 0, or -errno to close @c. */
int ctl_flush(struct arb_client *c);
/* The @n bytes of @msg, which start with the control magic, answered. */
void ctl_request(struct arb_client *c, const void *msg, size_t n, bool trunc);
/* The metrics page, for gs_metrics_page_render(). */
extern struct gs_metrics_page arb_metrics_page;

/* arbiter_socket.c: the listening socket at its path */
/* Listen at @path (A.lfd), claimed from a dead arbiter: 0 or -1, logged. */
int listen_socket(const char *path);
/* Remove the socket file at exit if it is still the one we made. */
void unlink_ours(const char *path);

#endif /* GSD_ARBITER_INT_H */
