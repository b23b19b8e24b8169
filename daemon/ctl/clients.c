// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl clients: the clients, with their share over an interval. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuschedctl.h"

int cmd_clients(int argc, char **argv)
{
	struct view_opts v = { .interval = 1, .count = -1, .gpu = -1 };
	struct gs_client_rec *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	uint64_t ta = 0, tb;
	struct conn nl;
	struct row *rows;
	int rc;

	if (parse_view_opts(argc, argv, false, &v))
		return EXIT_USAGE;
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	if (v.interval > 0) {
		rc = sample(&nl, v.gpu, &a, &na, &ta);
		if (rc)
			goto out;
		sleep_s(v.interval);
	}
	rc = sample(&nl, v.gpu, &b, &nb, &tb);
	if (rc)
		goto out;
	rows = make_rows(v.interval > 0 ? a : NULL, na, b, nb, tb - ta);
	if (!rows) {
		fprintf(stderr, "gpuschedctl: out of memory\n");
		rc = EXIT_REQUEST;
		goto out;
	}
	qsort(rows, nb, sizeof(*rows), cmp_row_gpu_id);
	if (json)
		print_rows_json(rows, nb, v.interval > 0 ? (tb - ta) / 1e9 : 0);
	else if (!nb)
		printf("no clients\n");
	else
		print_rows(rows, nb, SIZE_MAX);
	free(rows);
out:
	free(a);
	free(b);
	conn_close(&nl);
	return rc;
}
