// Package uci drives a chess engine that speaks the Universal Chess
// Interface over its standard input and output. Every exchange is bounded
// by a context, every line in both directions is logged, and whatever the
// engine does wrong (exits, prints garbage, never answers, names a move
// that is not legal) comes back as an error saying so, never a hang.
package uci

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrEngineExited reports that the engine process ended while an answer
// was awaited.
var ErrEngineExited = errors.New("uci: engine exited")

// ErrProtocol reports a line the engine printed that breaks the protocol
// where an answer was awaited (a bestmove that is no move, a score that
// is no number).
var ErrProtocol = errors.New("uci: protocol error")

// Engine is one running engine process.
type Engine struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // the engine's output, closed when it ends
	done  chan struct{}
	// waitErr is the process's exit status and readErr why its output
	// could not be read, if it could not; both are set before done closes.
	waitErr, readErr error

	mu  sync.Mutex
	log strings.Builder

	// Name is the engine's "id name", empty when it sent none.
	Name string
	// Options are the option names the engine declared.
	Options map[string]bool
}

// Start runs the engine at path with args and completes the handshake
// ("uci" until "uciok") within ctx. When the handshake fails the engine
// is returned closed along with the error, so its Log shows what it said.
func Start(ctx context.Context, path string, args ...string) (*Engine, error) {
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// Its own process group, so a kill reaches any child it started
	// (a wrapper script's engine), which would hold the output open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Wait gives up on a pipe a stray child still holds open.
	cmd.WaitDelay = time.Second
	e := &Engine{cmd: cmd, stdin: stdin, lines: make(chan string, 256), done: make(chan struct{}), Options: map[string]bool{}}
	cmd.Stderr = &stderrLog{e: e}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("uci: starting %s: %w", path, err)
	}
	go e.read(stdout)
	if err := e.handshake(ctx); err != nil {
		e.Close()
		return e, err
	}
	return e, nil
}

// read copies the engine's output lines into e.lines until it ends, then
// reaps the process. Lines are cut at 64 KiB so a flood cannot exhaust
// memory.
func (e *Engine) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	for sc.Scan() {
		e.lines <- sc.Text()
	}
	if err := sc.Err(); err != nil {
		// An overlong line or a broken pipe: nothing further it prints
		// can be read as protocol, so the engine is stopped here rather
		// than left blocked writing to a pipe nobody reads.
		e.readErr = err
		e.kill()
	}
	close(e.lines)
	e.waitErr = e.cmd.Wait()
	close(e.done)
}

// maxLine bounds one line of engine output.
const maxLine = 64 << 10

// kill ends the engine's process group.
func (e *Engine) kill() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
}

// stderrLog copies the engine's standard error into the log, each line
// prefixed "! ", so a crash's own message sits beside the exchange.
type stderrLog struct {
	e    *Engine
	rest []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.rest = append(w.rest, p...)
	for {
		i := bytes.IndexByte(w.rest, '\n')
		if i < 0 {
			break
		}
		w.e.note("! ", string(w.rest[:i]))
		w.rest = w.rest[i+1:]
	}
	if len(w.rest) > maxLine {
		w.e.note("! ", string(w.rest[:maxLine])+" [cut]")
		w.rest = w.rest[:0]
	}
	return len(p), nil
}

// Log returns every line exchanged so far, each prefixed "> " (sent) or
// "< " (received), with notes on timeouts and exits prefixed "# ".
func (e *Engine) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

func (e *Engine) note(prefix, line string) {
	e.mu.Lock()
	e.log.WriteString(prefix)
	e.log.WriteString(line)
	e.log.WriteByte('\n')
	e.mu.Unlock()
}

// Send writes one command line to the engine.
func (e *Engine) Send(line string) error {
	e.note("> ", line)
	if _, err := io.WriteString(e.stdin, line+"\n"); err != nil {
		return fmt.Errorf("uci: sending %q: %w", line, err)
	}
	return nil
}

