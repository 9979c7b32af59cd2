// Command probefentsv turns the text that chesstb's reference prober
// (noobpwnftw/chesstb tools/probe_fen) prints into oracle files of the shape
// ../shared/chesstb/oracle holds (see ../shared/chesstb/README.md):
// probe.tsv rows (fen wdl dtz dtc dtm dtm50 forms) or, with -children,
// children.tsv rows (fen move wdl dtz dtc dtm dtm50 forms).
//
// usage: probefentsv [-children] SHIPPED.txt [FULL.txt] > rows.tsv
//
// SHIPPED.txt is probe_fen's output against the shipping-form tables; FULL.txt,
// when given, its output for the same FENs in the same order against the
// generator's full form. Every row's forms column is "shipped", plus ",full"
// where the full tables printed the same answer. Children are printed by
// probe_fen in the colour-flipped frame when it flipped the root; their
// moves are mapped back to the input FEN's frame, as the shared oracle has
// them. Positions outside the tables' domain, or whose material has no
// table, give no row; their count goes to standard error.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// metrics is the column order of the oracle files.
var metrics = [...]string{"wdl", "dtz", "dtc", "dtm", "dtm50"}

// answer is one printed result line, by metric; a metric probe_fen printed
// nothing for is "".
type answer [len(metrics)]string

// position is one "---- " block of probe_fen's output.
type position struct {
	fen      string
	mirrored bool
	// skipped says why the block has no answer ("" when it has one).
	skipped  string
	root     answer
	children []child
}

type child struct {
	move string
	ans  answer
	// noTable is set when probe_fen found no table for the child.
	noTable bool
}

// parseAnswer reads the key=value fields after "result: " or a child's
// indentation.
func parseAnswer(s string) (answer, error) {
	var a answer
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return a, fmt.Errorf("field %q is not key=value", f)
		}
		i := -1
		for j, m := range metrics {
			if m == k {
				i = j
			}
		}
		if i < 0 {
			return a, fmt.Errorf("unknown metric %q", k)
		}
		a[i] = v
	}
	if a[0] == "" {
		return a, fmt.Errorf("no wdl in %q", s)
	}
	return a, nil
}

// mirrorMove maps a UCI move between a position and its colour flip, which
// swaps ranks 1..8 for 8..1.
func mirrorMove(m string) (string, error) {
	if len(m) < 4 {
		return "", fmt.Errorf("move %q is too short", m)
	}
	b := []byte(m)
	for _, i := range []int{1, 3} {
		if b[i] < '1' || b[i] > '8' {
			return "", fmt.Errorf("move %q has no rank at %d", m, i)
		}
		b[i] = '1' + '8' - b[i]
	}
	return string(b), nil
}

// parse reads probe_fen's whole output.
func parse(r io.Reader) ([]position, error) {
	var out []position
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var cur *position
	var pendingMove string
	line := 0
	fail := func(err error) error { return fmt.Errorf("line %d: %w", line, err) }
	for sc.Scan() {
		line++
		s := sc.Text()
		t := strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "---- "):
			out = append(out, position{})
			cur = &out[len(out)-1]
			pendingMove = ""
			switch name := strings.TrimPrefix(s, "---- "); name {
			case "outside table domain", "invalid FEN":
				cur.skipped = name
			}
		case cur == nil:
			return nil, fail(fmt.Errorf("text before the first block: %q", s))
		case strings.HasPrefix(t, "input: "):
			cur.fen = strings.TrimPrefix(t, "input: ")
		case strings.HasPrefix(t, "canonical: "):
			cur.mirrored = true
		case strings.HasPrefix(t, "error: "):
			if cur.skipped == "" {
				cur.skipped = t
			}
		case strings.HasPrefix(t, "hmc="), strings.HasPrefix(t, "ep="):
		case t == "result: TB not found":
			cur.skipped = "no table"
		case strings.HasPrefix(t, "result: "):
			a, err := parseAnswer(strings.TrimPrefix(t, "result: "))
			if err != nil {
				return nil, fail(err)
			}
			cur.root = a
		case strings.HasPrefix(s, "      "):
			if pendingMove == "" {
				return nil, fail(fmt.Errorf("child answer without its move: %q", s))
			}
			if t == "TB not found" {
				cur.children = append(cur.children, child{move: pendingMove, noTable: true})
				pendingMove = ""
				continue
			}
			a, err := parseAnswer(t)
			if err != nil {
				return nil, fail(err)
			}
			cur.children = append(cur.children, child{move: pendingMove, ans: a})
			pendingMove = ""
		case strings.HasPrefix(s, "    "):
			m := strings.Fields(t)[0]
			if cur.mirrored {
				var err error
				if m, err = mirrorMove(m); err != nil {
					return nil, fail(err)
				}
			}
			pendingMove = m
		default:
			return nil, fail(fmt.Errorf("unrecognised line %q", s))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func readFile(path string) ([]position, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// write prints the rows of shipped, with full's answers (nil: none) deciding
// the forms column.
func write(w io.Writer, children bool, shipped, full []position) (rows, skipped int, err error) {
	if full != nil && len(full) != len(shipped) {
		return 0, 0, fmt.Errorf("%d positions against the shipped tables, %d against the full ones", len(shipped), len(full))
	}
	bw := bufio.NewWriter(w)
	if children {
		fmt.Fprintln(bw, "fen\tmove\twdl\tdtz\tdtc\tdtm\tdtm50\tforms")
	} else {
		fmt.Fprintln(bw, "fen\twdl\tdtz\tdtc\tdtm\tdtm50\tforms")
	}
	forms := func(same bool) string {
		if same {
			return "shipped,full"
		}
		return "shipped"
	}
	for i, p := range shipped {
		if p.skipped != "" {
			skipped++
			continue
		}
		var f *position
		if full != nil {
			f = &full[i]
			if f.fen != p.fen {
				return 0, 0, fmt.Errorf("position %d is %q against the shipped tables, %q against the full ones", i+1, p.fen, f.fen)
			}
		}
		if !children {
			fmt.Fprintf(bw, "%s\t%s\t%s\n", p.fen, strings.Join(p.root[:], "\t"), forms(f != nil && f.root == p.root))
			rows++
			continue
		}
		if f != nil && len(f.children) != len(p.children) {
			return 0, 0, fmt.Errorf("%s: %d children against the shipped tables, %d against the full ones", p.fen, len(p.children), len(f.children))
		}
		for j, c := range p.children {
			if c.noTable {
				return 0, 0, fmt.Errorf("%s: no table for the child after %s", p.fen, c.move)
			}
			same := f != nil && f.children[j] == c
			fmt.Fprintf(bw, "%s\t%s\t%s\t%s\n", p.fen, c.move, strings.Join(c.ans[:], "\t"), forms(same))
			rows++
		}
	}
	return rows, skipped, bw.Flush()
}

func main() {
	children := flag.Bool("children", false, "write children.tsv rows (probe_fen ran with --children)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: probefentsv [-children] SHIPPED.txt [FULL.txt] > rows.tsv")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*children, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "probefentsv:", err)
		os.Exit(1)
	}
}

func run(children bool, args []string) error {
	shipped, err := readFile(args[0])
	if err != nil {
		return err
	}
	var full []position
	if len(args) == 2 {
		if full, err = readFile(args[1]); err != nil {
			return err
		}
	}
	if len(shipped) == 0 {
		return errors.New("no positions in " + args[0])
	}
	rows, skipped, err := write(os.Stdout, children, shipped, full)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "probefentsv: %d rows from %d positions, %d positions without an answer\n", rows, len(shipped), skipped)
	return nil
}
