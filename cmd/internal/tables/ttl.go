package tables

import (
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/source/listcache"
)

// AskEveryTime is the TTL that --metadata-ttl 0 becomes. The options below
// the front ends (source/stack, chesstb and Syzygy MissingTTL) read a zero
// TTL as their default, so "trust nothing" is the shortest positive TTL:
// whatever it covers has expired by the next lookup.
const AskEveryTime = time.Nanosecond

// MetadataTTL is the value of --metadata-ttl, one flag type for tbprobe
// and tbfs: how long what a location said about a table (a listing, its
// size and version, its absence) is trusted without asking again. 0 asks
// every time; a negative duration is refused when the flag is parsed.
type MetadataTTL time.Duration

// Register adds the flag to fs with usage (which says what the front end
// trusts for that long) and listcache.DefaultTTL, the layers' own default,
// as its default.
func (m *MetadataTTL) Register(fs *pflag.FlagSet, usage string) {
	*m = MetadataTTL(listcache.DefaultTTL)
	fs.Var(m, "metadata-ttl", usage+" (0: ask every time)")
}

// Set parses a duration such as "5m" or "0".
func (m *MetadataTTL) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return errors.New("must not be negative (0 asks every time)")
	}
	*m = MetadataTTL(d)
	return nil
}

// String is the duration as the flag shows its default.
func (m MetadataTTL) String() string { return time.Duration(m).String() }

// Type names the value in usage lines.
func (m MetadataTTL) Type() string { return "duration" }

// TTL is the TTL the options take: the flag's own duration, or
// AskEveryTime for 0.
func (m MetadataTTL) TTL() time.Duration {
	if m <= 0 {
		return AskEveryTime
	}
	return time.Duration(m)
}
