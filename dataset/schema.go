// Package dataset writes and re-verifies labelled position datasets: JSONL
// shards of chess positions whose labels come from the endgame tables (and
// the rules), each row carrying its provenance, sealed by a manifest that
// lists every file with its size and SHA-256. The same parameters always
// give byte-identical files, so anyone holding the same tables can
// regenerate an artifact or replay it row by row (see docs/dataset.md).
package dataset

// SchemaVersion names the row and manifest format. A change to any field's
// meaning or to the byte layout takes a new version.
const SchemaVersion = "tbfs-dataset/1"

// The label kinds. Only Exact and Rejected are produced: a row is exact when
// an arbiter settles every value in it, rejected when the position lies
// outside what the tables (and the rules) decide.
const (
	LabelExact    = "exact"
	LabelRejected = "rejected"
)

// The arbiters a row may name.
const (
	// ArbiterTable: the values were read from the endgame tables named in
	// the provenance.
	ArbiterTable = "table"
	// ArbiterRules: the board alone settles the row (checkmate, stalemate,
	// bare kings, an illegal FEN, castling rights the tables do not hold).
	ArbiterRules = "rules"
	// ArbiterProof is reserved for rows settled by a complete exhaustive
	// search; no generator of this version writes it.
	ArbiterProof = "exhaustive-proof"
)

// DTC is a depth-to-conversion value: pawn pushes still owed and signed
// plies to the next zeroing move on that line.
type DTC struct {
	Pushes int `json:"pushes"`
	Plies  int `json:"plies"`
}

// Values are the metrics the tables hold for a position, signed from the
// side to move (positive when it wins). A nil metric is one no table holds.
type Values struct {
	WDL       *int `json:"wdl"`
	DTZ       *int `json:"dtz"`
	DTM       *int `json:"dtm"`
	DTM50     *int `json:"dtm50"`
	DTC       *DTC `json:"dtc"`
	Checkmate bool `json:"checkmate"`
	Stalemate bool `json:"stalemate"`
}

// TableFile is one table file by its name relative to a table root and the
// SHA-256 of its bytes (lower-case hex).
type TableFile struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// Provenance says where a row's labels come from.
type Provenance struct {
	Arbiter string      `json:"arbiter"`
	Tables  []TableFile `json:"tables"`
	TBFS    string      `json:"tbfs"`
}

// Row is one line of a shard. Field order is the byte order of the
// encoding, so it must not change within a schema version.
type Row struct {
	// Row is the row's number in the dataset, from 0, across shards.
	Row   int    `json:"row"`
	FEN   string `json:"fen"`
	Label string `json:"label"`
	// Material is the canonical material of the table that answers the
	// position ("KQK"); "" on a rejected row whose FEN does not parse.
	Material string `json:"material"`
	// Clock is the half-move clock the labels are true at; it equals the
	// FEN's clock field.
	Clock int `json:"clock"`
	// Category is the rule-true result at Clock for the side to move:
	// win, cursed-win, draw, blessed-loss or loss. Empty when rejected.
	Category string  `json:"category,omitempty"`
	Values   *Values `json:"values,omitempty"`
	// KeepingMoves are the legal moves (UCI, sorted) that keep the best
	// result the side to move has under the 50-move rule: every move of
	// them is optimal for anyone who only cares about the result.
	KeepingMoves []string `json:"keeping_moves,omitempty"`
	// BestMoves are the moves the tables' root ranking puts first at the
	// row's clock (DTZ ranking with the 50-move rule, ties included,
	// sorted): the fastest safe way to the result.
	BestMoves []string `json:"best_moves,omitempty"`
	// Reason says why a rejected row is outside the tables' domain.
	Reason     string     `json:"reason,omitempty"`
	Provenance Provenance `json:"provenance"`
}

// FileEntry is one file of the artifact as the manifest lists it.
type FileEntry struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	Rows   int    `json:"rows"`
}

// Params are the generation parameters, recorded so a run can be repeated.
// They hold no host path: a FEN file is named by its SHA-256.
type Params struct {
	Count      int      `json:"count"`
	Seed       uint64   `json:"seed"`
	Materials  []string `json:"materials"`
	ClockMin   int      `json:"clock_min"`
	ClockMax   int      `json:"clock_max"`
	Categories []string `json:"categories"`
	FENsSHA256 string   `json:"fens_sha256,omitempty"`
	ShardRows  int      `json:"shard_rows"`
}

// Manifest is manifest.json: the seal over the artifact.
type Manifest struct {
	Schema   string      `json:"schema"`
	TBFS     string      `json:"tbfs"`
	Params   Params      `json:"params"`
	Tables   []TableFile `json:"tables"`
	Files    []FileEntry `json:"files"`
	Rows     int         `json:"rows"`
	Exact    int         `json:"exact"`
	Rejected int         `json:"rejected"`
}
