package chess

import (
	"fmt"
	"math/bits"
	"strings"
)

// lightSquares are the light squares (b1, a2, ...): a bishop never leaves
// the colour it stands on, so each side's bishops beyond one per colour
// are promoted pawns.
const lightSquares Bitboard = 0x55aa55aa55aa55aa

// ParseFENLenient parses a FEN as lichess's tablebase server reads one
// (shakmaty's parser, a standard-chess position with invalid castling
// rights, an invalid en-passant square and an impossible check ignored),
// where ParseFEN refuses what is wrong:
//   - castling may be written in X-FEN or Shredder-FEN (K, Q, k, q or a
//     rook's file letter, upper case for White, in any order, repeats
//     ignored; at most two per side);
//   - a castling right without its king on e1/e8 and rook on the corner is
//     dropped, as is an en-passant square no double push explains;
//   - a piece letter may carry a ~ (Crazyhouse's promoted mark), the
//     placement may end in a Crazyhouse pocket ([Qn] or a ninth /-part),
//     and a Three-check field (3+3 or +0+0) may stand before or after the
//     clocks; all are ignored;
//   - clocks past what a position holds are saturated.
//
// The position must still be one a game can reach as shakmaty judges it:
// one king a side, no pawn on the first or last rank, the side not to move
// not in check, and no more pieces than promotions explain, counting
// bishops of each square colour apart. Errors wrap ErrBadFEN or
// ErrIllegalPosition as ParseFEN's do.
func ParseFENLenient(s string) (Position, error) {
	var p Position
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '_' })
	if len(fields) == 0 {
		return p, fmt.Errorf("%w: empty", ErrBadFEN)
	}
	placement, err := withoutPocket(fields[0])
	if err != nil {
		return Position{}, err
	}
	if err := p.parsePlacement(placement, true); err != nil {
		return Position{}, err
	}
	fields = fields[1:]
	next := func() (string, bool) {
		if len(fields) == 0 {
			return "", false
		}
		f := fields[0]
		fields = fields[1:]
		return f, true
	}
	p.side = White
	if f, ok := next(); ok {
		switch f {
		case "w":
		case "b":
			p.side = Black
		default:
			return Position{}, fmt.Errorf("%w: side to move %q, want w or b", ErrBadFEN, f)
		}
	}
	var rooks Bitboard // the castling field as rook squares, shakmaty's form
	if f, ok := next(); ok && f != "-" {
		var err error
		if rooks, err = p.castlingRooks(f); err != nil {
			return Position{}, err
		}
	}
	p.ep = NoSquare
	if f, ok := next(); ok && f != "-" {
		sq, err := ParseSquare(f)
		if err != nil {
			return Position{}, fmt.Errorf("%w: bad en-passant field %q", ErrBadFEN, f)
		}
		p.ep = sq
	}
	checks := false
	clock, ok := next()
	if ok && isChecksField(clock) {
		checks = true
		clock, ok = next()
	}
	p.fullmove = 1
	if ok {
		n, good := saturatedCount(clock)
		if !good {
			return Position{}, fmt.Errorf("%w: bad half-move clock %q", ErrBadFEN, clock)
		}
		p.halfmove = n
		if f, ok := next(); ok {
			n, good := saturatedCount(f)
			if !good {
				return Position{}, fmt.Errorf("%w: bad move number %q", ErrBadFEN, f)
			}
			p.fullmove = max(n, 1)
		}
	}
	if f, ok := next(); ok && !checks && isChecksField(f) {
		checks = true
	} else if ok {
		fields = append([]string{f}, fields...)
	}
	if len(fields) > 0 {
		return Position{}, fmt.Errorf("%w: %q after the last field", ErrBadFEN, strings.Join(fields, " "))
	}
	p.castling = p.standardCastling(rooks)
	if err := p.checkMaterial(); err != nil {
		return Position{}, err
	}
	if p.ep != NoSquare && p.checkEP() != nil {
		p.ep = NoSquare
	}
	if err := p.validate(); err != nil {
		return Position{}, err
	}
	return p, nil
}

// withoutPocket strips a Crazyhouse pocket from a placement field, as
// shakmaty reads one: a [...] suffix, or what follows an eighth '/', at
// most 64 piece letters.
func withoutPocket(field string) (string, error) {
	board, pocket := field, ""
	if strings.HasSuffix(field, "]") {
		i := strings.IndexByte(field, '[')
		if i < 0 {
			return "", fmt.Errorf("%w: placement %q ends in ] without [", ErrBadFEN, field)
		}
		board, pocket = field[:i], field[i+1:len(field)-1]
	} else if parts := strings.SplitN(field, "/", 9); len(parts) == 9 {
		board, pocket = strings.Join(parts[:8], "/"), parts[8]
	}
	if len(pocket) > 64 {
		return "", fmt.Errorf("%w: pocket of %d pieces", ErrBadFEN, len(pocket))
	}
	for i := 0; i < len(pocket); i++ {
		if _, ok := pieceFromLetter(pocket[i]); !ok {
			return "", fmt.Errorf("%w: bad character %q in the pocket", ErrBadFEN, pocket[i])
		}
	}
	return board, nil
}

