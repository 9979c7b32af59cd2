package gat

import (
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/geister"
)

// Kind is the type of a protocol message.
type Kind uint8

// Message kinds. The first group is sent by the server, the second by
// clients.
const (
	// SetQuery ("SET?") asks a client which four of its pieces are red.
	SetQuery Kind = iota + 1
	// MoveQuery ("MOV?<board>") asks a client for its move on the board.
	MoveQuery
	// Accepted ("OK ", "OKR", "OKB") accepts the last command; after a
	// move that captured, it names the colour taken. The reference server
	// pads the plain reply to three characters ("OK " with a trailing
	// space); a bare "OK" is read too.
	Accepted
	// Refused ("NG ", also padded; "NG" is read too) refuses the last
	// command.
	Refused
	// Won, Lost and Drawn ("WON:", "LST:", "DRW:" with the board, every
	// colour revealed) end the game.
	Won
	Lost
	Drawn

	// Set ("SET:ABCD") names the client's four red pieces.
	Set
	// MoveCmd ("MOV:A,NORTH") moves one of the client's pieces.
	MoveCmd
)

// String names the kind as its wire prefix.
func (k Kind) String() string {
	switch k {
	case SetQuery:
		return "SET?"
	case MoveQuery:
		return "MOV?"
	case Accepted:
		return "OK"
	case Refused:
		return "NG"
	case Won:
		return "WON"
	case Lost:
		return "LST"
	case Drawn:
		return "DRW"
	case Set:
		return "SET:"
	case MoveCmd:
		return "MOV:"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Message is one line of the protocol, without its CRLF.
type Message struct {
	Kind Kind
	// Board is the board of MoveQuery, Won, Lost and Drawn.
	Board Board
	// Taken is the colour captured by the accepted move, 'R' or 'B', or 0.
	Taken byte
	// Red lists the four red pieces of Set as indexes 0..7, ascending.
	Red [4]int
	// Piece (0..7, A..H) and Dir are the move of MoveCmd.
	Piece int
	Dir   geister.Dir
}

// MaxLine bounds a protocol line (a board message is 52 bytes); a longer
// line is malformed.
const MaxLine = 256

// Clean drops the line end and surrounding spaces: servers in the field end
// lines with CRLF and the reference pads its two-letter replies ("OK ",
// "NG ").
func Clean(line string) string {
	return strings.TrimSpace(strings.TrimRight(line, "\r\n"))
}

// ParseServer reads a line a server sends.
func ParseServer(line string) (Message, error) {
	s := Clean(line)
	if len(s) > MaxLine {
		return Message{}, fmt.Errorf("%w server message: %d bytes", ErrSyntax, len(s))
	}
	switch {
	case s == "SET?":
		return Message{Kind: SetQuery}, nil
	case s == "OK":
		return Message{Kind: Accepted}, nil
	case s == "OKR" || s == "OKB":
		return Message{Kind: Accepted, Taken: s[2]}, nil
	case s == "NG":
		return Message{Kind: Refused}, nil
	}
	if len(s) >= 4 {
		var k Kind
		switch s[:4] {
		case "MOV?":
			k = MoveQuery
		case "WON:":
			k = Won
		case "LST:":
			k = Lost
		case "DRW:":
			k = Drawn
		}
		if k != 0 {
			b, err := ParseBoard(strings.TrimSpace(s[4:]))
			if err != nil {
				return Message{}, fmt.Errorf("%w: in %q: %v", ErrSyntax, s, err)
			}
			return Message{Kind: k, Board: b}, nil
		}
	}
	return Message{}, fmt.Errorf("%w server message %q: not SET?, MOV?<board>, OK, OKR, OKB, NG, WON:, LST: or DRW:", ErrSyntax, s)
}

// ParseClient reads a line a client sends. Letters and direction words are
// read case-insensitively; a direction is NORTH, EAST, SOUTH, WEST or its
// first letter.
func ParseClient(line string) (Message, error) {
	s := Clean(line)
	if len(s) > MaxLine {
		return Message{}, fmt.Errorf("%w client message: %d bytes", ErrSyntax, len(s))
	}
	u := strings.ToUpper(s)
	switch {
	case strings.HasPrefix(u, "SET:"):
		letters := u[4:]
		if len(letters) != 4 {
			return Message{}, fmt.Errorf("%w %q: SET: needs four piece letters A..H", ErrSyntax, s)
		}
		m := Message{Kind: Set}
		var seen [8]bool
		for i := 0; i < 4; i++ {
			c := letters[i]
			if c < 'A' || c > 'H' {
				return Message{}, fmt.Errorf("%w %q: %q is not a piece letter A..H", ErrSyntax, s, c)
			}
			if seen[c-'A'] {
				return Message{}, fmt.Errorf("%w %q: piece %c named twice", ErrSyntax, s, c)
			}
			seen[c-'A'] = true
		}
		n := 0
		for i, ok := range seen {
			if ok {
				m.Red[n] = i
				n++
			}
		}
		return m, nil
	case strings.HasPrefix(u, "MOV:"):
		piece, dir, ok := strings.Cut(u[4:], ",")
		if !ok || len(piece) != 1 || piece[0] < 'A' || piece[0] > 'H' {
			return Message{}, fmt.Errorf("%w %q: want MOV:<piece A..H>,<direction>", ErrSyntax, s)
		}
		d, ok := ParseDir(dir)
		if !ok {
			return Message{}, fmt.Errorf("%w %q: direction %q is not NORTH, EAST, SOUTH, WEST or N, E, S, W", ErrSyntax, s, dir)
		}
		return Message{Kind: MoveCmd, Piece: int(piece[0] - 'A'), Dir: d}, nil
	}
	return Message{}, fmt.Errorf("%w client message %q: not SET:<4 letters> or MOV:<piece>,<direction>", ErrSyntax, s)
}

// ParseDir reads a direction word or letter (upper case).
func ParseDir(s string) (geister.Dir, bool) {
	switch s {
	case "NORTH", "N":
		return geister.North, true
	case "EAST", "E":
		return geister.East, true
	case "SOUTH", "S":
		return geister.South, true
	case "WEST", "W":
		return geister.West, true
	}
	return 0, false
}

// String writes the message as its wire line, without the CRLF, byte for
// byte as the reference server (miyo/geister_server.java) sends it: a
// plain acceptance and a refusal carry a trailing space ("OK ", "NG "),
// so that every acknowledgement is three characters before the CRLF.
func (m Message) String() string {
	switch m.Kind {
	case SetQuery:
		return "SET?"
	case MoveQuery:
		return "MOV?" + m.Board.String()
	case Won, Lost, Drawn:
		return m.Kind.String() + ":" + m.Board.String()
	case Accepted:
		if m.Taken != 0 {
			return "OK" + string(m.Taken)
		}
		return "OK "
	case Refused:
		return "NG "
	case Set:
		b := []byte("SET:")
		for _, i := range m.Red {
			b = append(b, byte('A'+i))
		}
		return string(b)
	case MoveCmd:
		return "MOV:" + string(rune('A'+m.Piece)) + "," + m.Dir.Name()
	}
	return m.Kind.String()
}
