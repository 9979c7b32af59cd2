package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
)

// FuzzWriteRows checks writeRows against its definition, the layout
// text/tabwriter (padding 2, spaces; the arbiter) gives the same rows as
// "indent name\tvalue" lines, the way Text wrote them through it.
func FuzzWriteRows(f *testing.F) {
	f.Add("  ", "material\x00KQvK\x00WDL\x002\x00Syzygy DTZ\x0017 (DTZ50'', precise)")
	f.Add("    ", "DTM\x00no table for KQvK (dtm/KQK.lzdtm: not found)\x00DTC\x00a\tb")
	f.Add("  ", "error\x00line one\nline two\x00WDL\x00-2")
	f.Add("  ", "name\x00\xff escaped \xff\x00é\x00wide ünïcode")
	f.Add("  ", "")
	f.Fuzz(func(t *testing.T, indent, cells string) {
		var rows []textRow
		parts := strings.Split(cells, "\x00")
		for i := 0; i+1 < len(parts); i += 2 {
			rows = append(rows, textRow{parts[i], parts[i+1]})
		}
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintf(tw, "%s%s\t%s\n", indent, r.name, r.value)
		}
		tw.Flush()
		var got bytes.Buffer
		writeRows(&got, indent, rows)
		if got.String() != want.String() {
			t.Fatalf("writeRows(%q, %q):\n%q\ntabwriter:\n%q", indent, rows, got.String(), want.String())
		}
	})
}
