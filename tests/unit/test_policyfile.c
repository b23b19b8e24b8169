// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of gpuschedd's policy file (daemon/policyfile.c), its rule
 * matching (daemon/rules.c) and the shared names and ranges
 * (daemon/knobs.c): good files, every error with its line, matching on
 * synthetic processes and on this very process through /proc.
 *
 * tests/unit/policyfile.t runs it with GPUSCHED_LABEL=unit-test-label in
 * the environment, from the top of the tree, plainly and under valgrind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "tap.h"
#include "knobs.h"
#include "policy.h"
#include "policyfile.h"
#include "rules.h"

#define LABEL_FROM_DRIVER	"unit-test-label"

static char err[1024];

static struct gs_policy *parse(const char *text)
{
	return gs_policy_parse("t", text, strlen(text), err, sizeof(err));
}

static const struct gs_rule *rule(const struct gs_policy *pol, const char *name)
{
	size_t i;

	for (i = 0; pol && i < pol->nr_rules; i++)
		if (!strcmp(pol->rules[i].name, name))
			return &pol->rules[i];
	return NULL;
}

static void test_good_file(void)
{
	static const char text[] =
		"# a comment\n"
		"; another\n"
		"\n"
		"[gpu]\n"
		"timeslice_us = 5000\n"
		"grace_us=20000   # trailing comment\n"
		"latency_pct = 0\n"
		"[gpu GPU-00112233-4455-6677-8899-aabbccddeeff]\n"
		"  timeslice_us   =   250  \n"
		"window_us = 1000\n"
		"[gpu 0123456789ABCDEF0123456789abcdef]\n"
		"starve_us = 60000000\n"
		"[ rule  web-1 ]\n"
		"user = 1000, 1001 0\n"
		"group = 27\n"
		"exe = python3*, /opt/bin/serve\n"
		"cgroup = /system.slice//web.service/\n"
		"label = web-*\n"
		"weight = 400\n"
		"class = latency\n"
		"cap = none\n"
		"mem_limit = 20G\n"
		"[rule batch.jobs]\n"
		"label = batch\n"
		"class = BATCH\n"
		"cap = 50\n"
		"mem_limit = 25%\n"
		"[rule all]\n"
		"weight = 1\n";
	static const uint8_t u1[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
		0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	struct gs_policy *pol = parse(text);
	const struct gs_rule *r;
	struct gs_knob_set ks;
	uint8_t other[16] = { 1 };

	if (!CHECK(pol, "parse: %s", err))
		return;
	CHECK(pol->nr_rules == 3, "%zu rules", pol->nr_rules);
	CHECK(pol->nr_gpus == 2, "%zu gpus", pol->nr_gpus);
	CHECK(pol->gpu_all.mask == (1U << GS_POL_KNOB_TIMESLICE | 1U << GS_POL_KNOB_GRACE |
				    1U << GS_POL_KNOB_LATENCY_PCT),
	      "gpu_all mask %#x", pol->gpu_all.mask);
	CHECK(pol->gpu_all.val[GS_POL_KNOB_GRACE] == 20000, "grace %u",
	      pol->gpu_all.val[GS_POL_KNOB_GRACE]);

	/* [gpu UUID] over [gpu]; other GPUs get [gpu] alone. */
	gs_policy_gpu_knobs(pol, u1, &ks);
	CHECK(ks.val[GS_POL_KNOB_TIMESLICE] == 250, "slice %u", ks.val[GS_POL_KNOB_TIMESLICE]);
	CHECK(ks.val[GS_POL_KNOB_GRACE] == 20000, "grace %u", ks.val[GS_POL_KNOB_GRACE]);
	CHECK(ks.val[GS_POL_KNOB_WINDOW] == 1000, "window %u", ks.val[GS_POL_KNOB_WINDOW]);
	CHECK(ks.mask == (pol->gpu_all.mask | 1U << GS_POL_KNOB_WINDOW), "mask %#x", ks.mask);
	gs_policy_gpu_knobs(pol, other, &ks);
	CHECK(ks.mask == pol->gpu_all.mask && ks.val[GS_POL_KNOB_TIMESLICE] == 5000,
	      "other GPU: mask %#x slice %u", ks.mask, ks.val[GS_POL_KNOB_TIMESLICE]);
	CHECK(pol->gpus[1].uuid[0] == 0x01 && pol->gpus[1].uuid[15] == 0xef,
	      "bare upper-case UUID");
	/* The same for the arbiter, over its defaults, in nanoseconds. */
	{
		struct gs_pol_params d, p;

		gs_pol_default_params(&d);
		p = d;
		gs_policy_gpu_params(pol, u1, &p);
		CHECK(p.slice_ns == 250000 && p.grace_ns == 20000000 &&
		      p.window_ns == 1000000 && p.latency_pct == 0 &&
		      p.min_grant_ns == d.min_grant_ns && p.starve_ns == d.starve_ns,
		      "arbiter params");
		CHECK(!gs_pol_check_params(&p), "valid for the policy");
	}

	r = rule(pol, "web-1");
	if (CHECK(r, "rule web-1")) {
		CHECK(r->line == 13, "line %u", r->line);
		CHECK(r->match[GS_MATCH_USER].n == 3 &&
		      r->match[GS_MATCH_USER].ids[0] == 1000 &&
		      r->match[GS_MATCH_USER].ids[2] == 0, "users");
		CHECK(r->match[GS_MATCH_GROUP].n == 1, "groups");
		CHECK(r->match[GS_MATCH_EXE].n == 2 &&
		      !strcmp(r->match[GS_MATCH_EXE].strs[1], "/opt/bin/serve"), "exe");
		CHECK(r->match[GS_MATCH_CGROUP].n == 1 &&
		      !strcmp(r->match[GS_MATCH_CGROUP].strs[0], "/system.slice/web.service"),
		      "cgroup normalised: %s", r->match[GS_MATCH_CGROUP].strs[0]);
		CHECK(r->set.mask == GS_PARAM_MASK, "mask %#x", r->set.mask);
		CHECK(r->set.weight == 400 && r->set.sched_class == GPUSCHED_CLASS_LATENCY &&
		      r->set.cap_pct == GPUSCHED_CAP_NONE, "actions");
		CHECK(r->set.mem_limit == 20ULL << 30, "mem_limit %llu",
		      (unsigned long long)r->set.mem_limit);
	}
	r = rule(pol, "batch.jobs");
	if (CHECK(r, "rule batch.jobs"))
		CHECK(r->set.mem_limit == (GS_MEM_PCT_FLAG | 25),
		      "mem_limit in percent %#llx", (unsigned long long)r->set.mem_limit);
	r = rule(pol, "batch.jobs");
	if (CHECK(r, "rule batch.jobs"))
		CHECK(r->set.mask == (GPUSCHED_PARAM_CLASS | GPUSCHED_PARAM_CAP |
				   GPUSCHED_PARAM_MEM_LIMIT) &&
		      r->set.sched_class == GPUSCHED_CLASS_BATCH && r->set.cap_pct == 50,
		      "batch actions");
	gs_policy_free(pol);
}

static void test_crlf_and_empty(void)
{
	struct gs_policy *pol = parse("[rule a]\r\nweight = 7\r\n");

	if (CHECK(pol, "CRLF: %s", err))
		CHECK(pol->rules[0].set.weight == 7, "weight");
	gs_policy_free(pol);
	pol = parse("");
	if (CHECK(pol, "empty: %s", err))
		CHECK(!pol->nr_rules && !pol->nr_gpus && !pol->gpu_all.mask, "empty");
	gs_policy_free(pol);
	pol = parse("# only comments\n\n   \n");
	CHECK(pol, "comments only: %s", err);
	gs_policy_free(pol);
	/* No newline at the end of the file. */
	pol = parse("[rule a]\nclass = normal");
	CHECK(pol && pol->rules[0].set.sched_class == GPUSCHED_CLASS_NORMAL, "no final newline: %s", err);
	gs_policy_free(pol);
}

static const struct {
	const char *text;
	const char *want;	/* "t:LINE: " prefix and a part of the reason */
} bad[] = {
	{ "weight = 1\n", "t:1: weight = ... outside a section" },
	{ "\n\n[gpus]\n", "t:3: unknown section [gpus]" },
	{ "[rule]\n", "t:1: a rule needs a name" },
	{ "[rule a b]\nweight=1\n", "t:1: bad rule name \"a b\"" },
	{ "[rule a\n", "t:1: section header without ']'" },
	{ "[rule a] x\n", "t:1: text after the section header" },
	{ "[gpu GPU-1234]\n", "t:1: bad GPU UUID \"GPU-1234\"" },
	{ "[gpu]\n[gpu]\n", "t:2: [gpu] given twice (first at line 1)" },
	{ "[gpu 00112233445566778899aabbccddeeff]\n#\n"
	  "[gpu GPU-00112233-4455-6677-8899-aabbccddeeff]\n",
	  "t:3: [gpu GPU-00112233-4455-6677-8899-aabbccddeeff] given twice (first at line 1)" },
	{ "[rule a]\nweight=1\n[rule a]\nweight=2\n",
	  "t:3: rule \"a\" given twice (first at line 1)" },
	{ "[gpu]\njunk\n", "t:2: expected KEY = VALUE or [SECTION], got \"junk\"" },
	{ "[gpu]\n = 5\n", "t:2: expected KEY = VALUE: the key is missing" },
	{ "[gpu]\ntimeslice_us =\n", "t:2: timeslice_us has no value" },
	{ "[gpu]\ntimeslice_us = # nothing\n", "t:2: timeslice_us has no value" },
	{ "[gpu]\ntimeslice = 5\n", "t:2: unknown GPU knob \"timeslice\"" },
	{ "[gpu]\ntimeslice_us = 99\n", "t:2: timeslice_us \"99\": out of range (100..10000000)" },
	{ "[gpu]\ntimeslice_us = 10000001\n", "t:2: timeslice_us \"10000001\": out of range" },
	{ "[gpu]\ngrace_us = 999\n", "t:2: grace_us \"999\": out of range (1000..10000000)" },
	{ "[gpu]\nmin_grant_us = 9\n", "t:2: min_grant_us \"9\": out of range (10..1000000)" },
	{ "[gpu]\nstarve_us = 60000001\n", "t:2: starve_us \"60000001\": out of range" },
	{ "[gpu]\nwindow_us = 0\n", "t:2: window_us \"0\": out of range" },
	{ "[gpu]\nlatency_pct = 91\n", "t:2: latency_pct \"91\": out of range (0..90)" },
	{ "[gpu]\ntimeslice_us = -5\n", "t:2: timeslice_us \"-5\": not a number" },
	{ "[gpu]\ntimeslice_us = 5ms\n", "t:2: timeslice_us \"5ms\": not a number" },
	{ "[gpu]\ntimeslice_us = 99999999999999999999999\n", "t:2: timeslice_us \"99999999999999999999999\": not a number" },
	{ "[gpu]\ntimeslice_us = 500\ntimeslice_us = 600\n",
	  "t:3: timeslice_us given twice in this section (first at line 2)" },
	{ "[gpu]\nmem_admission = yes\n", "t:2: mem_admission \"yes\": expected off, refuse or batch" },
	{ "[gpu]\nmem_admission = off\nmem_admission = batch\n",
	  "t:3: mem_admission given twice in this section (first at line 2)" },
	{ "[rule a]\nmem_admission = refuse\n", "t:2: unknown key \"mem_admission\" in a rule" },
	{ "[rule a]\n", "t:1: rule \"a\" sets nothing: give weight, class, cap or mem_limit" },
	{ "[rule a]\nuser = 0\n[rule b]\nweight = 1\n", "t:1: rule \"a\" sets nothing" },
	{ "[rule a]\nweight = 0\n", "t:2: weight \"0\": out of range (1..10000)" },
	{ "[rule a]\nweight = 10001\n", "t:2: weight \"10001\": out of range" },
	{ "[rule a]\nweight = heavy\n", "t:2: weight \"heavy\": not a number" },
	{ "[rule a]\nclass = realtime\n", "t:2: class \"realtime\": expected latency, normal or batch" },
	{ "[rule a]\ncap = 101\n", "t:2: cap \"101\": out of range (1..100 percent, or none)" },
	{ "[rule a]\ncap = 50%\n", "t:2: cap \"50%\": not a number" },
	{ "[rule a]\nweight = 1\nweight = 2\n", "t:3: weight given twice in this section (first at line 2)" },
	{ "[rule a]\nweight = 1\nuser = 0\nuser = 1\n", "t:4: user given twice in this section (first at line 3)" },
	{ "[rule a]\npriority = 1\n", "t:2: unknown key \"priority\" in a rule" },
	{ "[rule a]\nuser = no-such-user-gpusched\n", "t:2: unknown user \"no-such-user-gpusched\"" },
	{ "[rule a]\ngroup = no-such-group-gpusched\n", "t:2: unknown group \"no-such-group-gpusched\"" },
	{ "[rule a]\nuser = 4294967295\n", "t:2: user id \"4294967295\" out of range" },
	{ "[rule a]\nuser = 1,,2\n", "t:2: empty value in the list of user" },
	{ "[rule a]\nexe = a,\n", "t:2: empty value in the list of exe" },
	{ "[rule a]\nlabel = , x\n", "t:2: empty value in the list of label" },
	{ "[rule a]\ncgroup = system.slice\n", "t:2: cgroup \"system.slice\" must be an absolute path" },
	{ "[rule all]\nweight = 1\n\n[rule late]\nuser = 0\nweight = 2\n",
	  "t:4: rule \"late\" can never match: rule \"all\" (line 1) before it" },
};

/* @s on one line, for a diagnostic: newlines as \n. */
static const char *one_line(const char *s)
{
	static char buf[512];
	size_t n = 0;

	for (; *s && n + 3 < sizeof(buf); s++) {
		if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *s;
		}
	}
	buf[n] = '\0';
	return buf;
}

