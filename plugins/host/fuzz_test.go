package host

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/source"
)

// FuzzCheckChunk: whatever a plugin answers to a range, the host takes at
// most the bytes asked for and at most the bytes sent, reports a complete
// range only when it got every byte, and refuses protocol violations as
// permanent failures. The arbiter is the protocol's rule for an answer.
func FuzzCheckChunk(f *testing.F) {
	f.Add(uint16(10), int64(0), int64(100), uint16(10), uint8(0))
	f.Add(uint16(10), int64(90), int64(100), uint16(9), uint8(1))
	f.Add(uint16(10), int64(0), int64(100), uint16(11), uint8(0))
	f.Add(uint16(10), int64(0), int64(100), uint16(3), uint8(2))
	f.Add(uint16(0), int64(5), int64(5), uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, want uint16, off, size int64, got uint16, code uint8) {
		var perr error
		switch code % 3 {
		case 1:
			perr = io.EOF
		case 2:
			perr = source.Transient(errors.New("planted"))
		}
		data := make([]byte, got)
		n, err := checkChunk(int(want), off, size, data, perr)
		if n < 0 || n > int(want) || n > len(data) {
			t.Fatalf("took %d bytes of %d sent for %d asked", n, len(data), want)
		}
		if err == nil && n != int(want) {
			t.Fatalf("complete range with %d of %d bytes", n, want)
		}
		if len(data) > int(want) && !errors.Is(err, source.ErrPermanent) {
			t.Fatalf("%d bytes for %d asked: err = %v, want ErrPermanent", len(data), want, err)
		}
		if err == io.EOF {
			t.Fatal("io.EOF for a range inside the object")
		}
	})
}

// FuzzParseChecksum: a --plugin-sha256 value is accepted only as
// name=64 hex digits, and what is accepted prints back the same way.
func FuzzParseChecksum(f *testing.F) {
	f.Add("ftp=" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	f.Add("ftp=abcd")
	f.Add("=00")
	f.Add("a=b=c")
	f.Fuzz(func(t *testing.T, s string) {
		name, sum, err := ParseChecksum(s)
		if err != nil {
			return
		}
		if name == "" || len(sum) != 32 || strings.Contains(name, "=") {
			t.Fatalf("ParseChecksum(%q) = %q, %x", s, name, sum)
		}
		var c Checksums
		if err := c.Set(s); err != nil {
			t.Fatal(err)
		}
		if got := c.String(); !strings.EqualFold(got, s) {
			t.Fatalf("Set(%q) prints as %q", s, got)
		}
	})
}
