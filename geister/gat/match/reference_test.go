package match_test

import (
	"testing"
)

// The reference server's wire format, row by row. Each row's expected
// bytes were read off the reference's source, miyo/geister_server.java at
// 8ed0409 (src/main/java/net/wasamon/geister/...; the jar's main class is
// server/TCPServerWithBlock, build.gradle:20), not from our server; the
// comment names the lines. Every server line ends with CRLF (checked by
// expect; TCPServerWithBlock.java:86, 220, 226, 237, 258-267).
func TestReferenceWire(t *testing.T) {
	const (
		// The standard start (utils/Player.java:20-25), player 1 with
		// A..D red and player 2 with E..H red, as player 1 sees it
		// before its first move (utils/Board.java:49-72: own colours
		// upper case, the opponent's "u", its squares turned).
		p1Start = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"
		// End-of-game boards use the global view (TCPServerWithBlock.java:
		// 258-267, getEncodedBoard(_, true)): own pieces on the board keep
		// upper case (Board.java:54-59 ignores globalView for own
		// pieces), every opponent piece is lower case (Board.java:61-62).
		p1Final = "14R24R34R44R15B25B35B45B41b31b21b11b40r30r20r10r"
		p2Final = "14B24B34B44B15R25R35R45R41r31r21r11r40b30b20b10b"
	)
	for _, tc := range []struct {
		name  string
		setup string
		steps []string
	}{
		{
			// GameServer.java:123-136: a SET that does not match (here
			// three letters) is refused and the state stays
			// WAIT_FOR_INITIALIZATION, so the next SET is taken;
			// NG_TERMINATE applies only to moves. The refusal is
			// "NG \r\n" (TCPServerWithBlock.java:226); the acceptance
			// "OK%s\r\n" with getLastTakenItemColor(), which is " "
			// when nothing was taken (GameServer.java:102-105; parse
			// clears it first, GameServer.java:122), so "OK \r\n".
			// The malformed move (an unknown direction, Direction.java:
			// 10-21 gives null) is refused and, NG_TERMINATE being on
			// by default (TCPServerWithBlock.java:356), ends the game
			// (GameServer.java:162-169): NG to the mover, then WON to
			// the winner and LST to the loser (TCPServerWithBlock.java:
			// 226, 253-268).
			name: "refused setup retried, refused move loses",
			steps: []string{
				"1< SET?", "1> SET:ABC", "1< NG ", "1> SET:ABCD", "1< OK ",
				"2< SET?", "2> SET:EFGH", "2< OK ",
				"1< MOV?" + p1Start, "1> MOV:A,UP", "1< NG ",
				"2< WON:" + p2Final, "1< LST:" + p1Final,
			},
		},
		{
			// An illegal move (onto an own piece, Item.java:111-114)
			// is refused and ends the game the same way
			// (GameServer.java:143-160). A plain move is acknowledged
			// "OK \r\n" (as above); the next player's MOV? follows
			// (TCPServerWithBlock.java:244-246), showing player 1's A
			// moved to (1,3) turned to (4,2).
			name: "plain move then illegal move",
			steps: []string{
				"1< SET?", "1> SET:ABCD", "1< OK ",
				"2< SET?", "2> SET:EFGH", "2< OK ",
				"1< MOV?" + p1Start, "1> MOV:A,NORTH", "1< OK ",
				"2< MOV?14B24B34B44B15R25R35R45R42u31u21u11u40u30u20u10u", "2> MOV:E,NORTH", "2< NG ",
				"1< WON:13R24R34R44R15B25B35B45B41b31b21b11b40r30r20r10r",
				"2< LST:14B24B34B44B15R25R35R45R42r31r21r11r40b30b20b10b",
			},
		},
		{
			// A capture is acknowledged with the colour taken,
			// "OKB\r\n" (GameServer.java:104, Item.java:115-117).
			// The captured piece shows as 99 with its colour in lower
			// case to both sides, unturned (Board.java:55-56, 61-69).
			// Capturing the last blue wins (GameServer.java:202-204):
			// OK to the mover, then WON and LST.
			name:  "capture of the last blue",
			setup: "22B99b99b99b55R99r99r99r" + "32b99b99b99b40r99r99r99r",
			steps: []string{
				"1< SET?", "1> SET:ABCD", "1< OK ",
				"2< SET?", "2> SET:ABCD", "2< OK ",
				"1< MOV?22B99b99b99b55R99r99r99r32u99b99b99b40u99r99r99r", "1> MOV:A,E", "1< OKB",
				"1< WON:32B99b99b99b55R99r99r99r99b99b99b99b40r99r99r99r",
				"2< LST:99b99b99b99b15R99r99r99r23b99b99b99b00r99r99r99r",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { replay(t, tc.setup, tc.steps) })
	}
}
