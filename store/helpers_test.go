package store

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// testRec is a grant's shape, enough for the file store's lease tests.
type testRec struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	Generation   int    `json:"generation"`
}

// gen is the document of generation g, with lease.
func gen(g int, lease *Lease) *Document {
	body, _ := json.Marshal(testRec{AccessToken: fmt.Sprintf("at-%d", g), RefreshToken: fmt.Sprintf("rt-%d", g), Generation: g})
	return &Document{Body: body, Lease: lease}
}

func genOf(t *testing.T, d *Document) int {
	t.Helper()
	require.NotNil(t, d)
	var r testRec
	require.NoError(t, json.Unmarshal(d.Body, &r))
	return r.Generation
}