static void test_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gs_policy *pol = parse(bad[i].text);
		const char *colon = strchr(bad[i].want, ' ');
		size_t prefix = colon ? (size_t)(colon - bad[i].want) : 0;

		CHECK(!pol, "accepted: %s", one_line(bad[i].text));
		gs_policy_free(pol);
		if (pol)
			continue;
		/* The location exactly, and the start of the reason. */
		CHECK(!strncmp(err, bad[i].want, prefix) &&
		      strstr(err, bad[i].want + prefix + 1),
		      "for \"%s\":\n#   got  \"%s\"\n#   want \"%s\"", one_line(bad[i].text), err,
		      bad[i].want);
	}
}

static void test_nul_byte(void)
{
	static const char text[] = "[rule a]\nweight\0 = 1\n";
	struct gs_policy *pol = gs_policy_parse("t", text, sizeof(text) - 1,
						err, sizeof(err));

	CHECK(!pol, "accepted a NUL byte");
	gs_policy_free(pol);
	CHECK(strstr(err, "t:2: NUL byte"), "got %s", err);
}

static void test_user_names(void)
{
	struct gs_policy *pol = parse("[rule a]\nuser = root\ngroup = root\nweight = 5\n");

	if (!CHECK(pol, "root: %s", err))
		return;
	CHECK(pol->rules[0].match[GS_MATCH_USER].ids[0] == 0, "root is uid 0");
	CHECK(pol->rules[0].match[GS_MATCH_GROUP].ids[0] == 0, "root is gid 0");
	gs_policy_free(pol);
}

