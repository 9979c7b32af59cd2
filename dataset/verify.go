package dataset

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tbfs/tbfs/chess"
)

// Problem is one failed check. Row is the dataset row number (-1 when the
// problem is about a file or the manifest); Line is the 1-based line in
// File (0 when not about a line).
type Problem struct {
	File   string
	Line   int
	Row    int
	Reason string
}

// String formats the problem as "file:line: row n: reason".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Row >= 0 {
		fmt.Fprintf(&b, ": row %d", p.Row)
	}
	b.WriteString(": ")
	b.WriteString(p.Reason)
	return b.String()
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Rows, Exact, Rejected int
	// Replayed counts the rows relabelled from the tables.
	Replayed int
	Problems []Problem
}

// OK reports whether every check passed.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// maxLine bounds one row's length: a row is well under a kilobyte, and a
// file that is not JSONL must fail, not exhaust memory.
const maxLine = 1 << 20

// Verify checks the artifact whose manifest is at manifestPath: every
// listed file's size and SHA-256, no file beside them, every row against
// the schema, every row replayed through l (the tables the caller opened,
// whose files must hash as each row's provenance says), and the manifest's
// counts and table list against the rows. It keeps going after a problem
// so that one run names them all; err is only for failures that stop the
// checks (an unreadable manifest, a failing table read).
func Verify(ctx context.Context, l *Labeler, manifestPath string) (*VerifyReport, error) {
	rep := &VerifyReport{}
	add := func(file string, line, row int, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{File: file, Line: line, Row: row, Reason: fmt.Sprintf(format, args...)})
	}
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := decodeStrict(data, &m); err != nil {
		add(ManifestName, 0, -1, "not a manifest: %v", err)
		return rep, nil
	}
	if m.Schema != SchemaVersion {
		add(ManifestName, 0, -1, "schema %q, this verifier reads %q", m.Schema, SchemaVersion)
		return rep, nil
	}
	dir := filepath.Dir(manifestPath)
	listed := map[string]bool{ManifestName: true}
	tables := map[string]string{}
	next := 0
	for _, f := range m.Files {
		if f.Name != filepath.Base(f.Name) || !strings.HasSuffix(f.Name, ".jsonl") || listed[f.Name] {
			add(ManifestName, 0, -1, "file name %q: want a distinct *.jsonl name with no directory", f.Name)
			continue
		}
		listed[f.Name] = true
		body, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			add(f.Name, 0, -1, "missing: %v", err)
			continue
		}
		if int64(len(body)) != f.Bytes {
			add(f.Name, 0, -1, "%d bytes, the manifest says %d", len(body), f.Bytes)
		}
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != f.SHA256 {
			add(f.Name, 0, -1, "SHA-256 %s, the manifest says %s", hex.EncodeToString(sum[:]), f.SHA256)
		}
		rows, err := verifyShard(ctx, l, &m.Params, f.Name, body, &next, rep, add, tables)
		if err != nil {
			return nil, err
		}
		if rows != f.Rows {
			add(f.Name, 0, -1, "%d rows, the manifest says %d", rows, f.Rows)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !listed[e.Name()] {
			add(e.Name(), 0, -1, "not listed in the manifest")
		}
	}
	if m.Params.FENsSHA256 == "" && rep.Rows != m.Params.Count {
		add(ManifestName, 0, -1, "%d rows, the parameters ask for %d", rep.Rows, m.Params.Count)
	}
	if m.Rows != rep.Rows || m.Exact != rep.Exact || m.Rejected != rep.Rejected {
		add(ManifestName, 0, -1, "counts %d rows (%d exact, %d rejected), the shards hold %d (%d, %d)",
			m.Rows, m.Exact, m.Rejected, rep.Rows, rep.Exact, rep.Rejected)
	}
	var want []TableFile
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		want = append(want, TableFile{File: name, SHA256: tables[name]})
	}
	if !slices.Equal(want, m.Tables) {
		add(ManifestName, 0, -1, "the table list differs from the union of the rows' provenance")
	}
	return rep, nil
}

