package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/battery"
)

// The front end only parses flags; package battery's tests cover the
// battery. These rows check the wiring: --list prints every shipped row
// with its FEN, tier, group, properties and arbiter, and usage errors
// exit 2.
func TestBatteryCommand(t *testing.T) {
	rows, err := battery.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"battery", "--list"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("--list: exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(rows)+1 || lines[0] != battery.Header {
		t.Fatalf("--list: %d lines, header %q", len(lines), lines[0])
	}
	for i, r := range rows {
		if lines[i+1] != r.Line() {
			t.Errorf("--list line %d: %q, want %q", i+2, lines[i+1], r.Line())
		}
	}
	for _, args := range [][]string{{"battery"}, {"battery", "--nodes", "0", "--engine", "x"}, {"battery", "--bogus"}, {"battery", "extra"}} {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
