package fssource_test

import (
	"os"
	"testing"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/fssource"
	"github.com/tbfs/tbfs/source/sourcetest"
)

// TestConformance runs the transport suite over os.DirFS; the arbiter is the
// bytes the suite wrote into dir.
func TestConformance(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, dir string) source.Source {
		return fssource.New(os.DirFS(dir), dir)
	})
}
