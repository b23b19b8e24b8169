// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of GPUSCHED_MEM_LIMIT's syntax (libgpusched/memsize.c), as
 * the library and gpusched-run read it. tests/unit/memsize.t runs it
 * plainly and under ASan+UBSan.
 */
#include <errno.h>
#include <stdint.h>

#include "tap.h"
#include "memsize.h"

static void bytes_ok(const char *s, uint64_t want)
{
	uint64_t b;
	unsigned int pct;
	int err = gs_mem_size_parse(s, &b, &pct);

	CHECK(!err && b == want && !pct, "\"%s\" is %llu bytes (err %d, got %llu, pct %u)",
	      s, (unsigned long long)want, err, (unsigned long long)b, pct);
}

static void pct_ok(const char *s, unsigned int want)
{
	uint64_t b;
	unsigned int pct;
	int err = gs_mem_size_parse(s, &b, &pct);

	CHECK(!err && pct == want && !b, "\"%s\" is %u%% (err %d, got %u, bytes %llu)",
	      s, want, err, pct, (unsigned long long)b);
}

static void bad(const char *s, int want)
{
	uint64_t b = 1;
	unsigned int pct = 1;
	int err = gs_mem_size_parse(s, &b, &pct);

	CHECK(err == want && !b && !pct, "\"%s\" is refused with %d (got %d)",
	      s ? s : "(null)", want, err);
}

static void t_bytes(void)
{
	bytes_ok("1", 1);
	bytes_ok("4096", 4096);
	bytes_ok("1K", 1024);
	bytes_ok("1k", 1024);
	bytes_ok("20G", 20ull << 30);
	bytes_ok("20g", 20ull << 30);
	bytes_ok("512M", 512ull << 20);
	bytes_ok("2T", 2ull << 40);
	bytes_ok("18446744073709551615", UINT64_MAX);
	bytes_ok("16777215T", 16777215ull << 40);
}

static void t_pct(void)
{
	pct_ok("1%", 1);
	pct_ok("50%", 50);
	pct_ok("100%", 100);
}

static void t_bad(void)
{
	bad(NULL, -EINVAL);
	bad("", -EINVAL);
	bad("0", -EINVAL);
	bad("0G", -EINVAL);
	bad("0%", -EINVAL);
	bad("101%", -EINVAL);
	bad("-1", -EINVAL);
	bad("+1", -EINVAL);
	bad(" 1", -EINVAL);
	bad("1 ", -EINVAL);
	bad("1GB", -EINVAL);
	bad("1GiB", -EINVAL);
	bad("1.5G", -EINVAL);
	bad("1P", -EINVAL);
	bad("G", -EINVAL);
	bad("%", -EINVAL);
	bad("50%%", -EINVAL);
	bad("18446744073709551616", -ERANGE);
	bad("16777216T", -ERANGE);
}

static const struct tap_test tests[] = {
	{ "bytes, with and without a suffix", t_bytes },
	{ "percentages", t_pct },
	{ "malformed, zero and out of range", t_bad },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