// next returns the engine's next output line, or an error when ctx ends
// first or the engine exits.
func (e *Engine) next(ctx context.Context) (string, error) {
	select {
	case line, ok := <-e.lines:
		if !ok {
			select {
			case <-e.done:
			case <-ctx.Done():
				e.note("# ", "output closed, process still running: "+ctx.Err().Error())
				return "", fmt.Errorf("uci: engine closed its output but did not exit: %w", ctx.Err())
			}
			if e.readErr != nil {
				e.note("# ", "unreadable output: "+e.readErr.Error())
				return "", fmt.Errorf("%w: unreadable output: %v", ErrProtocol, e.readErr)
			}
			e.note("# ", fmt.Sprintf("engine exited (%v)", exitText(e.waitErr)))
			return "", fmt.Errorf("%w (%s)", ErrEngineExited, exitText(e.waitErr))
		}
		e.note("< ", line)
		return line, nil
	case <-ctx.Done():
		e.note("# ", "no answer: "+ctx.Err().Error())
		return "", fmt.Errorf("uci: engine did not answer: %w", ctx.Err())
	}
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// await reads lines until one whose first word is token.
func (e *Engine) await(ctx context.Context, token string, each func(fields []string) error) ([]string, error) {
	for {
		line, err := e.next(ctx)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", token, err)
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == token {
			return f, nil
		}
		if each != nil {
			if err := each(f); err != nil {
				return nil, err
			}
		}
	}
}

func (e *Engine) handshake(ctx context.Context) error {
	if err := e.Send("uci"); err != nil {
		return err
	}
	_, err := e.await(ctx, "uciok", func(f []string) error {
		switch {
		case f[0] == "id" && len(f) > 2 && f[1] == "name":
			e.Name = strings.Join(f[2:], " ")
		case f[0] == "option" && len(f) > 2 && f[1] == "name":
			name := f[2:]
			for i, w := range name {
				if w == "type" {
					name = name[:i]
					break
				}
			}
			e.Options[strings.Join(name, " ")] = true
		}
		return nil
	})
	return err
}

// SetOption sets a declared option; an option the engine did not declare
// is left alone and reported false.
func (e *Engine) SetOption(name, value string) (bool, error) {
	if !e.Options[name] {
		return false, nil
	}
	return true, e.Send("setoption name " + name + " value " + value)
}

// Sync sends isready and waits for readyok.
func (e *Engine) Sync(ctx context.Context) error {
	if err := e.Send("isready"); err != nil {
		return err
	}
	_, err := e.await(ctx, "readyok", nil)
	return err
}

// NewGame tells the engine the next position is unrelated to the last
// (ucinewgame, which clears Stockfish's hash) and waits until it is ready.
func (e *Engine) NewGame(ctx context.Context) error {
	if err := e.Send("ucinewgame"); err != nil {
		return err
	}
	return e.Sync(ctx)
}

// Score is an engine's evaluation from the side to move's point of view.
type Score struct {
	// Mate is set for a mate score: MateIn moves, positive when the side
	// to move mates, negative (or 0) when it is mated.
	Mate   bool
	MateIn int
	// CP is the centipawn score when Mate is false.
	CP int
}

// String prints the score as UCI writes it ("mate -3", "cp 25").
func (s Score) String() string {
	if s.Mate {
		return "mate " + strconv.Itoa(s.MateIn)
	}
	return "cp " + strconv.Itoa(s.CP)
}

// Search is the answer to one go command.
type Search struct {
	// BestMove is the bestmove token as sent ("e2e4", "(none)", "0000").
	BestMove string
	// Scores are the scores of the info lines in order (multipv lines
	// other than the first are skipped); Final is the last of them.
	Scores []Score
	// HasScore says whether any info line carried a score.
	HasScore bool
	Final    Score
	// Depth is the last reported depth, Nodes the last reported node count.
	Depth, Nodes int64
}

// GoNodes sets the position and searches it with a fixed node budget
// ("go nodes N"), waiting for bestmove within ctx. When ctx ends first the
// engine is told to stop and given a moment to answer; the error names
// the timeout either way.
func (e *Engine) GoNodes(ctx context.Context, fen string, nodes int64) (Search, error) {
	var s Search
	if err := e.Send("position fen " + fen); err != nil {
		return s, err
	}
	if err := e.Send("go nodes " + strconv.FormatInt(nodes, 10)); err != nil {
		return s, err
	}
	f, err := e.await(ctx, "bestmove", func(f []string) error {
		if f[0] != "info" {
			return nil
		}
		return s.addInfo(f)
	})
	if err != nil {
		if ctx.Err() != nil {
			// Ask for the move it has; the answer is not used, the
			// timeout stands, but the log shows what followed.
			_ = e.Send("stop")
			grace, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_, _ = e.await(grace, "bestmove", nil)
			cancel()
		}
		return s, err
	}
	if len(f) < 2 {
		return s, fmt.Errorf("%w: bestmove without a move", ErrProtocol)
	}
	s.BestMove = f[1]
	return s, nil
}

// addInfo reads the score, depth and nodes of one info line.
func (s *Search) addInfo(f []string) error {
	var sc Score
	has := false
	for i := 1; i < len(f); i++ {
		switch f[i] {
		case "multipv":
			if i+1 < len(f) && f[i+1] != "1" {
				return nil
			}
		case "depth", "nodes":
			if i+1 >= len(f) {
				return fmt.Errorf("%w: info %s without a value", ErrProtocol, f[i])
			}
			v, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return fmt.Errorf("%w: info %s %q", ErrProtocol, f[i], f[i+1])
			}
			if f[i] == "depth" {
				s.Depth = v
			} else {
				s.Nodes = v
			}
			i++
		case "score":
			if i+2 >= len(f) {
				return fmt.Errorf("%w: info score without a value", ErrProtocol)
			}
			v, err := strconv.Atoi(f[i+2])
			if err != nil || (f[i+1] != "cp" && f[i+1] != "mate") {
				return fmt.Errorf("%w: info score %s %s", ErrProtocol, f[i+1], f[i+2])
			}
			sc = Score{Mate: f[i+1] == "mate"}
			if sc.Mate {
				sc.MateIn = v
			} else {
				sc.CP = v
			}
			has = true
			i += 2
		case "pv", "string", "refutation", "currline":
			i = len(f) // the rest of the line is moves or text
		}
	}
	if has {
		// A bound is not the engine's score of the position; only exact
		// scores count.
		for _, w := range f {
			if w == "lowerbound" || w == "upperbound" {
				return nil
			}
		}
		s.Scores = append(s.Scores, sc)
		s.Final, s.HasScore = sc, true
	}
	return nil
}

// Close asks the engine to quit and kills it when it has not exited
// shortly after; it waits for the process either way. Lines the engine
// printed that no call read go into the log (the first closeLines of
// them), so after a timeout the log still shows what the engine said: a
// slow reader must not lose the answer that came just too late.
func (e *Engine) Close() error {
	_ = e.Send("quit")
	e.stdin.Close()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		n := 0
		for line := range e.lines { // keep the reader moving so the process can end
			if n < closeLines {
				e.note("< ", line)
			}
			n++
		}
		if n > closeLines {
			e.note("# ", fmt.Sprintf("%d more lines at close not logged", n-closeLines))
		}
	}()
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
		e.note("# ", "engine did not quit; killed")
		e.kill()
		<-e.done
	}
	<-drained // e.lines is closed before e.done
	return nil
}

// closeLines bounds the unread lines Close copies into the log.
const closeLines = 100
