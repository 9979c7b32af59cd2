package retry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/metrics"
	"github.com/tbfs/tbfs/source/mmap"
	"github.com/tbfs/tbfs/source/retry"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// script is a source whose Open and ReadAt fail with the scripted errors in
// turn, then succeed.
type script struct {
	errs  []error
	calls int
	data  []byte
}

func (s *script) next() error {
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

func (s *script) Open(ctx context.Context, name string) (source.Object, error) {
	if err := s.next(); err != nil {
		return nil, err
	}
	return &scriptObj{s}, nil
}

func (s *script) Close() error { return nil }

type scriptObj struct{ s *script }

func (o *scriptObj) Size() int64  { return int64(len(o.s.data)) }
func (o *scriptObj) Close() error { return nil }
func (o *scriptObj) ReadAt(ctx context.Context, p []byte, off int64, _ source.Hint) (int, error) {
	if err := o.s.next(); err != nil {
		// Deliver half of what was asked, as a connection that breaks
		// midway does.
		return copy(p[:len(p)/2], o.s.data[off:]), err
	}
	n := copy(p, o.s.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

var (
	transient = source.Transient(errors.New("503"))
	permanent = source.Permanent(errors.New("403"))
	notFound  = fmt.Errorf("%w: 404", source.ErrNotFound)
)

// recorder is a Policy.Sleep that records its waits.
type recorder struct{ waits []time.Duration }

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.waits = append(r.waits, d)
	return ctx.Err()
}

// TestPolicy: which errors are retried and how often follows the package
// contract (transient only, Attempts tries in all, doubling waits capped at
// Max).
func TestPolicy(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name      string
		errs      []error
		attempts  int
		wantErr   error
		wantCalls int
		wantWaits []time.Duration
	}{
		{"success", nil, 4, nil, 1, nil},
		{"one transient", []error{transient}, 4, nil, 2, []time.Duration{10 * ms}},
		{"three transient", []error{transient, transient, transient}, 4, nil, 4, []time.Duration{10 * ms, 20 * ms, 40 * ms}},
		{"exhausted", []error{transient, transient, transient, transient}, 4, source.ErrTransient, 4, []time.Duration{10 * ms, 20 * ms, 40 * ms}},
		{"capped waits", []error{transient, transient, transient, transient, transient}, 6, nil, 6, []time.Duration{10 * ms, 20 * ms, 40 * ms, 50 * ms, 50 * ms}},
		{"permanent", []error{permanent}, 4, source.ErrPermanent, 1, nil},
		{"not found", []error{notFound}, 4, source.ErrNotFound, 1, nil},
		{"transient then permanent", []error{transient, permanent}, 4, source.ErrPermanent, 2, []time.Duration{10 * ms}},
		{"cancelled", []error{context.Canceled}, 4, context.Canceled, 1, nil},
		{"no retries", []error{transient}, 1, source.ErrTransient, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			cnt := new(metrics.Counters)
			p := retry.Policy{Attempts: c.attempts, Base: 10 * ms, Max: 50 * ms, Sleep: rec.sleep, Counters: cnt}
			s := &script{errs: c.errs}
			_, err := retry.Wrap(s, p).Open(context.Background(), "x")
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
			if s.calls != c.wantCalls {
				t.Errorf("calls = %d, want %d", s.calls, c.wantCalls)
			}
			if fmt.Sprint(rec.waits) != fmt.Sprint(c.wantWaits) {
				t.Errorf("waits = %v, want %v", rec.waits, c.wantWaits)
			}
			if got := cnt.Stats().Retries; got != int64(len(c.wantWaits)) {
				t.Errorf("retries counted %d, want %d", got, len(c.wantWaits))
			}
		})
	}
}

// TestReadKeepsProgress: bytes a failed attempt delivered are kept and only
// the rest is asked for again; the result is the whole range.
func TestReadKeepsProgress(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	s := &script{data: data}
	obj, err := retry.Wrap(s, retry.Policy{Sleep: (&recorder{}).sleep}).Open(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	s.errs = []error{transient, transient}
	buf := make([]byte, 16)
	n, err := obj.ReadAt(context.Background(), buf, 2, source.HintData)
	if err != nil || n != 16 || string(buf) != string(data[2:18]) {
		t.Errorf("ReadAt = %d, %v, %q; want 16, nil, %q", n, err, buf, data[2:18])
	}
	buf = make([]byte, 10)
	s.errs = []error{transient}
	n, err = obj.ReadAt(context.Background(), buf, 15, source.HintData)
	if err != io.EOF || n != 5 || string(buf[:n]) != string(data[15:]) {
		t.Errorf("ReadAt at the end = %d, %v; want 5, io.EOF", n, err)
	}
}

// TestCancelDuringWait: cancelling while the policy waits ends the call
// with both the transport error and the cancellation.
func TestCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := retry.Policy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}}
	s := &script{errs: []error{transient, transient}}
	_, err := retry.Wrap(s, p).Open(ctx, "x")
	if !errors.Is(err, context.Canceled) || s.calls != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, s.calls)
	}
}

// TestDefaultSleepHonoursContext uses the real timer-based wait with an
// already cancelled context, which must return at once.
func TestDefaultSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := retry.Policy{Base: time.Hour, Max: time.Hour}
	calls := 0
	err := p.Do(ctx, func() error { calls++; return transient })
	if calls != 1 || !errors.Is(err, source.ErrTransient) {
		t.Errorf("Do = %v after %d calls", err, calls)
	}
}

func TestBackoff(t *testing.T) {
	p := retry.Policy{Base: time.Second, Max: 5 * time.Second}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := p.Backoff(i + 1); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, want)
		}
	}
	if got := (retry.Policy{}).Backoff(1000); got != 5*time.Second {
		t.Errorf("default Backoff(1000) = %v, want the 5s cap", got)
	}
}

func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return retry.Wrap(src, retry.Policy{})
	})
}
