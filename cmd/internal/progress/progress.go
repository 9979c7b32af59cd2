// Package progress shows how far a long job (verify, geister build,
// bench) has got, one way for every command: on a terminal, a bar with the
// count, the rate and the time left (schollz/progressbar); anywhere else,
// nothing while a step runs and, if asked for, one line when it ends, so a
// log never collects carriage returns or half-drawn bars. A finished step
// always shows 100%.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Options say how a Reporter behaves.
type Options struct {
	// Unit names what is counted ("blocks", "entries"), for rates.
	Unit string
	// Lines prints one line per finished step when w is not a terminal;
	// without it such a writer gets nothing.
	Lines bool
	// Quiet draws nothing at all, terminal or not.
	Quiet bool
}

// Reporter draws the steps of one job on one writer, one step at a time.
type Reporter struct {
	w    io.Writer
	tty  bool
	opts Options

	mu  sync.Mutex
	bar *progressbar.ProgressBar // the open step's bar, on a terminal
}

// New reports on w, drawing bars when w is a terminal.
func New(w io.Writer, opts Options) *Reporter {
	f, ok := w.(*os.File)
	return newReporter(w, ok && term.IsTerminal(int(f.Fd())), opts)
}

func newReporter(w io.Writer, tty bool, opts Options) *Reporter {
	if opts.Unit == "" {
		opts.Unit = "items"
	}
	return &Reporter{w: w, tty: tty, opts: opts}
}

// Terminal reports whether bars are drawn (w is a terminal, not Quiet).
func (r *Reporter) Terminal() bool { return r.tty && !r.opts.Quiet }

// Step is one measured piece of a job: a table, a material, a pass.
type Step struct {
	r     *Reporter
	label string
	total int64
	start time.Time
	bar   *progressbar.ProgressBar

	done atomic.Int64 // cheap to bump from a hot loop off a terminal

	mu   sync.Mutex
	over bool
}

// Start begins a step of total units (the previous one, if still open,
// is ended first).
func (r *Reporter) Start(label string, total int64) *Step {
	s := &Step{r: r, label: label, total: max(total, 1), start: time.Now()}
	if r.Terminal() {
		s.bar = progressbar.NewOptions64(s.total,
			progressbar.OptionSetWriter(r.w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionSetItsString(r.opts.Unit),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(r.w) }),
		)
	}
	r.mu.Lock()
	r.bar = s.bar
	r.mu.Unlock()
	return s
}

// Set records that done of the step's units are finished.
func (s *Step) Set(done int64) {
	s.done.Store(done)
	s.draw(done)
}

// Add records n more finished units; safe from several goroutines.
func (s *Step) Add(n int64) {
	s.draw(s.done.Add(n))
}

// draw moves the bar, if there is one and the step is still open.
func (s *Step) draw(done int64) {
	if s.bar == nil {
		return
	}
	s.mu.Lock()
	over := s.over
	s.mu.Unlock()
	if !over {
		s.bar.Set64(min(done, s.total))
	}
}

// Describe changes the step's label (a new phase of the same step).
func (s *Step) Describe(label string) {
	s.mu.Lock()
	s.label = label
	s.mu.Unlock()
	if s.bar != nil {
		s.bar.Describe(label)
	}
}

// Done ends the step at 100%: the bar is filled and closed with a
// newline; off a terminal, with Lines, one line says what was done and how
// fast.
func (s *Step) Done() { s.end(true) }

// Stop ends a step that did not finish (an error, an interruption) where
// it stands: a bar stays as last drawn and the line is ended; off a
// terminal nothing is written, as nothing was finished.
func (s *Step) Stop() { s.end(false) }

// end closes the step once, filled or as it stands.
func (s *Step) end(finished bool) {
	s.mu.Lock()
	if s.over {
		s.mu.Unlock()
		return
	}
	s.over = true
	label := s.label
	s.mu.Unlock()
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar == s.bar {
		r.bar = nil
	}
	switch {
	case s.bar != nil && finished:
		s.bar.Finish()
	case s.bar != nil:
		s.bar.Exit()
		fmt.Fprintln(r.w)
	case finished && r.opts.Lines && !r.opts.Quiet:
		el := time.Since(s.start)
		rate := float64(s.total) / max(el.Seconds(), 1e-9)
		fmt.Fprintf(r.w, "%s: 100%% (%d %s) in %s, %s %s/s\n", label, s.total, r.opts.Unit, el.Round(time.Millisecond), formatRate(rate), r.opts.Unit)
	}
}

// Logf prints a line without tearing an open bar: the bar is cleared,
// the line written, and the bar drawn again on its next update.
func (r *Reporter) Logf(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar != nil {
		r.bar.Clear()
	}
	fmt.Fprintf(r.w, format+"\n", a...)
}

// formatRate prints a rate with an SI multiplier, "1.23M".
func formatRate(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.2fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
