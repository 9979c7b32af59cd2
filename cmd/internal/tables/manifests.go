package tables

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

// ManifestDir is the --manifests flag, one definition for tbprobe and
// tbfs, chess and Geister: a local directory holding the tables' integrity
// manifests (written by tbprobe verify or tbprobe geister verify with
// --manifest-dir), for tables in a location that has none beside them,
// such as a read-only bucket.
type ManifestDir struct {
	Dir string // "" for beside the tables
}

// Register adds the flag to fs.
func (m *ManifestDir) Register(fs *pflag.FlagSet) {
	fs.StringVar(&m.Dir, "manifests", "", "`DIR` of integrity manifests (written by tbprobe verify --manifest, or tbprobe geister verify --manifest for Geister tables); default: beside the tables")
}

// Open opens the directory the flag names; nil, nil when it names none.
func (m *ManifestDir) Open() (source.Source, error) {
	if m.Dir == "" {
		return nil, nil
	}
	src, err := mmap.New(m.Dir)
	if err != nil {
		return nil, fmt.Errorf("--manifests %s: %w", m.Dir, err)
	}
	return src, nil
}
