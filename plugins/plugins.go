// Package plugins carries the source seam across a process boundary with
// hashicorp/go-plugin and gRPC, so a transport can live in its own binary.
//
// This package holds what both sides share: the handshake, the go-plugin
// Plugin value and the plugin-side gRPC server that serves any
// source.Opener. The host side (discovery, process life cycle, the Source
// the host sees) is in plugins/host; plugin authors call plugins/sdk.
package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	pluginpb "github.com/tbfs/tbfs/plugins/proto"
	"github.com/tbfs/tbfs/source"
)

// ProtocolVersion is the version of the plugin protocol in plugins/proto. It
// changes whenever a host and a plugin built against different versions
// could misread each other.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake both sides must agree on. The magic
// cookie never changes: it only tells a plugin binary that it was started by
// a tbfs host and not by a person at a shell.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TBFS_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7d1c0b9e3f0a4f6e9a3c5b2d8e1f4a60-tbfs-source",
}

// PluginName is the name under which a plugin binary serves its source
// service in the go-plugin plugin map.
const PluginName = "source"

// BinaryPrefix starts the file name of every plugin binary:
// tbfs-source-<name>.
const BinaryPrefix = "tbfs-source-"

// MaxRangeLength bounds one range of a batched read. The host never asks for
// more; a plugin refuses larger requests rather than allocating them.
const MaxRangeLength = 16 << 20

// MaxBatchBytes bounds the sum of the range lengths of one Read call, which
// keeps every answer below the host's gRPC message size limit.
const MaxBatchBytes = 32 << 20

// MaxMessageSize is the gRPC message size limit the host sets for answers;
// it leaves room for the framing of a MaxBatchBytes answer.
const MaxMessageSize = MaxBatchBytes + 1<<20

// Plugin is the go-plugin Plugin for the source service. A plugin binary
// sets Impl; the host leaves it nil and only dispenses clients.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl serves the plugin's sources (plugin side only).
	Impl *Server
}

// Client is what the host gets when it dispenses the source plugin: the
// generated gRPC client and a health client on the same connection, used
// to tell a slow plugin from a hung one.
type Client struct {
	pluginpb.SourceClient
	Health grpc_health_v1.HealthClient
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)

// GRPCServer registers the source service for the plugin's opener.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("plugins: Plugin.Impl is nil on the plugin side")
	}
	pluginpb.RegisterSourceServer(s, p.Impl)
	return nil
}

// GRPCClient returns a *Client on the plugin's connection.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Client{SourceClient: pluginpb.NewSourceClient(c), Health: grpc_health_v1.NewHealthClient(c)}, nil
}

// maxMessageLen bounds error messages carried across the boundary, so a
// plugin cannot flood the host's logs through them.
const maxMessageLen = 1024

// ToError turns a source error into its wire form; nil stays nil.
func ToError(err error) *pluginpb.Error {
	if err == nil {
		return nil
	}
	return &pluginpb.Error{Code: Code(err), Message: truncate(err.Error())}
}

// Code classifies err by the source package's sentinel errors. Errors that
// match none are permanent: a plugin that cannot say a failure is
// retryable does not get retried.
func Code(err error) pluginpb.ErrorCode {
	switch {
	case err == nil:
		return pluginpb.ErrorCode_OK
	case errors.Is(err, io.EOF):
		return pluginpb.ErrorCode_END_OF_OBJECT
	case errors.Is(err, source.ErrChanged):
		return pluginpb.ErrorCode_CHANGED
	case errors.Is(err, source.ErrNotFound):
		return pluginpb.ErrorCode_NOT_FOUND
	case errors.Is(err, source.ErrInvalid):
		return pluginpb.ErrorCode_INVALID
	case errors.Is(err, source.ErrTransient),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return pluginpb.ErrorCode_TRANSIENT
	case errors.Is(err, source.ErrUnsupported):
		return pluginpb.ErrorCode_UNSUPPORTED
	case errors.Is(err, source.ErrClosed):
		return pluginpb.ErrorCode_CLOSED
	}
	return pluginpb.ErrorCode_PERMANENT
}

// FromError turns a wire error back into an error that matches the
// sentinel of its code (io.EOF for END_OF_OBJECT); nil and OK give nil. The
// plugin's message is kept, truncated, as the cause text.
func FromError(e *pluginpb.Error) error {
	if e == nil || e.Code == pluginpb.ErrorCode_OK {
		return nil
	}
	msg := truncate(e.Message)
	var kind error
	switch e.Code {
	case pluginpb.ErrorCode_END_OF_OBJECT:
		return io.EOF
	case pluginpb.ErrorCode_NOT_FOUND:
		kind = source.ErrNotFound
	case pluginpb.ErrorCode_INVALID:
		kind = source.ErrInvalid
	case pluginpb.ErrorCode_TRANSIENT:
		kind = source.ErrTransient
	case pluginpb.ErrorCode_PERMANENT:
		kind = source.ErrPermanent
	case pluginpb.ErrorCode_UNSUPPORTED:
		kind = source.ErrUnsupported
	case pluginpb.ErrorCode_CLOSED:
		kind = source.ErrClosed
	case pluginpb.ErrorCode_CHANGED:
		// Changed is permanent as well, as source.Changed makes it.
		kind = source.Permanent(source.ErrChanged)
	default:
		return source.Permanent(fmt.Errorf("plugin sent unknown error code %d: %s", e.Code, msg))
	}
	return &remoteError{kind: kind, msg: msg}
}

// remoteError is a failure reported by a plugin: the plugin's own text,
// matching the sentinel of its code.
type remoteError struct {
	kind error
	msg  string
}

func (e *remoteError) Error() string { return "plugin: " + e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

func truncate(s string) string {
	if len(s) > maxMessageLen {
		return s[:maxMessageLen] + "…"
	}
	return s
}

// HintToWire and HintFromWire convert read hints; unknown hints become data
// reads, since a hint never changes what a read returns.
func HintToWire(h source.Hint) pluginpb.Hint {
	switch h {
	case source.HintHeader:
		return pluginpb.Hint_HEADER
	case source.HintIndex:
		return pluginpb.Hint_INDEX
	}
	return pluginpb.Hint_DATA
}

// HintFromWire is the inverse of HintToWire.
func HintFromWire(h pluginpb.Hint) source.Hint {
	switch h {
	case pluginpb.Hint_HEADER:
		return source.HintHeader
	case pluginpb.Hint_INDEX:
		return source.HintIndex
	}
	return source.HintData
}

// parseURL checks that a URL the host sent parses and is of one of the
// plugin's schemes.
func parseURL(raw string, schemes []string) (*url.URL, error) {
	u, err := source.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return u, nil
		}
	}
	return nil, source.Invalid("plugin does not serve scheme %q", u.Scheme)
}
