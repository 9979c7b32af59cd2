package fusefs

import (
	"bytes"
	"fmt"

	"github.com/tbfs/tbfs/source"
)

// readmeText writes the mount's README: how to ask for a position, what
// each directory holds, and where the tables come from.
func readmeText(cfg Config) []byte {
	var b bytes.Buffer
	b.WriteString(`tbfs: chess endgame tablebases as files

Every position is a path. Its FEN's ranks are directories and the last
component holds the first rank and the remaining FEN fields, separated by
spaces or underscores. Missing trailing fields default (white to move, no
castling, no en passant, clock 0, move 1).

  cat "chess/8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"      the values, for people
  cat  chess/8/8/8/5k2/8/8/1Q6/K7_w_-_-_0_1.json  the same as one JSON object
  cat  wdl/8/8/8/5k2/8/8/1Q6/K7_w                 just the WDL value (-2..2)

Directories:
  chess/<FEN>        category, WDL, DTZ, DTC, DTM, DTM50, and what no table
                     answered and why; <FEN>.json gives the JSON form
  wdl/<FEN>          -2 (loss) .. 2 (win) for the side to move, read from
                     the WDL tables alone
  dtz/<FEN>          signed plies to the next zeroing move: chesstb's exact
                     distance where chesstb tables answer, else the Syzygy
                     table's DTZ50'' as it stands (past +-100 in the cursed
                     band, n possibly meaning n+1 where the table rounds);
                     chess/<FEN>.json says which ("formats", "syzygy_dtz")
  dtm/<FEN>          signed plies to mate, ignoring the 50-move rule
  dtm50/<FEN>        signed plies to mate within the 50-move rule from the clock
  dtc/<FEN>          "pushes plies": depth to conversion
  moves/<FEN>        every legal move with the values after it, best first
                     by DTZ under the 50-move rule at the FEN's clock
                     (<FEN>.json for JSON)
`)
	if cfg.Geister != nil {
		b.WriteString(`  geister/<board>    a Geister board's distance to win and every move;
                     the board as its GAT string, or its six rows as
                     directories (geister/r1/r2/r3/r4/r5/r6); .json for JSON
`)
	}
	b.WriteString(`  tables/            the raw table files (table files only, never wider
                     permissions than the source's), read through the same
                     transport and cache, for any other tool
  .stats             JSON counters: probes, refusals, transport and cache

The tables may be chesstb files (wdl/, dtz/, dtm/ ... folders), Syzygy
files (KQvK.rtbw, KQvK.rtbz at a location's root) or both: WDL and DTZ come
from either, and where both hold a position they must agree, or reading it
is an I/O error naming both values. DTM, DTC and DTM50 only chesstb holds.

Errors: a path that is not a legal position, or a metric no table answers,
does not exist (ENOENT); .stats lists recent refusals with the reason.
A transport failure is an I/O error (EIO), never a guessed value.

Tables:
`)
	if len(cfg.TableURLs) == 0 {
		b.WriteString("  (none configured)\n")
	}
	for _, u := range cfg.TableURLs {
		fmt.Fprintf(&b, "  %s\n", redactURL(u))
	}
	return b.Bytes()
}

// redactURL hides credentials in a table URL before it is shown.
func redactURL(raw string) string { return source.RedactURL(raw) }
