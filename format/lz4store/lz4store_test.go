package lz4store

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// block returns a compressible block of n bytes (small codes in runs, the
// shape of decoded table blocks).
func block(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		if i == 0 || r.IntN(6) == 0 {
			b[i] = byte(r.IntN(12))
		} else {
			b[i] = b[i-1]
		}
	}
	return b
}

func open(t *testing.T, dir string, budget int64) *Store {
	t.Helper()
	s, err := Open(dir, budget)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRoundTrip stores blocks and loads them back in the same store and in
// a store reopened on the directory; a key never stored, or asked for with
// another size, is a miss.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<30)
	blocks := map[string][]byte{"a/KQK.lzdtz#0": block(1<<20, 1), "a/KQK.lzdtz#1": block(5000, 2), "empty": {}}
	for k, b := range blocks {
		if err := s.Store(k, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []*Store{s, open(t, dir, 1<<30)} {
		for k, b := range blocks {
			got, ok := st.Load(k, len(b))
			if !ok || !bytes.Equal(got, b) {
				t.Errorf("%q: load gives %d bytes, ok %v", k, len(got), ok)
			}
		}
		if _, ok := st.Load("never stored", 10); ok {
			t.Error("a key never stored loads")
		}
	}
	if _, ok := s.Load("a/KQK.lzdtz#1", 4999); ok {
		t.Error("a block loads at another size")
	}
}

// TestDamagedFileIsAMiss flips every byte of a stored file in turn, and cuts
// it at every length: each load must miss, and drop the file, or return
// exactly the stored bytes (the checksum's word), never other bytes; the
// same for a load of any size (a negative size), which leaves the length
// to the file.
func TestDamagedFileIsAMiss(t *testing.T) {
	t.Run("size", func(t *testing.T) { damagedFileIsAMiss(t, 3000) })
	t.Run("any-size", func(t *testing.T) { damagedFileIsAMiss(t, -1) })
}

// storedFile stores want under key in a new store, and returns the store,
// the path of the file and its bytes.
func storedFile(t *testing.T, key string, want []byte) (*Store, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir, 1<<30)
	if err := s.Store(key, want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fileName(key))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path, good
}

func damagedFileIsAMiss(t *testing.T, size int) {
	const key = "dtm50/KRPKR.lzdtm50@v1#3/17"
	want := block(3000, 3)
	s, path, good := storedFile(t, key, want)
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		if _, ok := s.files[fileName(key)]; !ok {
			s.addLocked(fileName(key), int64(len(b)))
		}
		s.mu.Unlock()
	}
	for i := range good {
		for _, flip := range []byte{0x01, 0x80, 0xFF} {
			bad := bytes.Clone(good)
			bad[i] ^= flip
			write(bad)
			got, ok := s.Load(key, size)
			if ok {
				// The key, the length and the checksum are compared
				// and the checksum covers the LZ4 bytes, so a flip
				// should miss; whatever loads must be the block.
				if !bytes.Equal(got, want) {
					t.Fatalf("byte %d ^ %#x: load returned other bytes", i, flip)
				}
				continue
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("byte %d ^ %#x: the damaged file was kept", i, flip)
			}
		}
	}
	for n := range len(good) {
		write(good[:n])
		if _, ok := s.Load(key, size); ok {
			t.Fatalf("file cut to %d of %d bytes loads", n, len(good))
		}
	}
	// Another key's file under this key's name (a hash collision, or a
	// file copied in) is not served either.
	other := open(t, t.TempDir(), 1<<30)
	if err := other.Store("another key", want); err != nil {
		t.Fatal(err)
	}
	foreign, err := os.ReadFile(filepath.Join(other.dir, fileName("another key")))
	if err != nil {
		t.Fatal(err)
	}
	write(foreign)
	if _, ok := s.Load(key, size); ok {
		t.Fatal("another key's file loads")
	}
	write(good)
	if got, ok := s.Load(key, size); !ok || !bytes.Equal(got, want) {
		t.Fatal("the intact file does not load")
	}
}

// TestBudget keeps the files within the budget, dropping the least
// recently used (a load counts as a use), also across a reopen.
func TestBudget(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<30)
	b := block(100_000, 4)
	if err := s.Store("probe", b); err != nil {
		t.Fatal(err)
	}
	per := s.Used()
	budget := 3*per + per/2 // room for three files
	s = open(t, dir, budget)
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Store(k, b); err != nil {
			t.Fatal(err)
		}
	}
	// "probe" was the oldest: the fourth store dropped it.
	if _, ok := s.Load("probe", len(b)); ok {
		t.Error("the least recently used block survived")
	}
	if _, ok := s.Load("a", len(b)); !ok {
		t.Fatal("a is missing")
	}
	if err := s.Store("d", b); err != nil {
		t.Fatal(err)
	}
	// b was the least recently used now that a was read.
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, ok := s.Load(k, len(b)); ok != want {
			t.Errorf("%s: held %v, want %v", k, ok, want)
		}
	}
	if s.Used() > budget {
		t.Errorf("used %d over the budget %d", s.Used(), budget)
	}
	// A reopen with a smaller budget trims to it.
	s = open(t, dir, per+per/2)
	if s.Used() > per+per/2 {
		t.Errorf("reopened store holds %d, budget %d", s.Used(), per+per/2)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files after the trim, want 1", len(ents))
	}
}

// storedBlock returns a store holding a 1 MiB block under "k", and the
// block.
func storedBlock(b *testing.B) (*Store, []byte) {
	s, err := Open(b.TempDir(), 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	data := block(1<<20, 5)
	if err := s.Store("k", data); err != nil {
		b.Fatal(err)
	}
	return s, data
}

// BenchmarkLoad reads a 1 MiB block back, the cost a second-tier hit adds.
func BenchmarkLoad(b *testing.B) {
	s, data := storedBlock(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, ok := s.Load("k", len(data)); !ok {
			b.Fatal("miss")
		}
	}
}

// TestStats: the counters count what Load and Store did, as their own
// results say (a block returned, a miss, a block written).
func TestStats(t *testing.T) {
	s := open(t, t.TempDir(), 1<<30)
	b := block(4096, 3)
	s.Load("k", len(b)) // absent
	if err := s.Store("k", b); err != nil {
		t.Fatal(err)
	}
	s.Load("k", len(b)) // present
	if st := s.Stats(); st.Used != s.Used() || st.Used == 0 {
		t.Errorf("stats %+v, want the bytes held", st)
	}
	s.Load("k", len(b)-1) // another size: a miss
	if st := s.Stats(); st.Hits != 1 || st.Misses != 2 || st.Stores != 1 {
		t.Errorf("stats %+v, want 1 hit, 2 misses, 1 store", st)
	}
}
