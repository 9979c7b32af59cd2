#!/usr/bin/env bash
# The project's test command (README.md): static checks, then every test
# twice. The race pass runs each package under the race detector, where the
# slowest sweeps check an even sample of their rows; the full pass runs
# without it, where every oracle row, every published perft count, the
# retrograde solves and the Geister total-5 build are checked in full.
# Servers the tests need (versitygw for S3) are started by the tests
# themselves on loopback; .ci/run installs them first.
#
# testdata/ is named explicitly: Go's ./... leaves out directories named
# testdata, and the embedded-fixtures package there has tests of its own.
# Each stage's wall time is printed at the end (and kept in the log); the
# whole run is meant to stay under 45 minutes on two cores.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
log=${TBFS_TEST_LOG:-/tmp/tbfs-test.log}
: >"$log"

failed=()
timings=()
# stage NAME CMD...: run CMD, logging its output, and note its wall time
# and whether it failed; later stages still run so one report shows all.
stage() {
  local name=$1 start end
  shift
  echo "=== stage $name: $*" | tee -a "$log"
  start=$(date +%s)
  if ! "$@" 2>&1 | tee -a "$log"; then
    failed+=("$name")
  fi
  end=$(date +%s)
  timings+=("$(printf '%-6s %4ds  %s' "$name" $((end - start)) "$*")")
}

gofmt_clean() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; return 1
  fi
}

# man_pages: both binaries generate their man pages (cmd/internal/cli), as a
# package build would, each page a troff file.
man_pages() {
  local dir
  dir=$(mktemp -d)
  go run ./cmd/tbprobe man "$dir/tbprobe" && go run ./cmd/tbfs man "$dir/tbfs" &&
    ls "$dir/tbprobe/tbprobe.1" "$dir/tbfs/tbfs-mount.1" >/dev/null
  local rc=$?
  rm -rf "$dir"
  return $rc
}

total_start=$(date +%s)
stage gofmt gofmt_clean
stage vet go vet ./... ./testdata/
stage man man_pages
stage race go test -race -count=1 -timeout 40m ./... ./testdata/
stage full go test -count=1 -timeout 40m ./... ./testdata/

{
  echo "=== stage wall times"
  printf '%s\n' "${timings[@]}"
  echo "total  $(( $(date +%s) - total_start ))s"
} | tee -a "$log"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED stages: ${failed[*]}" | tee -a "$log"
  exit 1
fi
