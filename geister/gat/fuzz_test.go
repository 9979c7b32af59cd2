package gat

import "testing"

// FuzzParse feeds arbitrary lines to the parsers: they must never panic,
// and whatever they accept must print back to a line that parses to the
// same message.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SET?\r\n", "OK", "OKR", "NG ", "MOV?" + startBoard, "WON:" + startBoard, "DRW:" + startBoard,
		"SET:ABCD", "MOV:A,NORTH", "MOV:h,w", "MOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u1",
		"LST:99r99r99r99r99b99b99b88b99r99r99r99r99b99b99b99b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if m, err := ParseServer(line); err == nil {
			again, err := ParseServer(m.String())
			if err != nil || again != m {
				t.Fatalf("server %q -> %+v -> %q -> %+v, %v", line, m, m.String(), again, err)
			}
			if m.Kind == MoveQuery {
				m.Board.Observation() // may fail, must not panic
			}
		}
		if m, err := ParseClient(line); err == nil {
			again, err := ParseClient(m.String())
			if err != nil || again != m {
				t.Fatalf("client %q -> %+v -> %q -> %+v, %v", line, m, m.String(), again, err)
			}
		}
		if len(line) == BoardLen {
			if g, err := ParseSetup(line); err == nil {
				for p := 0; p < 2; p++ {
					if _, err := ParseBoard(g.View(p, false).String()); err != nil {
						t.Fatalf("setup %q: view %d does not parse: %v", line, p, err)
					}
					g.Position(p)
				}
			}
		}
	})
}
