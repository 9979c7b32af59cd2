package cli

import (
	"testing"
)

// The accepted rows are docker/go-units' own TestRAMInBytes rows (binary
// units, case-insensitive, "b" and "ib" optional, a space allowed before
// the unit) and the sizes the three parsers this one replaced agreed on;
// the refused rows are go-units' refusals plus what a budget cannot be
// (zero, a size that would wrap around).
func TestParseSize(t *testing.T) {
	const (
		kib = int64(1) << 10
		mib = int64(1) << 20
		gib = int64(1) << 30
		tib = int64(1) << 40
		pib = int64(1) << 50
	)
	for _, tc := range []struct {
		in      string
		want    int64
		arbiter string
	}{
		{"32", 32, "go-units"},
		{"32b", 32, "go-units"},
		{"32B", 32, "go-units"},
		{"32k", 32 * kib, "go-units"},
		{"32K", 32 * kib, "go-units"},
		{"32kb", 32 * kib, "go-units"},
		{"32Kib", 32 * kib, "go-units"},
		{"32KIB", 32 * kib, "go-units"},
		{"32Mb", 32 * mib, "go-units"},
		{"32Gb", 32 * gib, "go-units"},
		{"32Tb", 32 * tib, "go-units"},
		{"32P", 32 * pib, "go-units"},
		{"32.3 mb", 33869004, "go-units: int64(32.3 * MiB)"},
		{"64mb", 64 * mib, "issue 20: 64mb worked in tbprobe and failed in tbfs"},
		{"64MiB", 64 * mib, "tbprobe --cache-size help text"},
		{"1.5G", 3 * gib / 2, "issue 20: 1.5G worked only in geister build --mem"},
		{"1T", tib, "issue 20: T worked only in geister build --mem"},
		{" 512K ", 512 * kib, "surrounding space is trimmed, as the old parsers did"},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (%s)", tc.in, got, err, tc.want, tc.arbiter)
		}
	}
	for _, bad := range []string{"", "hello", "-32", "32m b", "32bm", "0", "0.1", "G", "12Q", "9999999999999G", "1e30"} {
		if n, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, n)
		}
	}
}

// The flag prints its value in binary units, so -h shows "64MiB", not
// 67108864; zero prints as "0", which pflag leaves out of the help.
func TestSizeString(t *testing.T) {
	for _, tc := range []struct {
		n    Size
		want string
	}{{64 << 20, "64MiB"}, {1 << 30, "1GiB"}, {3 << 29, "1.5GiB"}, {512, "512B"}, {0, "0"}} {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(tc.n), got, tc.want)
		}
	}
}

// FuzzParseSize: a size either parses to a positive count within bounds or
// is refused with an error; it never panics or wraps around.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64MiB", "1", "0", "-5", "9223372036854775807", "8589934592G", "1.5G", "kib", " 12 k "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b Size
		if err := b.Set(s); err == nil && (b <= 0 || b > maxSize) {
			t.Fatalf("%q parsed to %d", s, b)
		}
	})
}
