#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-libfuzzer.sh SECONDS TARGET...
#
# Run each libFuzzer target (build/fuzz/lf-NAME) for SECONDS from its seed
# corpus tests/fuzz/corpus/NAME/, growing a working corpus in
# build/fuzz/corpus-NAME/ (kept between runs, never committed). Crashes,
# leaks and timeouts are written to build/fuzz/artifacts/ and fail the run.
# FUZZ_SEED fixes libFuzzer's -seed (default: a new one, printed). Prints
# one TAP line per target with its executions and corpus size.
#
# FUZZ_RUNS=N (make check, tests/unit/libfuzzer.t): N inputs at most, from
# a fresh corpus in a temporary directory and with address space
# randomisation off (setarch -R: libFuzzer's features include stack
# depths), so that a seed gives the same run every time; SECONDS still
# bounds it.
set -u

secs=$1
shift
out=build/fuzz
mkdir -p "$out/artifacts"
n=0
failed=0
echo "TAP version 13"
echo "1..$#"
for bin in "$@"; do
	n=$((n + 1))
	name=${bin##*/lf-}
	seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	corpus=$out/corpus-$name
	log=$out/lf-$name.log
	runs=
	norand=
	if [ -n "${FUZZ_RUNS:-}" ]; then
		corpus=$(mktemp -d) || exit 1
		runs=-runs=$FUZZ_RUNS
		setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
	fi
	mkdir -p "$corpus"
	# -close_fd_mask=2: the targets log to stderr; libFuzzer and the
	# sanitizers keep their own copy of it for reports.
	# shellcheck disable=SC2086 # empty, or a command and its words
	nice -n 10 $norand "$bin" -seed="$seed" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
		-close_fd_mask=2 -artifact_prefix="$out/artifacts/$name-" $runs \
		"$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	files=$(ls "$corpus" | wc -l)
	[ -z "$runs" ] || rm -rf "$corpus"
	if [ $rc -eq 0 ]; then
		echo "ok $n - lf-$name: seed $seed, ${execs:-?} executions ${runs:+at most }in $secs s, $cov, corpus $files"
	else
		failed=1
		echo "not ok $n - lf-$name: seed $seed, exit status $rc (log: $log)"
		grep -E -A30 '^==[0-9]+==|runtime error|Test unit written' "$log" | head -n 60 | sed 's/^/#   /'
	fi
done
exit $failed
