// Package geister reads the perfect-information distance-to-win tables of
// Geister, a two-player game on a 6x6 board where each side has four blue
// ("good") and four red ("bad") pieces and sees its opponent's colours only
// as they are captured.
//
// The package has the game model the tables use (Position, Moves, Play,
// Unmoves, Terminal, and Backup, the rule that ties a value to its
// children; FORMAT.md §1-2 in the shared reference folder), the material
// numbering and file names (Material), the obsblk index that puts every
// colouring of one observed board in one contiguous run of bytes (Rank,
// Unrank, Canonical, Colourings), and the two board notations (the readable
// six-row diagram and the GAT protocol's 48-character string).
//
// Tablebase reads the tables through the source seam: raw ".bin" files one
// byte per probe, seekable-zstd ".bin.zst" files one frame per cache miss,
// with decoded frames in a FrameCache that may be shared. DTW and Probe
// answer one position, Moves every move of it, and ObservationValues every
// colouring of a board whose opponent colours are unknown, with the moves
// that are best in all of them.
//
// Positions are always seen from the side to move, whose exits are A1 and
// F1; a move turns the board by 180 degrees and swaps the roles, so there
// is no side-to-move bit. Values are the stored bytes: 0 no result within
// the 210-ply horizon, odd v the side to move wins in v plies, even v it
// loses in v plies.
package geister
