package tokenstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store/storetest"
)

// stores are the grants of every store backend, sealed and not.
func stores(t *testing.T) map[string]Grants {
	t.Helper()
	out := map[string]Grants{}
	for name, s := range storetest.All(t) {
		out[name] = Grants{Store: s}
	}
	return out
}

func uniqueKey(t *testing.T) string {
	return fmt.Sprintf("test|%s|%d|%d", t.Name(), os.Getpid(), time.Now().UnixNano())
}

func TestContract(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key := uniqueKey(t)
			rec, ver, err := s.Load(ctx, key)
			require.NoError(t, err)
			require.Nil(t, rec)
			require.Equal(t, Version(0), ver)

			first := &Record{RefreshToken: "rt-1", Generation: 1, State: StateOK, Lease: &Lease{Owner: "a", Until: 42},
				DPoPJKT: "jkt", DPoPKey: testKeyPEM, Issuer: "https://as"}
			v1, won, err := s.CompareAndSave(ctx, key, 0, first)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v1, Version(0))

			// A second writer that also read "nothing" loses and learns
			// the winner.
			v, won, err := s.CompareAndSave(ctx, key, 0, &Record{RefreshToken: "rt-other"})
			require.NoError(t, err)
			require.Equal(t, v1, v)
			require.Equal(t, first, won)

			rec, ver, err = s.Load(ctx, key)
			require.NoError(t, err)
			require.Equal(t, v1, ver)
			require.Equal(t, first, rec)

			second := &Record{AccessToken: "at-2", RefreshToken: "rt-2", Generation: 2, State: StateOK, ExpiresAt: 99}
			v2, won, err := s.CompareAndSave(ctx, key, v1, second)
			require.NoError(t, err)
			require.Nil(t, won)
			require.Greater(t, v2, v1)

			// A stale version loses even though it once was right.
			v, won, err = s.CompareAndSave(ctx, key, v1, first)
			require.NoError(t, err)
			require.Equal(t, v2, v)
			require.Equal(t, second, won)

			// Keys are independent.
			rec, ver, err = s.Load(ctx, key+"-other")
			require.NoError(t, err)
			require.Nil(t, rec)
			require.Equal(t, Version(0), ver)
		})
	}
}

// testKeyPEM is a P-256 private key in PKCS#8 PEM, as a DPoP-bound
// record carries it (generated for these tests only).
const testKeyPEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgR8zmf3Ef46liknUN
zZ8UXuIvC1BHxQ59iFWyOgowWgmhRANCAATkofR+7e/gKjZ/Hemir3HB6UqAZrql
a9b83azvDE56zFxecai+X9EBJcCElNmvxQ+jV/sNO9paup4WVjGKplsn
-----END PRIVATE KEY-----
`

// TestRecordPrintsNoSecret: a record printed by mistake (%v, %+v, %#v,
// %s) shows what it is, never its tokens, key or client secret.
func TestRecordPrintsNoSecret(t *testing.T) {
	rec := &Record{AccessToken: "at-secret", RefreshToken: "rt-secret", DPoPJKT: "jkt-1", DPoPKey: testKeyPEM,
		ClientSecret: "cs-secret", Generation: 3, Lease: &Lease{Owner: "o", Until: 9}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, rec)
		for _, secret := range []string{"at-secret", "rt-secret", "cs-secret", "PRIVATE KEY", "MIGHAgEAMBMG"} {
			require.NotContains(t, out, secret, verb)
		}
		require.Contains(t, out, "generation 3", verb)
		require.Contains(t, out, "jkt-1", verb)
	}
}
