package auth

import (
	"context"
	"errors"
)

// appStoreAsk answers the application's store (auth.token_store {"type":
// "app"}: store_load / store_save) through the Manager's bound Host.
func (m *Manager) appStoreAsk(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	h := m.hostOrNil()
	if h == nil {
		return nil, errNoStoreHost
	}
	return h.AskStore(ctx, kind, payload)
}

var errNoStoreHost = errors.New(`auth.token_store {"type": "app"} needs a host that answers store_load / store_save`)
