package exepages

import (
	"os"
	"testing"
)

// smapsSample is two mappings in the layout proc(5) documents for
// /proc/PID/smaps: a header line, then one "Key: value kB" line per counter
// (and VmFlags, which is no counter).
const smapsSample = `00400000-0110a000 r-xp 00000000 fe:01 9979219                            /usr/bin/tbprobe
Size:              13352 kB
Rss:                9192 kB
Pss:                9192 kB
Anonymous:             0 kB
THPeligible:           0
VmFlags: rd ex mr mw me dw
7ffc4b911000-7ffc4b984000 rw-p 00000000 00:00 0                          [stack]
Rss:                 424 kB
Anonymous:           424 kB
VmFlags: rd wr mr mw me gd ac
`

func TestParseSmaps(t *testing.T) {
	got, err := parseSmaps([]byte(smapsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{
		{lo: 0x400000, hi: 0x110a000, perms: "r-xp", inode: 9979219, rss: 9192 << 10},
		{lo: 0x7ffc4b911000, hi: 0x7ffc4b984000, perms: "rw-p", inode: 0, rss: 424 << 10, anon: 424 << 10},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseSmapsRejects(t *testing.T) {
	for _, in := range []string{
		"00400000-0110a000 r-xp 00000000 fe:01\n",                     // no inode
		"0040zz00-0110a000 r-xp 00000000 fe:01 1 /bin/x\n",            // bad address
		"00400000-0110a000 r-xp 00000000 fe:01 x1 /bin/x\n",           // bad inode
		"00400000-0110a000 r-xp 00000000 fe:01 1 /bin/x\nRss: x kB\n", // bad counter
		"Rss: 4 kB\n", // counter of no mapping
		"00400000-0110a000 r-xp 00000000 fe:01 1 /bin/x\nRss: 4\n", // no unit
	} {
		if _, err := parseSmaps([]byte(in)); err == nil {
			t.Errorf("parseSmaps(%q) succeeded", in)
		}
	}
}

func TestDroppable(t *testing.T) {
	base := mapping{perms: "r-xp", inode: 42, rss: 4096}
	for _, c := range []struct {
		name string
		edit func(*mapping)
		want bool
	}{
		{"code", func(*mapping) {}, true},
		{"read-only data", func(m *mapping) { m.perms = "r--p" }, true},
		{"writable data", func(m *mapping) { m.perms = "rw-p" }, false},
		{"shared", func(m *mapping) { m.perms = "r--s" }, false},
		{"private copies", func(m *mapping) { m.anon = 4096 }, false},
		{"nothing resident", func(m *mapping) { m.rss = 0 }, false},
		{"anonymous", func(m *mapping) { m.inode = 0 }, false},
	} {
		m := base
		c.edit(&m)
		if got := m.droppable(); got != c.want {
			t.Errorf("%s: droppable = %v, want %v", c.name, got, c.want)
		}
	}
}

// initialised is data the executable's writable mapping holds; Release
// must leave it as it is.
var initialised = []byte("written at link time")

// TestRelease runs Release on the test process itself: it drops the
// resident pages of the code it is running (there are always some) and the
// program goes on, with its writable data intact.
func TestRelease(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	initialised[0] = 'W'
	dropped, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if dropped <= 0 {
		t.Errorf("Release dropped %d bytes of the running executable", dropped)
	}
	if string(initialised) != "Written at link time" {
		t.Errorf("writable data after Release = %q", initialised)
	}
	if _, err := Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

// BenchmarkRelease prices one call: reading and parsing /proc/self/smaps,
// the madvise calls, and the faults that bring the benchmark's own code
// back.
func BenchmarkRelease(b *testing.B) {
	for b.Loop() {
		if _, err := Release(); err != nil {
			b.Fatal(err)
		}
	}
}
