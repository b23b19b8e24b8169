// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl clients: the clients, with their share over an interval. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuschedctl.h"

int cmd_clients(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 }
	};
	struct gs_client_rec *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	double interval = 1;
	int64_t gpu = -1;
	uint64_t ta = 0, tb;
	struct conn nl;
	struct row *rows;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+i:g:j", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_seconds("--interval", optarg, &interval))
				return EXIT_USAGE;
			break;
		case 'g':
			if (parse_gpu_opt(optarg, &gpu))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("clients: unknown option");
		}
	}
	if (optind < argc)
		return usage_error("clients: unexpected argument \"%s\"", argv[optind]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	if (interval > 0) {
		rc = sample(&nl, gpu, &a, &na, &ta);
		if (rc)
			goto out;
		sleep_s(interval);
	}
	rc = sample(&nl, gpu, &b, &nb, &tb);
	if (rc)
		goto out;
	rows = make_rows(interval > 0 ? a : NULL, na, b, nb, tb - ta);
	if (!rows) {
		fprintf(stderr, "gpuschedctl: out of memory\n");
		rc = EXIT_REQUEST;
		goto out;
	}
	qsort(rows, nb, sizeof(*rows), cmp_row_gpu_id);
	if (json)
		print_rows_json(rows, nb, interval > 0 ? (tb - ta) / 1e9 : 0);
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
