// Package geister reads the perfect-information distance-to-win tables of
// Geister (the game's rules, positions and notations are package
// github.com/tbfs/tbfs/geister).
//
// The package has what the tables add to the rules: Backup, the rule that
// ties a stored value to its children, and the 210-ply Horizon (FORMAT.md
// §2 in the shared reference folder), the material numbering and file
// names (Material, MaterialOf), and the obsblk index that puts every
// colouring of one observed board in one contiguous run of bytes (Rank,
// Unrank, Canonical, Colourings).
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
