package tables_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/chess"
	"github.com/tbfs/tbfs/cmd/internal/tables"
	"github.com/tbfs/tbfs/format/chesstb"
	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
	"github.com/tbfs/tbfs/source/mmap"
)

// TestMetadataTTLFlag: the flag's 0 means ask every time, so it must not
// reach the options as their zero (which is their default, five minutes);
// a negative value is refused when the flag is parsed.
func TestMetadataTTLFlag(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want time.Duration
		err  bool
	}{
		{"0", tables.AskEveryTime, false},
		{"0s", tables.AskEveryTime, false},
		{"1m", time.Minute, false},
		{"-1s", 0, true},
		{"soon", 0, true},
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		ttl := tables.MetadataTTL(5 * time.Minute)
		fs.Var(&ttl, "metadata-ttl", "")
		err := fs.Parse([]string{"--metadata-ttl", c.arg})
		if (err != nil) != c.err {
			t.Errorf("--metadata-ttl %s: error %v, want one: %v", c.arg, err, c.err)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "metadata-ttl") {
				t.Errorf("--metadata-ttl %s: error %q does not name the flag", c.arg, err)
			}
			continue
		}
		if got := ttl.TTL(); got != c.want || got <= 0 {
			t.Errorf("--metadata-ttl %s: TTL %v, want %v (and never the options' zero)", c.arg, got, c.want)
		}
	}
}

// TestMetadataTTLZeroFindsNewTable: a table copied into a location after a
// probe found it missing answers the next probe when --metadata-ttl is 0,
// and stays missing for the TTL otherwise. Arbiter: the chesstb oracle's
// WDL of a KQK fixture row.
func TestMetadataTTLZeroFindsNewTable(t *testing.T) {
	var row chesstboracle.Row
	for _, r := range chesstboracle.Read(t, testenv.Testdata(t, "chesstb", "oracle", "probe.tsv")) {
		if pieces(r.FEN) == "KQk" && r.WDL == "WIN" {
			row = r
			break
		}
	}
	if row.FEN == "" {
		t.Fatal("no KQK win in the fixture oracle")
	}
	pos, err := chess.ParseFEN(row.FEN)
	if err != nil {
		t.Fatal(err)
	}
	want, err := row.Class()
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(testenv.Testdata(t, "chesstb", "wdl", "KQK.lzw"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag      time.Duration
		findsLate bool
	}{{0, true}, {5 * time.Minute, false}} {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "wdl"), 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := mmap.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := chesstb.Open(chesstb.Options{MissingTTL: tables.MetadataTTL(c.flag).TTL()}, src)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := tb.WDL(ctx, &pos); !errors.Is(err, chesstb.ErrNoTable) {
			t.Fatalf("ttl flag %v: probe of an empty location: %v, want ErrNoTable", c.flag, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "wdl", "KQK.lzw"), table, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := tb.WDL(ctx, &pos)
		switch {
		case c.findsLate && (err != nil || got != want):
			t.Errorf("ttl flag %v: after the table appeared: %d, %v; want the oracle's %d (%s)", c.flag, got, err, want, row.Where)
		case !c.findsLate && !errors.Is(err, chesstb.ErrNoTable):
			t.Errorf("ttl flag %v: the miss was not remembered: %d, %v", c.flag, got, err)
		}
		tb.Close()
		src.Close()
	}
}

// pieces returns a FEN's pieces sorted, white's first: "KQk" for KQK.
func pieces(fen string) string {
	var rs []rune
	board, _, _ := strings.Cut(fen, " ")
	for _, r := range board {
		if strings.ContainsRune("KQRBNPkqrbnp", r) {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	return string(rs)
}
