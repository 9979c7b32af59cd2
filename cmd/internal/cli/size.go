package cli

import (
	"fmt"
	"strings"

	units "github.com/docker/go-units"
)

// maxSize bounds a parsed size well inside int64, so sums of budgets and
// conversions of huge inputs cannot wrap around.
const maxSize = 1 << 62

// ParseSize parses a byte count as docker/go-units' RAMInBytes does: a
// number, possibly fractional, with an optional unit K, M, G, T or P in
// binary multiples (1K = 1024), case-insensitive, with an optional trailing
// "B" or "iB" (64M, 64mb and 64MiB are the same). Zero, negative and
// absurdly large sizes are refused.
func ParseSize(s string) (int64, error) {
	n, err := units.RAMInBytes(strings.TrimSpace(s))
	if err != nil || n <= 0 || n > maxSize {
		return 0, fmt.Errorf("bad size %q: not a size such as 512M, 64MiB or 1.5G (binary units K, M, G, T, P)", s)
	}
	return n, nil
}

// FormatSize prints n in binary units as go-units does ("64MiB", "1.5GiB").
func FormatSize(n int64) string { return units.BytesSize(float64(n)) }

// Size is a flag holding a byte count parsed by ParseSize; its default
// prints in binary units ("64MiB"), and 0 means unset.
type Size int64

// String prints the size for help texts.
func (s *Size) String() string {
	if *s == 0 {
		return "0"
	}
	return FormatSize(int64(*s))
}

// Set parses a size.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// Type names the flag's value in help texts.
func (s *Size) Type() string { return "size" }
