package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/plugins"
	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
)

// TestErrorRoundTrip: an error of each kind keeps its kind across the
// boundary. The arbiter is the source package's sentinel errors: what
// errors.Is says of the error before it crosses must hold after.
func TestErrorRoundTrip(t *testing.T) {
	cases := []struct {
		err  error
		kind error
		code pluginpb.ErrorCode
	}{
		{&source.Error{Op: "open", Name: "x", Err: source.ErrNotFound}, source.ErrNotFound, pluginpb.ErrorCode_NOT_FOUND},
		{source.Invalid("bad name %q", "../x"), source.ErrInvalid, pluginpb.ErrorCode_INVALID},
		{source.Transient(errors.New("reset")), source.ErrTransient, pluginpb.ErrorCode_TRANSIENT},
		{source.Permanent(errors.New("denied")), source.ErrPermanent, pluginpb.ErrorCode_PERMANENT},
		{fmt.Errorf("list: %w", source.ErrUnsupported), source.ErrUnsupported, pluginpb.ErrorCode_UNSUPPORTED},
		{fmt.Errorf("gone: %w", source.ErrClosed), source.ErrClosed, pluginpb.ErrorCode_CLOSED},
		{io.EOF, io.EOF, pluginpb.ErrorCode_END_OF_OBJECT},
		// A replaced object stays both changed and permanent.
		{source.Changed("ETag %q became %q", "a", "b"), source.ErrChanged, pluginpb.ErrorCode_CHANGED},
		{source.Changed("ETag %q became %q", "a", "b"), source.ErrPermanent, pluginpb.ErrorCode_CHANGED},
		// A plugin that cannot say its failure is retryable is not retried.
		{errors.New("unclassified"), source.ErrPermanent, pluginpb.ErrorCode_PERMANENT},
		{context.DeadlineExceeded, source.ErrTransient, pluginpb.ErrorCode_TRANSIENT},
	}
	for _, c := range cases {
		t.Run(c.err.Error(), func(t *testing.T) {
			w := plugins.ToError(c.err)
			if w.GetCode() != c.code {
				t.Errorf("code = %v, want %v", w.GetCode(), c.code)
			}
			back := plugins.FromError(w)
			if !errors.Is(back, c.kind) {
				t.Errorf("FromError(%v) = %v, does not match %v", w, back, c.kind)
			}
		})
	}
	if plugins.ToError(nil) != nil || plugins.FromError(nil) != nil {
		t.Error("nil must stay nil")
	}
	long := plugins.FromError(&pluginpb.Error{Code: pluginpb.ErrorCode_PERMANENT, Message: strings.Repeat("x", 1<<20)})
	if len(long.Error()) > 2048 {
		t.Errorf("a plugin's message of 1 MiB came through as %d bytes", len(long.Error()))
	}
}

// TestServerRefusals: the plugin side refuses requests the protocol
// forbids, without calling the source.
func TestServerRefusals(t *testing.T) {
	srv := plugins.NewServer([]string{"x"}, func(context.Context, *url.URL) (source.Source, error) {
		return nil, errors.New("must not be called")
	})
	ctx := context.Background()
	if r, _ := srv.OpenSource(ctx, &pluginpb.OpenSourceRequest{Url: "y://host/"}); r.GetError().GetCode() != pluginpb.ErrorCode_INVALID {
		t.Errorf("OpenSource of another scheme: %v, want INVALID", r.GetError())
	}
	if r, _ := srv.OpenObject(ctx, &pluginpb.OpenObjectRequest{Source: 1, Name: "../x"}); r.GetError().GetCode() != pluginpb.ErrorCode_INVALID {
		t.Errorf("OpenObject(../x): %v, want INVALID", r.GetError())
	}
	if r, _ := srv.OpenObject(ctx, &pluginpb.OpenObjectRequest{Source: 42, Name: "x"}); r.GetError().GetCode() != pluginpb.ErrorCode_CLOSED {
		t.Errorf("OpenObject on an unknown handle: %v, want CLOSED", r.GetError())
	}
	if r, _ := srv.Read(ctx, &pluginpb.ReadRequest{Object: 42}); r.GetError().GetCode() != pluginpb.ErrorCode_CLOSED {
		t.Errorf("Read on an unknown handle: %v, want CLOSED", r.GetError())
	}
	if r, _ := srv.List(ctx, &pluginpb.ListRequest{Source: 1, Prefix: "/"}); r.GetError().GetCode() != pluginpb.ErrorCode_INVALID {
		t.Errorf("List(/): %v, want INVALID", r.GetError())
	}
}
