package fusefs

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// view is one of the position directories.
type view uint8

const (
	viewChess view = iota // human text, or JSON with .json
	viewWDL
	viewDTZ
	viewDTM
	viewDTM50
	viewDTC
	viewMoves // every legal move with its values, or JSON with .json
)

// dir is the view's directory name under the mount root.
func (v view) dir() string {
	switch v {
	case viewChess:
		return "chess"
	case viewWDL:
		return "wdl"
	case viewDTZ:
		return "dtz"
	case viewDTM:
		return "dtm"
	case viewDTM50:
		return "dtm50"
	case viewDTC:
		return "dtc"
	case viewMoves:
		return "moves"
	}
	return fmt.Sprintf("view(%d)", uint8(v))
}

// hasJSON reports whether name.json is also a file in this view.
func (v view) hasJSON() bool { return v == viewChess || v == viewMoves }

// jsonSuffix marks the JSON form of a chess/ or moves/ file.
const jsonSuffix = ".json"

// query is what a position path asks for.
type query struct {
	view view
	fen  string
	json bool
}

// parsePath reads a path relative to the mount root, such as
// "chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1.json". It is what the tree does one
// component at a time, in one piece, so it can be tested and fuzzed alone.
// It checks the shape of the path; the FEN itself is judged by the chess
// package.
func parsePath(p string) (query, error) {
	parts := strings.Split(p, "/")
	var v view
	found := false
	for _, cand := range views {
		if parts[0] == cand.dir() {
			v, found = cand, true
		}
	}
	if !found {
		return query{}, fmt.Errorf("%q is not a position directory", parts[0])
	}
	if len(parts) != 9 {
		return query{}, fmt.Errorf("a position path has 8 components after %s/, the FEN's ranks, not %d", v.dir(), len(parts)-1)
	}
	for _, r := range parts[1:8] {
		if err := checkRank(r); err != nil {
			return query{}, err
		}
	}
	fen, isJSON, err := positionName(parts[1:8], parts[8], v.hasJSON())
	if err != nil {
		return query{}, err
	}
	return query{view: v, fen: fen, json: isJSON}, nil
}

// checkRank accepts a directory name that can be one FEN rank: piece
// letters and digits 1-8 filling exactly eight squares. It is a quick
// shape check so that ls and cd refuse nonsense early; the whole FEN is
// checked by the chess package when the last component is looked up.
func checkRank(r string) error {
	if r == "" {
		return fmt.Errorf("empty rank")
	}
	width := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= '1' && c <= '8':
			width += int(c - '0')
		case strings.IndexByte("pnbrqkPNBRQK", c) >= 0:
			width++
		default:
			return fmt.Errorf("rank %q: %q is neither a piece letter nor a digit 1-8", r, c)
		}
		if width > 8 {
			return fmt.Errorf("rank %q covers more than 8 squares", r)
		}
	}
	if width != 8 {
		return fmt.Errorf("rank %q covers %d squares, not 8", r, width)
	}
	return nil
}

// positionName builds the FEN from the seven rank directories above and the
// last component, which holds the first rank and the remaining FEN fields
// separated by spaces or '_' ("K7 w - - 0 1", "K7_w_-_-_0_1", or just
// "K7_b"). Missing trailing fields are left out for the chess package to
// default. With allowJSON, a trailing ".json" asks for the JSON form.
func positionName(ranks []string, last string, allowJSON bool) (fen string, isJSON bool, err error) {
	if allowJSON && strings.HasSuffix(last, jsonSuffix) {
		last, isJSON = strings.TrimSuffix(last, jsonSuffix), true
	}
	var fields [maxFields]string
	n := splitFields(last, fields[:])
	if n == 0 {
		return "", false, fmt.Errorf("no first rank in %q", last)
	}
	if n > maxFields {
		return "", false, fmt.Errorf("%q has %d FEN fields, at most %d", last, n, maxFields)
	}
	if err := checkRank(fields[0]); err != nil {
		return "", false, err
	}
	size := 0
	for _, r := range ranks {
		size += len(r) + 1
	}
	for _, f := range fields[:n] {
		size += len(f) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range ranks {
		b.WriteString(r)
		b.WriteByte('/')
	}
	b.WriteString(fields[0])
	for _, f := range fields[1:n] {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String(), isJSON, nil
}

// maxFields is how many fields a FEN has.
const maxFields = 6

// splitFields splits s at '_' and white space, as strings.Fields splits at
// white space, into out, and returns how many fields s has, which may be
// more than out holds. It allocates nothing.
func splitFields(s string, out []string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			// Unicode white space: strings.Fields knows it.
			fields := strings.Fields(strings.ReplaceAll(s, "_", " "))
			copy(out, fields)
			return len(fields)
		}
	}
	n := 0
	for i := 0; i < len(s); {
		for i < len(s) && isFieldSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && !isFieldSpace(s[j]) {
			j++
		}
		if n < len(out) {
			out[n] = s[i:j]
		}
		n++
		i = j
	}
	return n
}

// isFieldSpace reports whether ASCII c separates FEN fields in a name:
// '_' or white space.
func isFieldSpace(c byte) bool {
	switch c {
	case '_', ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
