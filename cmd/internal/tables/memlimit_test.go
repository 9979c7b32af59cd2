package tables

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct{ cache, want int64 }{
		{0, MinMemoryHeadroom},
		{-1, MinMemoryHeadroom},
		{64 << 20, 128 << 20},          // a quarter would be 16 MiB: the minimum
		{256 << 20, 320 << 20},         // a quarter is the minimum
		{4 << 30, 5 << 30},             // a quarter more
		{math.MaxInt64, math.MaxInt64}, // no overflow
	} {
		if got := MemoryLimit(c.cache); got != c.want {
			t.Errorf("MemoryLimit(%d) = %d, want %d", c.cache, got, c.want)
		}
	}
}

// TestSetMemoryLimit reads the limit back from the runtime, and leaves one
// from $GOMEMLIMIT alone.
func TestSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	t.Setenv("GOMEMLIMIT", "")
	if got := SetMemoryLimit(4 << 30); got != 5<<30 || debug.SetMemoryLimit(-1) != 5<<30 {
		t.Errorf("SetMemoryLimit(4 GiB) = %d, runtime limit %d; want 5 GiB", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(3 << 30) // as $GOMEMLIMIT=3GiB would have at start
	t.Setenv("GOMEMLIMIT", "3GiB")
	if got := SetMemoryLimit(4 << 30); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Errorf("with GOMEMLIMIT set: SetMemoryLimit = %d, runtime limit %d; want 3 GiB kept", got, debug.SetMemoryLimit(-1))
	}
}
