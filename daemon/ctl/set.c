// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl set: a GPU's knobs, a client's weight, class and cap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuschedctl.h"
#include "knobs.h"

static int split_kv(char *arg, char **key, char **value)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return usage_error("\"%s\": expected KEY=VALUE", arg);
	*eq = '\0';
	*key = arg;
	*value = eq + 1;
	return 0;
}

/* The index of the GPU named by its index or UUID. */
static int resolve_gpu(struct conn *nl, const char *s, uint32_t *index)
{
	uint8_t uuid[GPUSCHED_UUID_LEN];
	struct gs_gpu_rec *gpus = NULL;
	const char *why;
	size_t n, i;
	int err;

	if (!gs_parse_u32(s, 0, UINT32_MAX, index, &why))
		return 0;
	if (gs_uuid_parse(s, uuid))
		return EXIT_USAGE;	/* set_gpu() checked it */
	err = get_gpus(nl, &gpus, &n);
	if (err)
		return request_failed(nl, err, "listing GPUs", "");
	for (i = 0; i < n; i++) {
		if (!memcmp(gpus[i].uuid, uuid, sizeof(uuid))) {
			*index = gpus[i].index;
			free(gpus);
			return 0;
		}
	}
	free(gpus);
	fprintf(stderr, "gpuschedctl: no GPU %s (gpuschedctl status lists them; a GPU appears when its first client attaches)\n",
		s);
	return EXIT_REQUEST;
}

static int set_gpu(int argc, char **argv)
{
	uint8_t uuid[GPUSCHED_UUID_LEN];
	struct gs_knob_set ks = { 0 };
	char msg[256], target[32];
	char *key = NULL, *value = NULL;
	struct conn nl;
	const char *why;
	uint32_t index;
	int i, rc, err;

	if (argc < 2)
		return usage_error("set gpu UUID|INDEX KEY=VALUE...");
	if (gs_parse_u32(argv[0], 0, UINT32_MAX, &index, &why) &&
	    gs_uuid_parse(argv[0], uuid))
		return usage_error("\"%s\" is neither a GPU index nor a UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
				   argv[0]);
	for (i = 1; i < argc; i++) {
		if (split_kv(argv[i], &key, &value))
			return EXIT_USAGE;
		if (gs_knob_parse(key, value, &ks, msg, sizeof(msg)))
			return usage_error("%s", msg);
	}
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	rc = resolve_gpu(&nl, argv[0], &index);
	if (!rc) {
		err = nl.arb ? gs_arb_set_gpu(nl.arb, index, &ks) :
			       gs_nl_set_gpu(nl.nl, index, &ks);
		snprintf(target, sizeof(target), "gpu%u", index);
		if (err)
			rc = request_failed(&nl, err, "changing a GPU's knobs", target);
	}
	conn_close(&nl);
	return rc;
}

static int set_client(int argc, char **argv)
{
	struct gpusched_params p = { 0 };
	char msg[256], target[48];
	char *key = NULL, *value = NULL;
	const char *why;
	int64_t gpu = -1;
	struct conn nl;
	uint32_t pid, v;
	int i, err, rc;

	if (argc < 2)
		return usage_error("set client PID [gpu=INDEX] KEY=VALUE...");
	if (gs_parse_u32(argv[0], 1, INT32_MAX, &pid, &why))
		return usage_error("\"%s\" is not a process id", argv[0]);
	for (i = 1; i < argc; i++) {
		if (split_kv(argv[i], &key, &value))
			return EXIT_USAGE;
		if (!strcmp(key, "gpu")) {
			if (gs_parse_u32(value, 0, UINT32_MAX, &v, &why))
				return usage_error("gpu=%s: %s", value, why);
			gpu = v;
		} else if (gs_client_param_parse(key, value, &p, msg, sizeof(msg))) {
			return usage_error("%s", msg);
		}
	}
	if (!p.mask)
		return usage_error("set client: nothing to set (weight, class, cap or mem_limit)");
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	err = nl.arb ? gs_arb_set_client(nl.arb, 0, pid, gpu, &p) :
		       gs_nl_set_client(nl.nl, 0, pid, gpu, &p, -1);
	if (gpu >= 0)
		snprintf(target, sizeof(target), "of pid %u on gpu%lld", pid,
			 (long long)gpu);
	else
		snprintf(target, sizeof(target), "with pid %u", pid);
	if (err)
		rc = request_failed(&nl, err, "changing a client", target);
	conn_close(&nl);
	return rc;
}

int cmd_set(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("set gpu|client ...");
	if (strcmp(argv[1], "gpu") && strcmp(argv[1], "client"))
		return usage_error("set %s: expected set gpu or set client", argv[1]);
	if (!strcmp(argv[1], "gpu"))
		return set_gpu(argc - 2, argv + 2);
	return set_client(argc - 2, argv + 2);
}
