#!/bin/sh
# Runs every test file under test/. Node 20 does not expand globs given to --test, so the list is built
# here and an empty list is a failure (a suite that finds nothing must not pass).
#
# The files are compiled once first (scripts/build-tests.mjs → .test-build/, a few seconds): each test
# process then loads JavaScript instead of compiling through tsx, about two CPU-seconds less per process.
# Children the tests start (servers, CLIs, MCP servers) run compiled too (WARREN_TEST_BUILD). Stack traces
# point at the .ts sources (source maps). WARREN_TEST_TSX=1 runs the sources through tsx instead.
#
# Time limits: every test has 30 s (WARREN_TEST_TIMEOUT_MS; scripts/per-test-timeout.mjs applies it to each
# `it`/`test` without its own { timeout }), and every test process 600 s (WARREN_TEST_FILE_TIMEOUT_MS: Node 20's
# --test-timeout bounds a whole file). Waits inside tests have their own deadlines (test/helpers/wait.ts),
# so a broken behaviour fails its assertion in seconds; these limits only catch what still hangs.
# The 10 slowest files, and the 10 that used most CPU, are printed at the end (scripts/slowest-files.mjs).
# Arguments, when given, replace the file list (e.g. sh scripts/test.sh test/integration/cluster*.test.ts).
set -eu
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
  files="$*"
else
  files=$(find test -name '*.test.ts' | sort)
fi
if [ -z "$files" ]; then
  echo "no test files found under test/" >&2
  exit 1
fi
count=$(echo "$files" | wc -w)
echo "running $count test files" >&2
export WARREN_TEST_TIMEOUT_MS="${WARREN_TEST_TIMEOUT_MS:-30000}"
# Each test process records its CPU time here; the 10 costliest files are printed at the end.
# A WARREN_TEST_CPU_DIR given by the caller is kept (one JSON line per test process, for a full listing).
if [ -n "${WARREN_TEST_CPU_DIR:-}" ]; then
  mkdir -p "$WARREN_TEST_CPU_DIR"
  cpu_tmp=
else
  WARREN_TEST_CPU_DIR=$(mktemp -d "${TMPDIR:-/tmp}/warren-test-cpu.XXXXXX")
  cpu_tmp=$WARREN_TEST_CPU_DIR
fi
export WARREN_TEST_CPU_DIR
# The run's first embedded PostgreSQL start keeps its fresh data dir here; later starts copy it instead of
# running initdb (test/helpers/embedded-postgres.ts). Under /tmp: as root the data belongs to `postgres`.
WARREN_TEST_PG_TEMPLATE=$(mktemp -d /tmp/warren-pg-template.XXXXXX)
export WARREN_TEST_PG_TEMPLATE
trap 'rm -rf ${cpu_tmp:+"$cpu_tmp"} ${WARREN_TEST_BUILD:+"$WARREN_TEST_BUILD"} "$WARREN_TEST_PG_TEMPLATE" ${coverage_dir:+"$coverage_dir"}' EXIT
if [ "${WARREN_TEST_TSX:-}" = "1" ]; then
  loader="--import tsx"
else
  # This run's own build folder, removed at the end (two runs at once never share one).
  WARREN_TEST_BUILD=".test-build/run-$$"
  export WARREN_TEST_BUILD
  # shellcheck disable=SC2086
  node scripts/build-tests.mjs --outdir "$WARREN_TEST_BUILD" $files
  # The build names the processes to run: unit-test folders share one each (see build-tests.mjs).
  files=$(cat "$WARREN_TEST_BUILD/run-list.txt")
  loader="--enable-source-maps"
fi
# WARREN_TEST_COVERAGE=1: every process writes V8 coverage, mapped to the .ts lines at the end (docs/testing.md).
if [ "${WARREN_TEST_COVERAGE:-}" = "1" ]; then
  coverage_dir=$(mktemp -d "${TMPDIR:-/tmp}/warren-test-v8.XXXXXX")
  export NODE_V8_COVERAGE="$coverage_dir"
fi
status=0
# shellcheck disable=SC2086
node $loader --import ./scripts/per-test-timeout.mjs --test \
  --test-concurrency="${WARREN_TEST_CONCURRENCY:-3}" \
  --test-timeout="${WARREN_TEST_FILE_TIMEOUT_MS:-600000}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./scripts/slowest-files.mjs --test-reporter-destination=stderr \
  $files || status=$?
if [ -n "${coverage_dir:-}" ]; then
  all=--all; if [ "$#" -gt 0 ]; then all=; fi # the floor applies to the whole suite only
  node scripts/coverage-report.mjs "$coverage_dir" $all || { s=$?; [ "$status" -ne 0 ] || status=$s; }
fi
exit "$status"
