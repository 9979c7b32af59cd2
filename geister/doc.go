// Package geister holds the rules of Geister, a two-player game on a 6x6
// board where each side has four blue ("good") and four red ("bad") pieces
// and sees its opponent's colours only as they are captured: the board
// (Square, Position, and Observation, what a player sees), the moves
// (Moves, Play, Unmoves, CapturesLastBlue), the end of the game (Terminal),
// and the two board notations, the readable six-row diagram and the GAT
// protocol's 48-character board. It does no I/O: format/geister reads the
// tables of these positions, retro/geister builds them, and geister/gat
// plays over the GAT protocol.
//
// Positions are always seen from the side to move, whose exits are A1 and
// F1; a move turns the board by 180 degrees and swaps the roles, so there
// is no side-to-move bit. Squares are bit indexes in the reference's 8x8
// embedding (FORMAT.md §1 in ../shared/geister), so bitboards compare with
// the reference's hexadecimal dumps.
package geister
