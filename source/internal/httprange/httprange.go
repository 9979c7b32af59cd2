// Package httprange parses the Content-Range header (RFC 9110, section
// 14.4) for the transports that speak HTTP.
package httprange

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse parses "bytes first-last/total". A total of "*" (unknown) is given
// as -1. Anything else — another unit, "bytes */total", last before first,
// total not past last — is an error quoting the header.
func Parse(h string) (first, last, total int64, err error) {
	bad := fmt.Errorf("malformed Content-Range %q", h)
	rest, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok || !digits(a) || !digits(b) {
		return 0, 0, 0, bad
	}
	if first, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, 0, bad
	}
	if last, err = strconv.ParseInt(b, 10, 64); err != nil || last < first {
		return 0, 0, 0, bad
	}
	total = -1
	if tot != "*" {
		if !digits(tot) {
			return 0, 0, 0, bad
		}
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil || total <= last {
			return 0, 0, 0, bad
		}
	}
	return first, last, total, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
