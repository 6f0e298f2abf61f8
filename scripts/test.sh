#!/bin/sh
# Runs every test file under test/ through tsx. Node 20 does not expand globs given to --test,
# so the list is built here and an empty list is a failure (a suite that finds nothing must not pass).
set -eu
cd "$(dirname "$0")/.."
files=$(find test -name '*.test.ts' | sort)
if [ -z "$files" ]; then
  echo "no test files found under test/" >&2
  exit 1
fi
count=$(echo "$files" | wc -l)
echo "running $count test files" >&2
# shellcheck disable=SC2086
exec node --import tsx --test --test-concurrency=2 --test-timeout=300000 $files