/*
 * The knob table's fields, scales and ranges, against the fields set by
 * hand: the bounds that the file and gpuschedctl take from the table are
 * what gs_pol_check_params() accepts.
 */
static void test_ranges_match_policy(void)
{
	struct gs_pol_params d, p;
	int k;

	gs_pol_default_params(&d);
	for (k = 0; k < GS_POL_NR_KNOBS; k++) {
		const struct gs_pol_knob *ki = &gs_pol_knobs[k];
		uint64_t vals[4] = { ki->min, ki->max, (uint64_t)ki->min - 1,
				     (uint64_t)ki->max + 1 };
		int i;

		for (i = 0; i < 4; i++) {
			uint64_t us = vals[i];
			bool want_ok = i < 2;

			if (i == 2 && ki->min == 0)
				continue;
			p = d;
			switch (k) {
			case GS_POL_KNOB_TIMESLICE: p.slice_ns = us * 1000; break;
			case GS_POL_KNOB_GRACE: p.grace_ns = us * 1000; break;
			case GS_POL_KNOB_MIN_GRANT: p.min_grant_ns = us * 1000; break;
			case GS_POL_KNOB_STARVE: p.starve_ns = us * 1000; break;
			case GS_POL_KNOB_WINDOW: p.window_ns = us * 1000; break;
			case GS_POL_KNOB_LATENCY_PCT: p.latency_pct = (uint32_t)us; break;
			case GS_POL_KNOB_LATENCY_QUEUE: p.latency_queue_ns = us * 1000; break;
			case GS_POL_KNOB_HANDOVER: p.handover_ns = us * 1000; break;
			case GS_POL_KNOB_MEM_DEFAULT_PCT: p.mem_default_pct = (uint32_t)us; break;
			case GS_POL_KNOB_MEM_RESERVE: p.mem_reserve = us << 20; break;
			}
			CHECK((gs_pol_check_params(&p) == 0) == want_ok,
			      "%s = %llu: policy says %d, knobs table says %s",
			      ki->name, (unsigned long long)us,
			      gs_pol_check_params(&p), want_ok ? "ok" : "bad");
		}
	}
	CHECK(gs_pol_check_client_params(GPUSCHED_WEIGHT_MAX, GPUSCHED_CLASS_BATCH, 100) == 0,
	      "client params at the top of the range");
}

