package fusefs

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// recentLimit bounds how many refused paths .stats remembers.
const recentLimit = 32

// stats are the tree's own counters; the transport and cache counters come
// from Config.Counters.
type stats struct {
	lookups     atomic.Int64 // position files looked up
	probes      atomic.Int64 // positions answered (children included)
	badPaths    atomic.Int64 // refused: not a position
	missing     atomic.Int64 // refused: no table answers that metric
	probeErrors atomic.Int64 // probes that failed (EIO)
	tableOpens  atomic.Int64 // tables/ objects opened (once per table per mount)
	tableReads  atomic.Int64 // tables/ read requests served
	tableBytes  atomic.Int64 // bytes served from tables/
	tableErrors atomic.Int64 // tables/ operations that failed (EIO)
	interrupted atomic.Int64 // requests the reader interrupted (EINTR)

	mu     sync.Mutex
	recent []Refusal // newest last, at most recentLimit
}

// Refusal is one path the tree refused, as .stats lists it.
type Refusal struct {
	Time  time.Time `json:"time"`
	Path  string    `json:"path"`
	Errno string    `json:"errno"`
	Why   string    `json:"why"`
}

func (s *stats) remember(r Refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) == recentLimit {
		copy(s.recent, s.recent[1:])
		s.recent = s.recent[:recentLimit-1]
	}
	s.recent = append(s.recent, r)
}

// Snapshot is the JSON object .stats shows.
type Snapshot struct {
	Lookups     int64          `json:"lookups"`
	Probes      int64          `json:"probes"`
	BadPaths    int64          `json:"bad_paths"`
	Missing     int64          `json:"missing_metric"`
	ProbeErrors int64          `json:"probe_errors"`
	TableOpens  int64          `json:"table_opens"`
	TableReads  int64          `json:"table_reads"`
	TableBytes  int64          `json:"table_bytes"`
	TableErrors int64          `json:"table_errors"`
	Interrupted int64          `json:"interrupted"`
	Counters    map[string]any `json:"counters,omitempty"`
	Recent      []Refusal      `json:"recent_refusals"`
}

// Stats returns the current counters, the same values .stats shows.
func (f *FS) Stats() Snapshot {
	s := &f.stats
	snap := Snapshot{
		Lookups:     s.lookups.Load(),
		Probes:      s.probes.Load(),
		BadPaths:    s.badPaths.Load(),
		Missing:     s.missing.Load(),
		ProbeErrors: s.probeErrors.Load(),
		TableOpens:  s.tableOpens.Load(),
		TableReads:  s.tableReads.Load(),
		TableBytes:  s.tableBytes.Load(),
		TableErrors: s.tableErrors.Load(),
		Interrupted: s.interrupted.Load(),
	}
	if len(f.cfg.Counters) > 0 {
		snap.Counters = make(map[string]any, len(f.cfg.Counters))
		for name, fn := range f.cfg.Counters {
			snap.Counters[name] = fn()
		}
	}
	s.mu.Lock()
	snap.Recent = append([]Refusal{}, s.recent...)
	s.mu.Unlock()
	return snap
}

func (f *FS) statsJSON() []byte {
	b, err := json.MarshalIndent(f.Stats(), "", "  ")
	if err != nil {
		// A counter function returned something JSON cannot hold; say so
		// in the file rather than failing the read.
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return append(b, '\n')
}
