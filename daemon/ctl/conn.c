// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedctl: the token service, gpusched.ko or the arbiter, and what
 * its refusals tell a person to do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpuschedctl.h"

static int connect_arbiter(struct conn *x, bool quiet)
{
	int err = gs_arb_open(arb_path, &x->arb);

	if (!err)
		return 0;
	if (quiet && (err == -ENOENT || err == -ECONNREFUSED))
		return EXIT_ABSENT;
	if (err == -ENOENT || err == -ECONNREFUSED)
		fprintf(stderr, "gpuschedctl: no arbiter listens on %s (%s): start gpuschedd --arbiter, or name its socket with --socket\n",
			arb_path, strerror(-err));
	else
		fprintf(stderr, "gpuschedctl: cannot connect to the arbiter at %s: %s\n",
			arb_path, strerror(-err));
	return err == -ENOENT || err == -ECONNREFUSED ? EXIT_ABSENT : EXIT_REQUEST;
}

/* The module if its family is there (unless told otherwise), else the arbiter. */
int connect_ctl(struct conn *x)
{
	int err;

	memset(x, 0, sizeof(*x));
	if (backend == BE_ARBITER)
		return connect_arbiter(x, false);
	err = gs_nl_open(&x->nl);
	if (!err)
		return 0;
	x->nl = NULL;
	if (err != -ENOENT && err != -EPROTONOSUPPORT && backend == BE_KMOD) {
		fprintf(stderr, "gpuschedctl: cannot open generic netlink: %s\n",
			strerror(-err));
		return EXIT_REQUEST;
	}
	if (backend == BE_AUTO) {
		int rc = connect_arbiter(x, true);

		if (rc != EXIT_ABSENT)
			return rc;
	}
	fprintf(stderr, "gpuschedctl: gpusched.ko is not loaded (no generic netlink family \"%s\"): load it with 'modprobe gpusched'",
		GPUSCHED_GENL_NAME);
	if (backend == BE_AUTO)
		fprintf(stderr, ", or start the user-space arbiter, gpuschedd --arbiter (none listens on %s)",
			arb_path);
	fputc('\n', stderr);
	return EXIT_ABSENT;
}

void conn_close(struct conn *x)
{
	gs_nl_close(x->nl);
	gs_arb_close(x->arb);
	x->nl = NULL;
	x->arb = NULL;
}

static const char *service_name(const struct conn *x)
{
	return x->arb ? "the arbiter" : "the module";
}

int get_gpus(struct conn *x, struct gs_gpu_rec **gpus, size_t *n)
{
	return x->arb ? gs_arb_get_gpus(x->arb, gpus, n) :
			gs_nl_get_gpus(x->nl, gpus, n);
}

int get_clients(struct conn *x, int64_t gpu, struct gs_client_rec **cl,
		       size_t *n)
{
	return x->arb ? gs_arb_get_clients(x->arb, gpu, cl, n) :
			gs_nl_get_clients(x->nl, gpu, cl, n);
}

/* A refused request, said so that a person knows what to do next. */
int request_failed(struct conn *x, int err, const char *what,
			  const char *target)
{
	const char *km = x->nl ? gs_nl_errmsg(x->nl) : "";

	switch (-err) {
	case EPERM:
	case EACCES:
		if (x->arb)
			fprintf(stderr, "gpuschedctl: permission denied: %s needs root (the arbiter takes changes from uid 0 only)\n",
				what);
		else
			fprintf(stderr, "gpuschedctl: permission denied: %s needs CAP_NET_ADMIN (run as root)\n",
				what);
		break;
	case ESRCH:
		fprintf(stderr, "gpuschedctl: no client %s (gpuschedctl clients lists them)\n",
			target);
		break;
	case ENODEV:
		fprintf(stderr, "gpuschedctl: no GPU %s (gpuschedctl status lists them)\n",
			target);
		break;
	case EINVAL:
	case ERANGE:
	case EOPNOTSUPP:
		fprintf(stderr, "gpuschedctl: %s: %s refused the request: %s\n",
			what, service_name(x), *km ? km : strerror(-err));
		break;
	case EPROTONOSUPPORT:
		fprintf(stderr, "gpuschedctl: %s: the arbiter at %s has no control interface (an older gpuschedd?)\n",
			what, arb_path);
		break;
	default:
		fprintf(stderr, "gpuschedctl: %s: %s%s%s\n", what, strerror(-err),
			*km ? ": " : "", km);
	}
	return EXIT_REQUEST;
}
