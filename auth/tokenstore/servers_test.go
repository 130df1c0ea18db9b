package tokenstore

import "testing"

// serverStores are the stores backed by servers; none yet.
func serverStores(t *testing.T) map[string]Store { return nil }
