// Command faulty is a test plugin (binary tbfs-source-faulty) that serves
// local directories for the "faulty" scheme, faulty:///abs/dir, through the
// mmap transport, with one planted fault: a read of an object under "hang/"
// logs "read blocked" and then blocks until the host gives up on it. The
// host's fault tests use it to have a read in flight at a known moment.
package main

import (
	"context"
	"net/url"

	"github.com/tbfs/tbfs/plugins/sdk"
	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/mmap"
)

func main() {
	sdk.Serve([]string{"faulty"}, func(ctx context.Context, u *url.URL) (source.Source, error) {
		src, err := mmap.New(u.Path)
		if err != nil {
			return nil, err
		}
		return &faulty{Source: src}, nil
	})
}

type faulty struct{ *mmap.Source }

func (f *faulty) Open(ctx context.Context, name string) (source.Object, error) {
	obj, err := f.Source.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(name) > 5 && name[:5] == "hang/" {
		return &hanging{Object: obj}, nil
	}
	return obj, nil
}

type hanging struct{ source.Object }

func (h *hanging) ReadAt(ctx context.Context, p []byte, off int64, hint source.Hint) (int, error) {
	sdk.Logger().Info("read blocked", "offset", off)
	<-ctx.Done()
	return 0, source.Transient(ctx.Err())
}
