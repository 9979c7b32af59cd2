#!/usr/bin/env bash
# The project's test command (README.md): static checks, then every test with
# the race detector. Servers the tests need (versitygw for S3) are started by
# the tests themselves on loopback; .ci/run installs them first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -race -timeout 40m ./... 2>&1 | tee /tmp/tbfs-test.log
# Geister tables up to 5 pieces, built and compared with the reference's sums
# (too slow under -race, so the test is excluded there and run here).
go test -count=1 -timeout 20m -run 'TestTotal5' ./retro/geister/ 2>&1 | tee -a /tmp/tbfs-test.log
# Chess materials solved by retro and compared with the chesstb tables over
# every position (KPKP's en-passant sweep included); the solves are too slow
# under -race, where only the structural tests run.
go test -count=1 -timeout 30m ./retro/ 2>&1 | tee -a /tmp/tbfs-test.log
