package auth

import (
	"context"
	"errors"
)

// flight is one grant in progress; everyone who needs a new token while it
// runs waits for it instead of starting another (N parallel 401s cause one
// refresh or authorization).
type flight struct {
	done chan struct{}
	err  error
}

// obtain makes sure a token newer than generation sentGen exists. A
// request that was sent with an older token than the current one just
// retries; otherwise it joins the flight in progress or starts one.
func (m *Manager) obtain(ctx context.Context, sentGen uint64, g grantReq) error {
	for {
		m.mu.Lock()
		if m.gen != sentGen {
			m.mu.Unlock()
			return nil
		}
		if f := m.flight; f != nil {
			m.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if f.err != nil && isCtxErr(f.err) && ctx.Err() == nil && m.closeCtx.Err() == nil {
				continue // the request that ran it gave up; this one has not
			}
			m.mu.Lock()
			changed := m.gen != sentGen
			m.mu.Unlock()
			if changed {
				return nil
			}
			return f.err
		}
		f := &flight{done: make(chan struct{})}
		m.flight = f
		m.mu.Unlock()

		gctx, stop := m.grantContext(ctx)
		err := m.runGrant(gctx, g)
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		} else if err != nil && m.closeCtx.Err() != nil {
			err = &Error{Message: "authorization required: the client was closed during authorization", Metadata: map[string]any{"resource": m.canonical}}
		}
		stop()
		m.mu.Lock()
		m.flight = nil
		f.err = err
		m.mu.Unlock()
		close(f.done)
		return err
	}
}

// grantContext is ctx that also ends with Close.
func (m *Manager) grantContext(ctx context.Context) (context.Context, func()) {
	gctx, cancel := context.WithCancel(ctx)
	stopAfter := context.AfterFunc(m.closeCtx, cancel)
	return gctx, func() { stopAfter(); cancel() }
}

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
