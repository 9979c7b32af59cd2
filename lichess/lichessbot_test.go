package lichess_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
)

// botNameToWDL is lichess-bot's name_to_wld (lib/engine_wrapper.py,
// get_lichess_egtb_move): a category it does not list raises KeyError,
// which its caller swallows, and the bot then gets no tablebase move.
var botNameToWDL = map[string]int{"loss": -2, "maybe-loss": -1, "blessed-loss": -1, "draw": 0,
	"cursed-win": 1, "maybe-win": 1, "win": 2}

// botMove replays lichess-bot's online tablebase call and parsing: GET
// {base}/standard with fen=board.fen(), then, for move_quality "best",
// moves[0]'s uci, wdl = -name_to_wld[category] and dtz = -moves[0]["dtz"]
// (a null dtz raises TypeError, swallowed: no move); for "suggest", every
// move whose -name_to_wld equals the first's. ok is false where the bot
// would have given up on the answer.
func botMove(t *testing.T, base, fen string) (best string, wdl int, suggest []string, ok bool) {
	t.Helper()
	resp, err := http.Get(base + "/standard?" + url.Values{"fen": {fen}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data struct {
		Moves []struct {
			UCI      string   `json:"uci"`
			Category string   `json:"category"`
			DTZ      *float64 `json:"dtz"`
			DTM      *float64 `json:"dtm"`
		} `json:"moves"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&data) != nil || len(data.Moves) == 0 {
		return "", 0, nil, false
	}
	first := data.Moves[0]
	w, known := botNameToWDL[first.Category]
	if !known || first.DTZ == nil {
		return "", 0, nil, false
	}
	for _, m := range data.Moves {
		if mw, known := botNameToWDL[m.Category]; known && -mw == -w {
			suggest = append(suggest, m.UCI)
		}
	}
	return first.UCI, -w, suggest, true
}

// TestLichessBotKeepsRuleTrueResult points lichess-bot's tablebase move
// selection (replayed above) at the server for every parent of the shared
// children.tsv: the move it plays, and every move it suggests, must reach
// the best rule-true result the mover has (children.tsv's child values at
// the clock the move leaves, and the 50-move rule), and it must resign
// (wdl -2) only where the position is lost under the rule.
func TestLichessBotKeepsRuleTrueResult(t *testing.T) {
	base, oracle := sharedServer(t)
	kids := map[string]map[string]string{}
	var parents []string
	for _, r := range chesstboracle.Read(t, filepath.Join(oracle, "children.tsv")) {
		if kids[r.FEN] == nil {
			kids[r.FEN] = map[string]string{}
			parents = append(parents, r.FEN)
		}
		kids[r.FEN][r.Move] = r.WantRuleCategory(t)
	}
	parents = chesstboracle.Sample(parents, 20, raceEnabled || testing.Short())
	// The example: drawn by the clock, so no resignation.
	parents = append(parents, "8/8/8/5k2/8/8/1Q6/K7 b - - 90 1")
	checked := 0
	for _, fen := range parents {
		best, wdl, suggest, ok := botMove(t, base, fen)
		if !ok {
			t.Errorf("%s: lichess-bot would get no move from the answer", fen)
			continue
		}
		rows := kids[fen]
		if rows == nil {
			if wdl == -2 {
				t.Errorf("%s: the bot would resign a position the 50-move rule draws", fen)
			}
			continue
		}
		top := -3
		for _, c := range rows {
			top = max(top, -categoryValue[c])
		}
		reach := func(uci string) int {
			c, ok := rows[uci]
			if !ok {
				t.Fatalf("%s: move %s not in the reference's list", fen, uci)
			}
			return -categoryValue[c]
		}
		if got := reach(best); got != top {
			t.Errorf("%s: the bot plays %s reaching %d, best rule-true result %d", fen, best, got, top)
		}
		for _, m := range suggest {
			if got := reach(m); got != top {
				t.Errorf("%s: the bot is suggested %s reaching %d, best rule-true result %d", fen, m, got, top)
			}
		}
		if wdl == -2 && top != -2 {
			t.Errorf("%s: the bot would resign (wdl -2), rule-true result %d", fen, top)
		}
		checked++
	}
	t.Logf("%d oracle positions replayed", checked)
}
