package battery

import (
	"context"
	"errors"
	"fmt"
)

// Check is the battery's referee of itself: it reads only finished rows
// and recomputes every expected property from the row's arbiter (tb for
// the tables rows), so an expected value that no arbiter gives — a wrong
// mate distance, a move added to or dropped from a set, an edited clock, a
// position that its game record does not reach — is reported, one error
// per row at fault. groups, when not nil, lists the groups a row may
// name.
func Check(ctx context.Context, rows []Row, tb Prober, groups map[string]bool) error {
	var errs []error
	seen := map[string]string{}
	for i := range rows {
		r := &rows[i]
		if err := checkRow(ctx, r, tb, groups, seen); err != nil {
			errs = append(errs, fmt.Errorf("%s: row %s: %w", r.Where, r.ID, err))
		}
	}
	return errors.Join(errs...)
}

func checkRow(ctx context.Context, r *Row, tb Prober, groups map[string]bool, seen map[string]string) error {
	if prev, dup := seen[r.ID]; dup {
		return fmt.Errorf("id already used at %s", prev)
	}
	seen[r.ID] = r.Where
	if groups != nil && !groups[r.Group] {
		return fmt.Errorf("group %q has no quota entry", r.Group)
	}
	// Reparse the printed row, so a row built in memory is held to the
	// same form as one read from a file.
	parsed, err := parseRow(r.Line())
	if err != nil {
		return err
	}
	pos, _ := parsedPosition(parsed.FEN)
	if r.Source != "fen" {
		reached, err := Replay(r.Source)
		if err != nil {
			return err
		}
		if got := reached.FEN(); got != r.FEN {
			return fmt.Errorf("its game record reaches %s, not %s", got, r.FEN)
		}
	}
	want, err := Expect(ctx, r.Arbiter, pos, tb)
	if err != nil {
		return fmt.Errorf("arbiter %s: %w", r.Arbiter, err)
	}
	wantRow := Row{Props: want}
	if got, w := r.Properties(), wantRow.Properties(); got != w {
		return fmt.Errorf("properties %q, arbiter %s gives %q", got, r.Arbiter, w)
	}
	return nil
}
