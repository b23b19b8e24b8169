// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl top: a live view of the clients. */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "gpuschedctl.h"

static struct termios saved_tio;
static bool tio_saved;

static void restore_tty(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	if (tio_saved)
		fputs("\033[?25h", stdout);	/* cursor back */
	tio_saved = false;
}

int cmd_top(int argc, char **argv)
{
	struct view_opts v = { .interval = 2, .count = -1, .gpu = -1 };
	struct gs_client_rec *prev = NULL, *cur = NULL;
	size_t nprev = 0, ncur = 0;
	uint64_t tprev = 0, tcur;
	struct conn nl;
	bool live;
	int rc;

	if (parse_view_opts(argc, argv, true, &v))
		return EXIT_USAGE;
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* The live view needs a terminal both ways; otherwise print batches. */
	live = !json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (live && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		struct termios tio = saved_tio;

		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		tio_saved = !tcsetattr(STDIN_FILENO, TCSANOW, &tio);
		atexit(restore_tty);
		fputs("\033[?25l", stdout);	/* hide the cursor */
	}
	rc = sample(&nl, v.gpu, &prev, &nprev, &tprev);
	while (!rc && !stop && v.count != 0) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		struct winsize ws = { 0 };
		struct row *rows;
		char clock[16];
		time_t t;

		/* Sleep the interval, or until a key arrives in the live view. */
		if (live) {
			uint64_t end_ns = now_ns() + (uint64_t)(v.interval * 1e9);
			bool quit = false;

			while (!stop && !quit && now_ns() < end_ns) {
				char ch;
				int ms = (int)((end_ns - now_ns()) / 1000000) + 1;

				if (poll(&pfd, 1, ms) > 0 && read(STDIN_FILENO, &ch, 1) == 1)
					quit = ch == 'q' || ch == 'Q';
			}
			if (quit)
				break;
		} else {
			sleep_s(v.interval);
		}
		if (stop)
			break;
		rc = sample(&nl, v.gpu, &cur, &ncur, &tcur);
		if (rc)
			break;
		rows = make_rows(prev, nprev, cur, ncur, tcur - tprev);
		if (!rows) {
			rc = EXIT_REQUEST;
			break;
		}
		qsort(rows, ncur, sizeof(*rows), cmp_row_share);
		t = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&t));
		if (json) {
			print_rows_json(rows, ncur, (tcur - tprev) / 1e9);
		} else {
			size_t rows_max = SIZE_MAX;

			if (live) {
				fputs("\033[H\033[2J", stdout);
				if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
				    ws.ws_row > 4)
					rows_max = ws.ws_row - 4;
			}
			printf("gpuschedctl top - %s, %zu clients, every %.1f s%s\n\n",
			       clock, ncur, v.interval, live ? " (q quits)" : "");
			print_rows(rows, ncur, rows_max);
			if (!live)
				printf("\n");
		}
		fflush(stdout);
		free(rows);
		free(prev);
		prev = cur;
		nprev = ncur;
		tprev = tcur;
		cur = NULL;
		if (v.count > 0)
			v.count--;
	}
	restore_tty();
	free(prev);
	free(cur);
	conn_close(&nl);
	return rc;
}