static void test_uuid_text(void)
{
	uint8_t u[16], v[16];
	char s[GS_UUID_TEXT_LEN];
	int i;

	for (i = 0; i < 16; i++)
		u[i] = (uint8_t)(i * 17 + 3);
	gs_uuid_format(u, s);
	CHECK(!strcmp(s, "GPU-03142536-4758-697a-8b9c-adbecfe0f102"), "%s", s);
	CHECK(!gs_uuid_parse(s, v) && !memcmp(u, v, 16), "round trip");
	CHECK(!gs_uuid_parse(s + 4, v) && !memcmp(u, v, 16), "without GPU-");
	CHECK(!gs_uuid_parse("gpu-03142536-4758-697A-8B9C-ADBECFE0F102", v) &&
	      !memcmp(u, v, 16), "case");
	CHECK(!gs_uuid_parse("031425364758697a8b9cadbecfe0f102", v) &&
	      !memcmp(u, v, 16), "no dashes");
	CHECK(gs_uuid_parse("GPU-03142536-4758-697a-8b9c-adbecfe0f10", v), "short");
	CHECK(gs_uuid_parse("GPU-03142536-4758-697a-8b9c-adbecfe0f1023", v), "long");
	CHECK(gs_uuid_parse("GPU-0314253-64758-697a-8b9c-adbecfe0f102", v), "dash placement");
	CHECK(gs_uuid_parse("GPU-03142536-4758-697a-8b9c-adbecfe0f1g2", v), "not hex");
	CHECK(gs_uuid_parse("", v), "empty");
}