// verifyShard checks and replays every row of one shard.
func verifyShard(ctx context.Context, l *Labeler, params *Params, name string, body []byte, next *int, rep *VerifyReport,
	add func(string, int, int, string, ...any), tables map[string]string) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 4096), maxLine)
	line, rows := 0, 0
	for sc.Scan() {
		line++
		rows++
		rowNo := *next
		*next++
		rep.Rows++
		var r Row
		if err := decodeStrict(sc.Bytes(), &r); err != nil {
			add(name, line, rowNo, "does not parse as a row: %v", err)
			continue
		}
		if r.Label == LabelExact {
			rep.Exact++
		} else if r.Label == LabelRejected {
			rep.Rejected++
		}
		if reason := validate(&r, rowNo); reason != "" {
			add(name, line, rowNo, "%s", reason)
			continue
		}
		if reason := fitsParams(&r, params); reason != "" {
			add(name, line, rowNo, "%s", reason)
		}
		for _, t := range r.Provenance.Tables {
			tables[t.File] = t.SHA256
		}
		if canon, _ := json.Marshal(&r); !bytes.Equal(canon, sc.Bytes()) {
			add(name, line, rowNo, "not in the canonical encoding (field order, spacing or escaping differ)")
			continue
		}
		got, err := l.Label(ctx, r.FEN)
		if err != nil {
			return 0, err
		}
		rep.Replayed++
		if reason := compare(&r, &got); reason != "" {
			add(name, line, rowNo, "replay: %s", reason)
		}
	}
	if err := sc.Err(); err != nil {
		add(name, line+1, -1, "unreadable: %v", err)
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		add(name, line, -1, "the last row does not end in a newline")
	}
	return rows, nil
}

// decodeStrict decodes one JSON value into v, rejecting unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// validate checks one row against the schema and the rules of the game,
// without the tables; "" means it passed.
func validate(r *Row, rowNo int) string {
	if r.Row != rowNo {
		return fmt.Sprintf("row field %d, want %d (rows are numbered in order from 0)", r.Row, rowNo)
	}
	if r.Provenance.TBFS == "" {
		return "provenance.tbfs is empty"
	}
	for _, t := range r.Provenance.Tables {
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != sha256.Size || strings.ToLower(t.SHA256) != t.SHA256 {
			return fmt.Sprintf("provenance table %s: sha256 %q is not 64 lower-case hex digits", t.File, t.SHA256)
		}
	}
	switch r.Label {
	case LabelRejected:
		if r.Reason == "" || r.Values != nil || r.Category != "" || r.KeepingMoves != nil || r.BestMoves != nil || len(r.Provenance.Tables) > 0 {
			return "a rejected row needs a reason and carries no category, values, moves or tables"
		}
		if r.Provenance.Arbiter != ArbiterRules && r.Provenance.Arbiter != ArbiterTable {
			return fmt.Sprintf("arbiter %q", r.Provenance.Arbiter)
		}
		return ""
	case LabelExact:
	default:
		return fmt.Sprintf("label %q: want %q or %q", r.Label, LabelExact, LabelRejected)
	}
	if r.Reason != "" || r.Values == nil || r.Values.WDL == nil || !slices.Contains(Categories, r.Category) {
		return "an exact row needs values with a wdl and a category of " + strings.Join(Categories, ", ") + ", and no reason"
	}
	switch r.Provenance.Arbiter {
	case ArbiterTable:
		if len(r.Provenance.Tables) == 0 {
			return "arbiter table with no table files"
		}
	case ArbiterRules:
	default:
		return fmt.Sprintf("arbiter %q on an exact row: want %q or %q", r.Provenance.Arbiter, ArbiterTable, ArbiterRules)
	}
	pos, err := chess.ParseFEN(r.FEN)
	if err != nil {
		return "fen: " + err.Error()
	}
	if pos.HalfmoveClock() != r.Clock {
		return fmt.Sprintf("clock %d, the FEN's half-move clock is %d", r.Clock, pos.HalfmoveClock())
	}
	// The rules: mate and stalemate are the board's, and every move named
	// must be legal.
	if r.Values.Checkmate != pos.IsCheckmate() || r.Values.Stalemate != pos.IsStalemate() {
		return fmt.Sprintf("checkmate %v stalemate %v, the rules say %v %v", r.Values.Checkmate, r.Values.Stalemate, pos.IsCheckmate(), pos.IsStalemate())
	}
	legal := map[string]bool{}
	for _, m := range pos.LegalMoves(nil) {
		legal[m.UCI()] = true
	}
	for _, set := range [][]string{r.KeepingMoves, r.BestMoves} {
		for _, m := range set {
			if !legal[m] {
				return fmt.Sprintf("move %s is not legal in the position", m)
			}
		}
		if !slices.IsSorted(set) {
			return "a move list is not sorted"
		}
	}
	if len(legal) > 0 && (len(r.KeepingMoves) == 0 || len(r.BestMoves) == 0) {
		return "the position has legal moves but the row names no keeping or best move"
	}
	// A best move must keep the result: the ranking puts results first.
	for _, m := range r.BestMoves {
		if !slices.Contains(r.KeepingMoves, m) {
			return fmt.Sprintf("best move %s does not keep the result", m)
		}
	}
	return ""
}

