package chess

import (
	"errors"
	"fmt"
	"strings"
)

// ErrIllegalMove is wrapped by ParseMove's errors: the text is not a legal
// move in the position.
var ErrIllegalMove = errors.New("chess: illegal move")

// SAN returns the legal move m in Standard Algebraic Notation ("Nbd7",
// "exd6", "e8=Q+", "O-O#").
func (p *Position) SAN(m Move) string {
	var buf [256]Move
	return p.san(m, p.LegalMoves(buf[:0]), true)
}

// san writes m; legal is the position's legal move list, used for
// disambiguation; suffix asks for the check or mate sign.
func (p *Position) san(m Move, legal []Move, suffix bool) string {
	var b strings.Builder
	from, to := m.From(), m.To()
	pt := p.typeAt(from)
	switch {
	case m.IsCastle():
		if to.File() == 6 {
			b.WriteString("O-O")
		} else {
			b.WriteString("O-O-O")
		}
	case pt == Pawn:
		if p.IsCapture(m) {
			b.WriteByte(byte('a' + from.File()))
			b.WriteByte('x')
		}
		b.WriteString(to.String())
		if pr := m.Promotion(); pr != NoPieceType {
			b.WriteByte('=')
			b.WriteByte("-PNBRQK"[pr])
		}
	default:
		b.WriteByte("-PNBRQK"[pt])
		// Disambiguate among other pieces of the same type reaching to.
		sameFile, sameRank, others := false, false, false
		for _, o := range legal {
			if o.To() != to || o.From() == from || o.IsCastle() || p.typeAt(o.From()) != pt {
				continue
			}
			others = true
			if o.From().File() == from.File() {
				sameFile = true
			}
			if o.From().Rank() == from.Rank() {
				sameRank = true
			}
		}
		if others {
			switch {
			case !sameFile:
				b.WriteByte(byte('a' + from.File()))
			case !sameRank:
				b.WriteByte(byte('1' + from.Rank()))
			default:
				b.WriteString(from.String())
			}
		}
		if p.IsCapture(m) {
			b.WriteByte('x')
		}
		b.WriteString(to.String())
	}
	if suffix {
		c := p.Play(m)
		if c.InCheck() {
			if c.hasLegalMove() {
				b.WriteByte('+')
			} else {
				b.WriteByte('#')
			}
		}
	}
	return b.String()
}

// ParseMove parses a move in UCI ("e2e4", "e7e8q", "e1g1") or SAN ("Nf3",
// "exd6", "e8=Q", "O-O", "0-0") notation. The move must be legal in the
// position; the error wraps ErrIllegalMove otherwise.
func (p *Position) ParseMove(s string) (Move, error) {
	var buf [256]Move
	legal := p.LegalMoves(buf[:0])
	t := strings.TrimSpace(s)
	if u := strings.ToLower(t); len(u) == 4 || len(u) == 5 {
		if from, err := ParseSquare(u[:2]); err == nil {
			if to, err := ParseSquare(u[2:4]); err == nil {
				promo := NoPieceType
				if len(u) == 5 {
					promo = PieceType(strings.IndexByte("-pnbrqk", u[4]))
				}
				if promo != PieceType(0xff) {
					for _, m := range legal {
						if m.From() == from && m.To() == to && m.Promotion() == promo {
							return m, nil
						}
					}
					return NoMove, fmt.Errorf("%w: %q in %s", ErrIllegalMove, s, p.FEN())
				}
			}
		}
	}
	norm := strings.TrimRight(t, "+#!?")
	norm = strings.ReplaceAll(norm, "0", "O")
	norm = strings.ReplaceAll(norm, "=", "")
	// Accept a lower-case promotion letter after the destination ("e8q").
	if n := len(norm); n >= 3 && norm[n-2] >= '1' && norm[n-2] <= '8' && strings.IndexByte("nbrq", norm[n-1]) >= 0 {
		norm = norm[:n-1] + strings.ToUpper(norm[n-1:])
	}
	if norm == "" {
		return NoMove, fmt.Errorf("%w: empty move", ErrIllegalMove)
	}
	for _, m := range legal {
		if strings.ReplaceAll(p.san(m, legal, false), "=", "") == norm {
			return m, nil
		}
	}
	// Accept over-specified SAN ("Ngf3" where "Nf3" suffices, "Pe4").
	for _, m := range legal {
		if m.IsCastle() {
			continue
		}
		pt := p.typeAt(m.From())
		long := m.From().String() + m.To().String()
		capt := m.From().String() + "x" + m.To().String()
		var letter string
		if pt != Pawn {
			letter = string("-PNBRQK"[pt])
		}
		promo := ""
		if pr := m.Promotion(); pr != NoPieceType {
			promo = string("-PNBRQK"[pr])
		}
		for _, cand := range []string{letter + long + promo, letter + capt + promo} {
			if cand == norm {
				return m, nil
			}
		}
	}
	return NoMove, fmt.Errorf("%w: %q in %s", ErrIllegalMove, s, p.FEN())
}