static void test_mem_text(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} good[] = {
		{ "none", 0 }, { "0", 0 }, { "4096", 4096 }, { "1K", 1024 },
		{ "20G", 20ULL << 30 }, { "20GiB", 20ULL << 30 },
		{ "3gb", 3ULL << 30 }, { "2T", 2ULL << 40 },
		{ "1%", GS_MEM_PCT_FLAG | 1 }, { "100%", GS_MEM_PCT_FLAG | 100 },
	};
	static const char *const bad[] = {
		"", "-1", " 1", "1X", "1KK", "0%", "101%", "5%%", "1.5G",
		"8388608T", "99999999999999999999",
	};
	char out[GS_MEM_TEXT_LEN];
	const char *why;
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(!gs_mem_parse(good[i].s, &v, &why) && v == good[i].v,
		      "\"%s\" -> %llu", good[i].s, (unsigned long long)v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(gs_mem_parse(bad[i], &v, &why), "\"%s\" refused", bad[i]);
	gs_mem_format(20ULL << 30, out);
	CHECK(!strcmp(out, "20G"), "%s", out);
	gs_mem_format(1536, out);
	CHECK(!strcmp(out, "1536"), "%s", out);
	gs_mem_format(GS_MEM_PCT_FLAG | 40, out);
	CHECK(!strcmp(out, "40%"), "%s", out);
	gs_mem_format(0, out);
	CHECK(!strcmp(out, "none"), "%s", out);
}

static void test_command_line_params(void)
{
	struct gpusched_params p = { 0 };
	struct gs_knob_set ks = { 0 };
	char msg[256];

	CHECK(!gs_client_param_parse("weight", "250", &p, msg, sizeof(msg)) &&
	      p.weight == 250, "weight");
	CHECK(!gs_client_param_parse("cap", "0", &p, msg, sizeof(msg)) &&
	      p.cap_pct == 0, "cap 0 is none");
	CHECK(!gs_client_param_parse("class", "latency", &p, msg, sizeof(msg)) &&
	      p.sched_class == 0, "class");
	CHECK(!gs_client_param_parse("mem_limit", "512M", &p, msg, sizeof(msg)) &&
	      p.mem_limit == 512ULL << 20, "mem_limit");
	CHECK(p.mask == GS_PARAM_MASK, "mask %#x", p.mask);
	CHECK(gs_client_param_parse("mem_limit", "101%", &p, msg, sizeof(msg)) &&
	      strstr(msg, "1..100"), "%s", msg);
	CHECK(gs_client_param_parse("nice", "1", &p, msg, sizeof(msg)) &&
	      strstr(msg, "unknown client parameter \"nice\""), "%s", msg);
	CHECK(!gs_knob_parse("latency_pct", "90", &ks, msg, sizeof(msg)) &&
	      ks.mask == 1U << GS_POL_KNOB_LATENCY_PCT && ks.val[GS_POL_KNOB_LATENCY_PCT] == 90,
	      "knob");
	CHECK(gs_knob_parse("grace_us", "", &ks, msg, sizeof(msg)) &&
	      strstr(msg, "not a number"), "%s", msg);
	/* The messages list the names of the policy's tables, as they did. */
	CHECK(gs_knob_parse("slice_us", "1", &ks, msg, sizeof(msg)) &&
	      !strcmp(msg, "unknown GPU knob \"slice_us\" (timeslice_us, grace_us, min_grant_us, starve_us, window_us, latency_pct, latency_queue_us, handover_us, mem_default_pct or mem_reserve_mb)"),
	      "%s", msg);
	CHECK(gs_knob_parse("grace_us", "999", &ks, msg, sizeof(msg)) &&
	      !strcmp(msg, "grace_us \"999\": out of range (1000..10000000)"), "%s", msg);
	CHECK(gs_client_param_parse("class", "fast", &p, msg, sizeof(msg)) &&
	      !strcmp(msg, "class \"fast\": expected latency, normal or batch"),
	      "%s", msg);
	CHECK(!strcmp(gs_class_name(2), "batch") && !strcmp(gs_class_name(9), "?"),
	      "class names");
}

/* A process as the rules see it, with nothing left to read from /proc. */
static void fake_proc(struct gs_proc *p, uint32_t uid, uint32_t gid,
		      const char *exe, const char *comm, const char *cgroup,
		      const char *label)
{
	gs_proc_init(p, 1, uid, gid, comm);
	p->proc = "/nonexistent";
	p->loaded = (1U << GS_NR_MATCH) - 1;
	if (exe) {
		snprintf(p->exe, sizeof(p->exe), "%s", exe);
		p->known |= 1U << GS_MATCH_EXE;
	}
	if (cgroup) {
		snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgroup);
		p->known |= 1U << GS_MATCH_CGROUP;
	}
	if (label) {
		snprintf(p->label, sizeof(p->label), "%s", label);
		p->known |= 1U << GS_MATCH_LABEL;
	}
}