// fitsParams checks a row against the generation parameters: a random
// row's clock in the range and material among those asked for, an exact
// row's category among those asked for.
func fitsParams(r *Row, p *Params) string {
	if r.Label == LabelExact && len(p.Categories) > 0 && !slices.Contains(p.Categories, r.Category) {
		return fmt.Sprintf("category %s, the parameters ask for %s", r.Category, strings.Join(p.Categories, ","))
	}
	if p.FENsSHA256 != "" {
		return ""
	}
	if r.Clock < p.ClockMin || r.Clock > p.ClockMax {
		return fmt.Sprintf("clock %d outside the parameters' range %d-%d", r.Clock, p.ClockMin, p.ClockMax)
	}
	if r.Material != "" && len(p.Materials) > 0 && !slices.ContainsFunc(p.Materials, func(m string) bool { return sameMaterial(m, r.Material) }) {
		return fmt.Sprintf("material %s, the parameters ask for %s", r.Material, strings.Join(p.Materials, ","))
	}
	return ""
}

// sameMaterial reports whether the material spec m ("KQvK", "KKQ") names
// the canonical material c (either side may be first).
func sameMaterial(m, c string) bool {
	a, b, err := splitMaterial(m)
	if err != nil {
		return false
	}
	// The tables name each side king first, then Q R B N P.
	name := func(pts []chess.PieceType) string {
		pts = slices.Clone(pts)
		slices.SortFunc(pts, func(a, b chess.PieceType) int {
			return strings.IndexByte("KQRBNP", "-PNBRQK"[a]) - strings.IndexByte("KQRBNP", "-PNBRQK"[b])
		})
		out := make([]byte, len(pts))
		for i, pt := range pts {
			out[i] = "-PNBRQK"[pt]
		}
		return string(out)
	}
	x, y := name(a), name(b)
	return x+y == c || y+x == c
}

// compare names the first field in which a stored row differs from its
// replay; "" when they agree. The tbfs version is not compared: a newer
// build replaying an older artifact must reach the same labels.
func compare(stored, replay *Row) string {
	type field struct {
		name      string
		got, want any
	}
	var sv, rv Values
	if stored.Values != nil {
		sv = *stored.Values
	}
	if replay.Values != nil {
		rv = *replay.Values
	}
	fields := []field{
		{"label", stored.Label, replay.Label},
		{"fen", stored.FEN, replay.FEN},
		{"material", stored.Material, replay.Material},
		{"clock", stored.Clock, replay.Clock},
		{"category", stored.Category, replay.Category},
		{"values.wdl", deref(sv.WDL), deref(rv.WDL)},
		{"values.dtz", deref(sv.DTZ), deref(rv.DTZ)},
		{"values.dtm", deref(sv.DTM), deref(rv.DTM)},
		{"values.dtm50", deref(sv.DTM50), deref(rv.DTM50)},
		{"values.dtc", derefDTC(sv.DTC), derefDTC(rv.DTC)},
		{"values.checkmate", sv.Checkmate, rv.Checkmate},
		{"values.stalemate", sv.Stalemate, rv.Stalemate},
		{"keeping_moves", stored.KeepingMoves, replay.KeepingMoves},
		{"best_moves", stored.BestMoves, replay.BestMoves},
		{"reason", stored.Reason, replay.Reason},
		{"provenance.arbiter", stored.Provenance.Arbiter, replay.Provenance.Arbiter},
	}
	for _, f := range fields {
		if !reflect.DeepEqual(f.got, f.want) {
			return fmt.Sprintf("%s is %v, the tables say %v", f.name, f.got, f.want)
		}
	}
	want := map[string]string{}
	for _, t := range replay.Provenance.Tables {
		want[t.File] = t.SHA256
	}
	for _, t := range stored.Provenance.Tables {
		sum, ok := want[t.File]
		switch {
		case !ok:
			return fmt.Sprintf("provenance names %s, which the given tables do not hold or the replay does not read", t.File)
		case sum != t.SHA256:
			return fmt.Sprintf("provenance table %s has SHA-256 %s, the given tables' file has %s", t.File, t.SHA256, sum)
		}
		delete(want, t.File)
	}
	for f := range want {
		return fmt.Sprintf("provenance leaves out %s, which the replay reads", f)
	}
	return ""
}

// deref shows a nil metric as "none" in messages and comparisons.
func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}

func derefDTC(p *DTC) any {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%d/%d", p.Pushes, p.Plies)
}