// parsePlacement reads the piece placement field into p; with marks, a
// piece letter may be followed by a ~, which is skipped.
func (p *Position) parsePlacement(field string, marks bool) error {
	ranks := strings.Split(field, "/")
	if len(ranks) != 8 {
		return fmt.Errorf("%w: placement has %d ranks, want 8", ErrBadFEN, len(ranks))
	}
	for i, row := range ranks {
		r := 7 - i
		f := 0
		for j := 0; j < len(row); j++ {
			ch := row[j]
			if ch >= '1' && ch <= '8' {
				f += int(ch - '0')
				if f > 8 {
					return fmt.Errorf("%w: rank %d has more than 8 squares", ErrBadFEN, r+1)
				}
				continue
			}
			pc, ok := pieceFromLetter(ch)
			if !ok {
				return fmt.Errorf("%w: bad character %q in rank %d", ErrBadFEN, ch, r+1)
			}
			if f >= 8 {
				return fmt.Errorf("%w: rank %d has more than 8 squares", ErrBadFEN, r+1)
			}
			p.put(pc, MakeSquare(f, r))
			f++
			if marks && j+1 < len(row) && row[j+1] == '~' {
				j++
			}
		}
		if f != 8 {
			return fmt.Errorf("%w: rank %d has %d squares, want 8", ErrBadFEN, r+1, f)
		}
	}
	return nil
}

// castlingRooks reads a castling field as the set of back-rank squares it
// names: K (k) the outermost of the side's rooks and king on the king's
// wing if it is a rook, else h1 (h8); Q (q) likewise on the a-side; a file
// letter that file's back-rank square.
func (p *Position) castlingRooks(field string) (Bitboard, error) {
	var set Bitboard
	for i := 0; i < len(field); i++ {
		ch := field[i]
		c, back := White, rank1
		if ch >= 'a' && ch <= 'z' {
			c, back = Black, rank8
			ch -= 'a' - 'A'
		}
		rank := 0
		if c == Black {
			rank = 7
		}
		onBack := (p.pieces[Rook] | p.pieces[King]) & p.colors[c] & back
		var sq Square
		switch {
		case ch == 'K':
			sq = MakeSquare(7, rank)
			if onBack != 0 {
				if last := Square(63 - bits.LeadingZeros64(uint64(onBack))); p.pieces[Rook].Has(last) {
					sq = last
				}
			}
		case ch == 'Q':
			sq = MakeSquare(0, rank)
			if onBack != 0 && p.pieces[Rook].Has(onBack.LSB()) {
				sq = onBack.LSB()
			}
		case ch >= 'A' && ch <= 'H':
			sq = MakeSquare(int(ch-'A'), rank)
		default:
			return 0, fmt.Errorf("%w: bad castling field %q", ErrBadFEN, field)
		}
		set |= SquareBB(sq)
	}
	if (set&rank1).Count() > 2 || (set&rank8).Count() > 2 {
		return 0, fmt.Errorf("%w: castling field %q names more than two rooks of a side", ErrBadFEN, field)
	}
	return set, nil
}

// standardCastling keeps the rights of rooks that standard chess can
// castle with: the king on e1 (e8), the named rook on a corner of its rank
// and the outermost named rook on its wing.
func (p *Position) standardCastling(rooks Bitboard) CastlingRights {
	var out CastlingRights
	for i, h := range castleHomes {
		c := White
		if i >= 2 {
			c = Black
		}
		if p.PieceAt(h.king) == MakePiece(c, King) && p.PieceAt(h.rook) == MakePiece(c, Rook) && rooks.Has(h.rook) {
			out |= CastlingRights(1 << i)
		}
	}
	return out
}

// checkMaterial refuses more pieces than a side's promotions explain,
// counting its bishops on light and dark squares apart.
func (p *Position) checkMaterial() error {
	for c := White; c <= Black; c++ {
		own := p.colors[c]
		bishops := p.pieces[Bishop] & own
		promoted := max(0, (p.pieces[Queen]&own).Count()-1) +
			max(0, (p.pieces[Rook]&own).Count()-2) +
			max(0, (p.pieces[Knight]&own).Count()-2) +
			max(0, (bishops&lightSquares).Count()-1) +
			max(0, (bishops&^lightSquares).Count()-1)
		if pawns := (p.pieces[Pawn] & own).Count(); pawns+promoted > 8 {
			return fmt.Errorf("%w: %s has %d pawns and %d promoted pieces, at most 8 together",
				ErrIllegalPosition, colorName(c), pawns, promoted)
		}
	}
	return nil
}

// isChecksField reports a Three-check field: +W+B (checks given) or W+B
// (checks left), each at most 3.
func isChecksField(f string) bool {
	parts := strings.Split(f, "+")
	digits := func(s string) bool {
		n, ok := saturatedCount(s)
		return ok && n <= 3
	}
	switch len(parts) {
	case 3:
		return parts[0] == "" && digits(parts[1]) && digits(parts[2])
	case 2:
		return digits(parts[0]) && digits(parts[1])
	}
	return false
}

// saturatedCount reads a run of decimal digits, values past maxClock
// taken as maxClock.
func saturatedCount(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = min(10*n+int(s[i]-'0'), maxClock)
	}
	return int32(n), true
}