static const char *match_name(const struct gs_policy *pol, struct gs_proc *p)
{
	const struct gs_rule *r = gs_rules_match(pol, p);

	return r ? r->name : "(none)";
}

static void test_matching(void)
{
	static const char text[] =
		"[rule svc]\n"
		"cgroup = /system.slice/svc.service\n"
		"label = inference, web-*\n"
		"class = latency\n"
		"[rule alice-python]\n"
		"user = 1000\n"
		"exe = python3*\n"
		"weight = 300\n"
		"[rule opt-tools]\n"
		"exe = /opt/*/bin/*\n"
		"weight = 20\n"
		"[rule video]\n"
		"group = 44\n"
		"cap = 30\n"
		"[rule slice]\n"
		"cgroup = /user.slice\n"
		"weight = 50\n"
		"[rule rest]\n"
		"class = batch\n";
	struct gs_policy *pol = parse(text);
	struct gs_proc p;
	uint32_t groups[2] = { 10, 44 };

	if (!CHECK(pol, "parse: %s", err))
		return;
	/* Both keys must match: cgroup and label. */
	fake_proc(&p, 5, 5, "/usr/bin/srv", "srv", "/system.slice/svc.service", "inference");
	CHECK(!strcmp(match_name(pol, &p), "svc"), "svc: %s", match_name(pol, &p));
	fake_proc(&p, 5, 5, "/usr/bin/srv", "srv", "/system.slice/svc.service/worker", "web-7");
	CHECK(!strcmp(match_name(pol, &p), "svc"), "svc child cgroup, glob label");
	fake_proc(&p, 5, 5, "/usr/bin/srv", "srv", "/system.slice/svc.service", NULL);
	CHECK(!strcmp(match_name(pol, &p), "rest"), "no label: %s", match_name(pol, &p));
	fake_proc(&p, 5, 5, "/usr/bin/srv", "srv", "/system.slice/svc.servicex", "inference");
	CHECK(!strcmp(match_name(pol, &p), "rest"), "prefix by component: %s",
	      match_name(pol, &p));
	/* user and exe basename glob; the first match wins over "slice". */
	fake_proc(&p, 1000, 1000, "/usr/bin/python3.11", "python3", "/user.slice/u", NULL);
	CHECK(!strcmp(match_name(pol, &p), "alice-python"), "alice: %s", match_name(pol, &p));
	fake_proc(&p, 1001, 1000, "/usr/bin/python3.11", "python3", "/user.slice/u", NULL);
	CHECK(!strcmp(match_name(pol, &p), "slice"), "bob: %s", match_name(pol, &p));
	/* Unreadable exe: names match on comm, paths do not match at all. */
	fake_proc(&p, 1000, 1000, NULL, "python3", "/", NULL);
	CHECK(!strcmp(match_name(pol, &p), "alice-python"), "comm: %s", match_name(pol, &p));
	fake_proc(&p, 7, 7, NULL, "tool", "/", NULL);
	CHECK(!strcmp(match_name(pol, &p), "rest"), "no exe path: %s", match_name(pol, &p));
	fake_proc(&p, 7, 7, "/opt/cuda/bin/tool", "tool", "/", NULL);
	CHECK(!strcmp(match_name(pol, &p), "opt-tools"), "path glob: %s", match_name(pol, &p));
	/* Primary group, and supplementary groups. */
	fake_proc(&p, 7, 44, "/bin/x", "x", "/", NULL);
	CHECK(!strcmp(match_name(pol, &p), "video"), "primary group: %s", match_name(pol, &p));
	fake_proc(&p, 7, 7, "/bin/x", "x", "/", NULL);
	p.groups = groups;
	p.nr_groups = 2;
	p.known |= 1U << GS_MATCH_GROUP;
	CHECK(!strcmp(match_name(pol, &p), "video"), "supplementary: %s", match_name(pol, &p));
	gs_policy_free(pol);

	/* A policy without a catch-all leaves unmatched clients alone. */
	pol = parse("[rule a]\nuser = 1\nweight = 2\n");
	if (CHECK(pol, "parse: %s", err)) {
		fake_proc(&p, 2, 2, "/bin/x", "x", "/", NULL);
		CHECK(!gs_rules_match(pol, &p), "matched nothing");
	}
	gs_policy_free(pol);

	/* A cgroup of "/" matches every process that has one. */
	pol = parse("[rule root-cg]\ncgroup = /\nweight = 2\n");
	if (CHECK(pol, "parse: %s", err)) {
		fake_proc(&p, 2, 2, "/bin/x", "x", "/a/b", NULL);
		CHECK(gs_rules_match(pol, &p), "/ matches /a/b");
	}
	gs_policy_free(pol);
}

