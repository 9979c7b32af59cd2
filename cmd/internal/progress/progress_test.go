package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// Off a terminal nothing but whole lines is written: with Lines one per
// finished step, saying 100%; without, nothing. No carriage return ever.
func TestNotTerminal(t *testing.T) {
	for _, lines := range []bool{true, false} {
		var buf bytes.Buffer
		r := New(&buf, Options{Unit: "blocks", Lines: lines})
		if r.Terminal() {
			t.Fatal("a bytes.Buffer is not a terminal")
		}
		for _, label := range []string{"a", "b"} {
			s := r.Start(label, 1000)
			for i := int64(0); i <= 1000; i += 7 {
				s.Set(i)
			}
			s.Done()
		}
		r.Logf("note %d", 1)
		out := buf.String()
		if strings.ContainsRune(out, '\r') {
			t.Errorf("lines=%v: carriage return in %q", lines, out)
		}
		want := "note 1\n"
		if lines {
			if got := strings.Count(out, "100% (1000 blocks)"); got != 2 {
				t.Errorf("lines=%v: %d lines at 100%%, want 2: %q", lines, got, out)
			}
			want = "b: 100%"
		}
		if !strings.Contains(out, want) || (!lines && out != want) {
			t.Errorf("lines=%v: output %q, want %q in it", lines, out, want)
		}
	}
}

// On a terminal a step draws a bar with the count, rate and time left, and
// ends at 100% even when the last count reported fell short (an upper
// bound that was never reached).
func TestTerminal(t *testing.T) {
	var buf bytes.Buffer
	r := newReporter(&buf, true, Options{Unit: "entries"})
	s := r.Start("id001", 1000)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				s.Add(1)
			}
		})
	}
	wg.Wait()
	s.Done()
	out := buf.String()
	last := out[strings.LastIndexByte(strings.TrimRight(out, "\n"), '\r')+1:]
	for _, want := range []string{"id001", "100%", "1000/1000", "entries/s"} {
		if !strings.Contains(last, want) {
			t.Errorf("final bar %q lacks %q", last, want)
		}
	}
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("finished bar not ended by a newline: %q", out)
	}
	// Quiet draws nothing on a terminal either.
	buf.Reset()
	q := newReporter(&buf, true, Options{Quiet: true})
	qs := q.Start("x", 10)
	qs.Set(5)
	qs.Done()
	if buf.Len() != 0 {
		t.Errorf("quiet reporter wrote %q", buf.String())
	}
}

// A step that stops short (an error, an interrupt) does not claim 100%:
// on a terminal the bar stays where it stood; off one nothing is written.
func TestStop(t *testing.T) {
	var buf bytes.Buffer
	r := newReporter(&buf, true, Options{Unit: "entries"})
	s := r.Start("id001", 1000)
	s.Set(400)
	s.Stop()
	s.Done() // a step ends once
	if out := buf.String(); strings.Contains(out, "100%") || !strings.Contains(out, "40%") || !strings.HasSuffix(out, "\n") {
		t.Errorf("stopped bar %q", out)
	}
	buf.Reset()
	r = New(&buf, Options{Lines: true})
	s = r.Start("x", 10)
	s.Set(3)
	s.Stop()
	if buf.Len() != 0 {
		t.Errorf("stopped step off a terminal wrote %q", buf.String())
	}
}
