package geister

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/tbfs/tbfs/source"
)

// TableCheck is what Verify found of one material's table.
type TableCheck struct {
	// Name is the file that serves the material, in source Source (an
	// index into Open's sources).
	Name   string
	Source int
	// Legacy marks a file in the legacy layout: checked as any other,
	// but frame manifests cover obsblk tables only, so it gets none.
	Legacy bool
	// Listed reports that the source's sums (SHA256SUMS or the builder's
	// sidecar) list the file or its raw form, and that it matched them.
	// When false the table was read whole, with only the format's own
	// checks: nothing says its bytes are the right ones.
	Listed bool
	// Manifest is the table's frame manifest, for storing beside it as
	// its raw name plus ManifestSuffix; set for a listed obsblk table.
	Manifest []byte
}

// Verify reads material m's table whole, decoded (through its frame
// manifest, when one is beside it), and checks it against its source's
// sums: the decoded bytes against the raw file's sum, else a compressed
// file's own bytes against its own. A mismatch is ErrCorrupt naming the
// file, as is any damage found on the way. progress, when not nil, is
// told the entries read so far out of the table's.
func (tb *Tablebase) Verify(ctx context.Context, m Material, progress func(done, total int64)) (TableCheck, error) {
	if !m.Valid() {
		return TableCheck{}, fmt.Errorf("%w: %v", ErrNoMaterial, m)
	}
	st, err := tb.table(ctx, m)
	if err != nil {
		return TableCheck{}, err
	}
	c := TableCheck{Name: st.name, Source: st.source, Legacy: st.legacy}
	entries := m.Entries()
	var mf *frameManifest
	if st.legacy {
		entries = m.LegacyEntries()
	} else {
		mf = newFrameManifest(m)
	}
	h := sha256.New()
	buf := make([]byte, manifestChunk)
	for lo := uint64(0); lo < entries; lo += manifestChunk {
		p := buf[:min(manifestChunk, entries-lo)]
		if err := st.read(ctx, p, lo); err != nil {
			return c, err
		}
		if mf != nil {
			mf.add(h, p)
		} else {
			h.Write(p)
		}
		if progress != nil {
			progress(int64(lo)+int64(len(p)), int64(entries))
		}
	}
	decoded := sum(h)
	sums, err := tb.sumsFor(ctx, st.source, m)
	if err != nil {
		return c, err
	}
	raw := strings.TrimSuffix(strings.TrimSuffix(st.name, ".zst"), ".zstd")
	if want, ok := sums[raw]; ok {
		if want != decoded {
			if raw == st.name {
				return c, fmt.Errorf("%w: %s: sha256 differs from its sums (%s or %s)", ErrCorrupt, st.name, SumsFile, sidecarName(m))
			}
			return c, fmt.Errorf("%w: %s decodes to bytes whose sha256 is not the one its sums give %s", ErrCorrupt, st.name, raw)
		}
		c.Listed = true
	} else if want, ok := sums[st.name]; ok {
		// Only a compressed file's own sum: its bytes as stored, hashed
		// on open unless a frame manifest stood in for that.
		if !st.verified {
			got, err := hashObject(ctx, objectOf(st.r), st.name)
			if err != nil {
				return c, err
			}
			if got != want {
				return c, fmt.Errorf("%w: %s: sha256 differs from its sums (%s or %s)", ErrCorrupt, st.name, SumsFile, sidecarName(m))
			}
		}
		c.Listed = true
	}
	if c.Listed && mf != nil {
		mf.rawSum = decoded
		c.Manifest = mf.encode()
	}
	return c, nil
}

// objectOf returns the file a table reader reads.
func objectOf(r tableReader) source.Object {
	switch t := r.(type) {
	case *rawTable:
		return t.obj
	case *zstdTable:
		return t.obj
	}
	return nil
}