/* What /proc says about this process; the driver set our label. */
static void test_proc_self(void)
{
	char text[2048], cg[1024] = "", line[1024], label[GS_LABEL_LEN], *exe, *base;
	const char *rname;
	struct gpusched_params out;
	struct gs_policy *pol;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			snprintf(cg, sizeof(cg), "%.*s", (int)strcspn(line + 3, "\n"),
				 line + 3);
	if (f)
		fclose(f);
	if (!getenv("GPUSCHED_LABEL") ||
	    strcmp(getenv("GPUSCHED_LABEL"), LABEL_FROM_DRIVER)) {
		tap_diag("GPUSCHED_LABEL is not %s: run me through tests/unit/policyfile.t",
			 LABEL_FROM_DRIVER);
		CHECK(0, "environment");
		return;
	}
	/* Under valgrind, this is valgrind's tool: take what /proc says. */
	exe = realpath("/proc/self/exe", NULL);
	if (!CHECK(exe, "/proc/self/exe: %s", strerror(errno)))
		return;
	base = strrchr(exe, '/') + 1;
	snprintf(text, sizeof(text),
		 "[rule wrong-label]\nlabel = other\nweight = 1\n"
		 "[rule wrong-user]\nuser = %u\nweight = 2\n"
		 "[rule me]\nuser = %u\nexe = %.3s*\nlabel = unit-*\n"
		 "%s%s%s" "group = %u\nweight = 3\nclass = batch\n",
		 getuid() + 1, getuid(), base, *cg ? "cgroup = " : "", cg,
		 *cg ? "\n" : "", getgid());
	free(exe);
	pol = parse(text);
	if (!CHECK(pol, "parse: %s\n%s", err, text))
		return;
	CHECK(gs_proc_label(getpid(), label, sizeof(label)) &&
	      !strcmp(label, LABEL_FROM_DRIVER), "our label: %s", label);
	CHECK(!gs_proc_label(0x3fffffff, label, sizeof(label)) && !*label,
	      "no label of a gone process");
	CHECK(gs_rules_classify(pol, getpid(), getuid(), getgid(), LABEL_FROM_DRIVER,
				&out, &rname) == 1,
	      "no rule matched this process");
	CHECK(rname && !strcmp(rname, "me"), "rule %s", rname ? rname : "(none)");
	CHECK(out.mask == (GPUSCHED_PARAM_WEIGHT | GPUSCHED_PARAM_CLASS) &&
	      out.weight == 3 && out.sched_class == GPUSCHED_CLASS_BATCH, "params");
	/* Without the label given, the environment is not read: no label. */
	CHECK(gs_rules_classify(pol, getpid(), getuid(), getgid(), NULL, &out,
				&rname) == 0 && !rname, "label rules without a label");
	/* A pid with no process: only uid/gid keys can match. */
	CHECK(gs_rules_classify(pol, 0x3fffffff, getuid() + 1, 0, NULL, &out,
				&rname) == 1 &&
	      !strcmp(rname, "wrong-user"), "gone process, by uid");
	CHECK(gs_rules_classify(pol, 0x3fffffff, 12345, 0, NULL, &out, &rname) == 0 &&
	      !rname && !out.mask, "gone process, nothing");
	gs_policy_free(pol);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void test_load_file(void)
{
	char dir[] = "/tmp/gs-policyfile-XXXXXX", path[128], want[256];
	struct gs_policy *pol;

	if (!CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno)))
		return;
	snprintf(path, sizeof(path), "%s/gpusched.conf", dir);
	write_file(path, "[rule a]\nweight = 9\n", 0644);
	pol = gs_policy_load(path, err, sizeof(err));
	CHECK(pol && pol->nr_rules == 1 && !strcmp(pol->path, path), "load: %s", err);
	gs_policy_free(pol);

	write_file(path, "[rule a]\nweight = 9\n\nclass = fast\n", 0644);
	pol = gs_policy_load(path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:4: class \"fast\"", path);
	CHECK(!pol && !strncmp(err, want, strlen(want)), "got %s", err);
	gs_policy_free(pol);

	write_file(path, "[rule a]\nweight = 9\n", 0666);
	pol = gs_policy_load(path, err, sizeof(err));
	CHECK(!pol && strstr(err, "writable by every user"), "world-writable: %s", err);
	gs_policy_free(pol);
	unlink(path);

	pol = gs_policy_load(path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s: cannot open: %s", path, strerror(ENOENT));
	CHECK(!pol && !strcmp(err, want), "missing: %s", err);
	pol = gs_policy_load(dir, err, sizeof(err));
	CHECK(!pol && strstr(err, "not a regular file"), "directory: %s", err);
	rmdir(dir);
}

/*
 * The policy file installed sets nothing (a valid file: no knob, no rule);
 * the example shipped beside it is a valid policy.
 */
