// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl status: the GPUs, their knobs, state and totals. */
#include <stdio.h>
#include <stdlib.h>

#include "gpuschedctl.h"
#include "knobs.h"

static void print_knobs_json(const struct gs_knob_set *ks)
{
	int k;

	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if (ks->mask & (1U << k))
			printf(",\"%s\":%u", gs_pol_knobs[k].name, ks->val[k]);
}

int cmd_status(int argc, char **argv)
{
	char uuid[GS_UUID_TEXT_LEN], b1[32], b2[GS_MEM_TEXT_LEN];
	struct gs_gpu_rec *gpus = NULL;
	struct conn nl;
	size_t n = 0, i;
	int rc, err, k;

	if (argc > 1)
		return usage_error("status: unexpected argument \"%s\"", argv[1]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	err = get_gpus(&nl, &gpus, &n);
	if (err) {
		rc = request_failed(&nl, err, "listing GPUs", "");
		goto out;
	}
	if (json) {
		printf("{\"gpus\":[");
		for (i = 0; i < n; i++) {
			const struct gs_gpu_rec *g = &gpus[i];

			gs_uuid_format(g->uuid, uuid);
			printf("%s{\"index\":%u,\"uuid\":\"%s\",\"clients\":%u,\"waiting\":%u,\"holder_pid\":%u,\"grants\":%llu,\"overruns\":%llu,\"held_ns\":%llu,\"mem_reserved\":%llu",
			       i ? "," : "", g->index, uuid, g->nr_clients,
			       g->nr_waiting, g->holder_pid,
			       (unsigned long long)g->grants,
			       (unsigned long long)g->overruns,
			       (unsigned long long)g->held_ns,
			       (unsigned long long)g->mem_reserved);
			print_knobs_json(&g->knobs);
			putchar('}');
		}
		printf("]}\n");
		goto out;
	}
	if (!n)
		printf("no GPUs yet: a GPU appears when its first client attaches\n");
	for (i = 0; i < n; i++) {
		const struct gs_gpu_rec *g = &gpus[i];

		gs_uuid_format(g->uuid, uuid);
		printf("%sgpu%u  %s\n", i ? "\n" : "", g->index, uuid);
		printf("  clients %u, waiting %u, ", g->nr_clients, g->nr_waiting);
		if (g->holder_pid)
			printf("held by pid %u\n", g->holder_pid);
		else
			printf("free\n");
		printf("  grants %llu, overruns %llu, held %s in all, memory reserved %s\n",
		       (unsigned long long)g->grants,
		       (unsigned long long)g->overruns,
		       dur(g->held_ns, b1, sizeof(b1)),
		       mem_text(g->mem_reserved, b2));
		printf(" ");
		for (k = 0; k < GS_POL_NR_KNOBS; k++)
			if (g->knobs.mask & (1U << k))
				printf(" %s=%u", gs_pol_knobs[k].name, g->knobs.val[k]);
		printf("\n");
	}
out:
	free(gpus);
	conn_close(&nl);
	return rc;
}
