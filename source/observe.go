package source

import "context"

// A call to a source may send more than one request below it (a listing
// read from several pages, an open that needs a second try without Range).
// A counter above the transport learns of each through an observer the
// call's context carries, so it can count requests, not calls, and time
// each one.

type observerKey struct{}

// RequestObserver is told that a request starts, and returns the function
// to call once its answer has arrived.
type RequestObserver func() (done func())

// WithRequestObserver returns ctx carrying o, replacing any observer ctx
// already carries.
func WithRequestObserver(ctx context.Context, o RequestObserver) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// ObserveRequest is what a transport calls as it sends a request under ctx:
// it tells ctx's observer, and returns the function to call once the answer
// (its status and headers) is in. Without an observer both do nothing.
func ObserveRequest(ctx context.Context) (done func()) {
	if o, ok := ctx.Value(observerKey{}).(RequestObserver); ok && o != nil {
		return o()
	}
	return func() {}
}