static void test_shipped_files(void)
{
	struct gs_policy *pol = gs_policy_load("etc/gpusched.conf", err, sizeof(err));
	struct gs_proc p;

	if (CHECK(pol, "etc/gpusched.conf: %s", err))
		CHECK(!pol->gpu_all.mask && !pol->nr_gpus && !pol->nr_rules,
		      "installed file: knobs %#x, %zu GPUs, %zu rules",
		      pol->gpu_all.mask, pol->nr_gpus, pol->nr_rules);
	gs_policy_free(pol);
	pol = gs_policy_load("etc/gpusched.conf.example", err, sizeof(err));
	if (!CHECK(pol, "etc/gpusched.conf.example: %s", err))
		return;
	CHECK(pol->nr_rules >= 3, "%zu rules", pol->nr_rules);
	fake_proc(&p, 0, 0, "/usr/bin/nvidia-smi", "nvidia-smi", "/", NULL);
	CHECK(!strcmp(match_name(pol, &p), "admin-tools"), "%s", match_name(pol, &p));
	gs_policy_free(pol);
}

/* mem_admission: parsed per GPU section; the sum it judges. */
static void test_mem_admission(void)
{
	static const uint8_t one[GPUSCHED_UUID_LEN] = { 0x00, 0x11, 0x22, 0x33,
		0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const uint8_t other[GPUSCHED_UUID_LEN] = { 1 };
	const uint64_t G = 1ULL << 30;
	struct gs_policy *pol;

	pol = parse("[gpu]\nmem_reserve_mb = 1024\n");
	if (CHECK(pol, "%s", err))
		CHECK(gs_policy_gpu_admit(pol, one) == GS_ADMIT_OFF, "default off");
	gs_policy_free(pol);
	pol = parse("[gpu]\nmem_admission = refuse\n"
		    "[gpu 00112233-4455-6677-8899-aabbccddeeff]\nmem_admission = batch\n");
	if (CHECK(pol, "%s", err)) {
		CHECK(gs_policy_gpu_admit(pol, one) == GS_ADMIT_BATCH, "[gpu UUID] over [gpu]");
		CHECK(gs_policy_gpu_admit(pol, other) == GS_ADMIT_REFUSE, "[gpu] for the rest");
	}
	gs_policy_free(pol);
	pol = parse("[gpu 00112233-4455-6677-8899-aabbccddeeff]\ntimeslice_us = 500\n");
	if (CHECK(pol, "%s", err))
		CHECK(gs_policy_gpu_admit(pol, one) == GS_ADMIT_OFF,
		      "a GPU section without the key leaves it off");
	gs_policy_free(pol);

	/* 8 GiB less 1 GiB of reserve: 7 GiB of limits. */
	CHECK(!gs_mem_admit_over(8 * G, G, 4 * G, 3 * G), "exactly the room");
	CHECK(gs_mem_admit_over(8 * G, G, 4 * G, 3 * G + 1), "a byte past it");
	CHECK(!gs_mem_admit_over(8 * G, G, 0, 0), "no limit counts as all of it,");
	CHECK(gs_mem_admit_over(8 * G, G, 1, 0), "... which only a client alone may have");
	CHECK(gs_mem_admit_over(8 * G, G, UINT64_MAX, 1), "a saturated sum");
	CHECK(gs_mem_admit_over(8 * G, 9 * G, 0, 1), "a reserve of more than the memory");
	CHECK(!gs_mem_admit_over(0, G, UINT64_MAX, 0), "memory unknown: admitted");
	CHECK(gs_mem_admit_counted(8 * G, G, 0) == 7 * G, "none counted as 7 GiB");
	CHECK(gs_mem_admit_counted(8 * G, G, 2 * G) == 2 * G, "a limit as it is");
	CHECK(gs_mem_admit_counted(G, 2 * G, 0) == 1, "all reserved: one byte");
}

static const struct tap_test tests[] = {
	{ "a good file: gpu sections, rules, every key", test_good_file },
	{ "CRLF, empty files, comments, no final newline", test_crlf_and_empty },
	{ "every error names its line and reason", test_errors },
	{ "a NUL byte is refused", test_nul_byte },
	{ "user and group names resolve", test_user_names },
	{ "the knob table's fields and ranges are gs_pol_check_params()'s", test_ranges_match_policy },
	{ "GPU UUID text forms", test_uuid_text },
	{ "KEY=VALUE parsing shared with gpuschedctl", test_command_line_params },
	{ "memory sizes: bytes, K/M/G/T, percent, none", test_mem_text },
	{ "matching: and across keys, or within, first match wins", test_matching },
	{ "matching this process through /proc", test_proc_self },
	{ "loading files: errors, permissions", test_load_file },
	{ "etc/gpusched.conf sets nothing, the example is valid", test_shipped_files },
	{ "mem_admission: per GPU, and the sum it judges", test_mem_admission },
};

int main(int argc, char **argv)
{
	return tap_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
