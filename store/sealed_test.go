package store_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

const secretToken = "rt-SECRET-never-in-the-store"

// rawOf is what the backend itself holds for a document: the body as the
// file, the row, the hash or the application keeps it.
func rawOf(t *testing.T, inner store.Store, collection, key string) string {
	t.Helper()
	d, _, err := inner.Load(context.Background(), collection, key)
	require.NoError(t, err)
	require.NotNil(t, d)
	return string(d.Body)
}

// storedBytes is what a reader of the backend itself finds, around the
// store: the file and its lock file, the PostgreSQL row (every column), the
// Redis hash (every field); for the application's and the memory store,
// what they were given.
func storedBytes(t *testing.T, name, file, collection, key string) string {
	t.Helper()
	ctx := context.Background()
	switch name {
	case "file":
		var all []byte
		for _, p := range []string{file, file + ".lock"} {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			all = append(all, data...)
		}
		require.Contains(t, string(all), key, "the file holds the document")
		return string(all)
	case "postgres":
		conn, err := pgx.Connect(ctx, os.Getenv("LEMONMCP_TEST_POSTGRES_URL"))
		require.NoError(t, err)
		defer conn.Close(ctx)
		var row string
		require.NoError(t, conn.QueryRow(ctx, `SELECT row_to_json(t)::text FROM `+store.PostgresTable+` t WHERE collection = $1 AND key = $2`, collection, key).Scan(&row))
		return row
	case "redis":
		opts, err := redis.ParseURL(os.Getenv("LEMONMCP_TEST_REDIS_URL"))
		require.NoError(t, err)
		c := redis.NewClient(opts)
		defer c.Close()
		fields, err := c.HGetAll(ctx, store.RedisKeyPrefix+collection+":"+key).Result()
		require.NoError(t, err)
		require.NotEmpty(t, fields, "the hash holds the document")
		return fmt.Sprint(fields)
	}
	return ""
}

func sealedOver(t *testing.T, inner store.Store, env string, previous ...string) *store.Sealed {
	t.Helper()
	s, err := store.NewSealed(inner, store.Encryption{KeyEnv: env, PreviousKeyEnvs: previous})
	require.NoError(t, err)
	return s
}

// TestSealedRawBytesHoldNoToken: on every backend, what the backend holds
// of a sealed document (the bytes on disk, the row, the hash, as one who
// reads them around the store finds them) has no token, and opens back to
// the document.
func TestSealedRawBytesHoldNoToken(t *testing.T) {
	ctx := context.Background()
	env := storetest.SetKey(t, "LEMONMCP_TEST_RAW_KEY")
	dir := t.TempDir()
	backends := storetest.Backends(t)
	f, err := store.OpenFile(filepath.Join(dir, "sealed.json"))
	require.NoError(t, err)
	backends["file"] = f
	for name, inner := range backends {
		t.Run(name, func(t *testing.T) {
			s := sealedOver(t, inner, env)
			key := uniqueKey(t)
			doc := `{"refresh_token":"` + secretToken + `","access_token":"at-` + secretToken + `"}`
			_, _, err := s.CompareAndSave(ctx, "grants", key, 0, &store.Document{Body: []byte(doc), Lease: &store.Lease{Owner: "o", Until: 5}})
			require.NoError(t, err)
			raw := rawOf(t, inner, "grants", key)
			require.NotContains(t, raw, secretToken)
			require.Contains(t, raw, `"sealed"`)
			stored := storedBytes(t, name, filepath.Join(dir, "sealed.json"), "grants", key)
			require.NotContains(t, stored, secretToken)
			require.NotContains(t, stored, base64.StdEncoding.EncodeToString([]byte(secretToken)))
			got, _, err := s.Load(ctx, "grants", key)
			require.NoError(t, err)
			require.JSONEq(t, doc, string(got.Body))
			require.Equal(t, &store.Lease{Owner: "o", Until: 5}, got.Lease)
		})
	}
}

// TestSealedWrongKeyNamedLosesNothing: a store opened with another key,
// or without its variable, is an error that names the variable (never the
// key), and nothing it tries writes over the document.
func TestSealedWrongKeyNamedLosesNothing(t *testing.T) {
	ctx := context.Background()
	right := storetest.SetKey(t, "LEMONMCP_TEST_RIGHT_KEY")
	wrong := storetest.SetKey(t, "LEMONMCP_TEST_WRONG_KEY")
	for name, inner := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			key := uniqueKey(t)
			_, _, err := sealedOver(t, inner, right).CompareAndSave(ctx, "grants", key, 0, body(`{"refresh_token":"`+secretToken+`"}`))
			require.NoError(t, err)
			before := rawOf(t, inner, "grants", key)

			w := sealedOver(t, inner, wrong)
			_, _, err = w.Load(ctx, "grants", key)
			require.ErrorContains(t, err, "LEMONMCP_TEST_WRONG_KEY")
			require.ErrorContains(t, err, "nothing was changed")
			_, _, err = store.Update(ctx, w, "grants", key, func(*store.Document) (*store.Document, error) {
				return body(`{"refresh_token":"overwritten"}`), nil
			})
			require.Error(t, err)
			// A writer that believes nothing is stored loses and cannot
			// open the winner either.
			_, _, err = w.CompareAndSave(ctx, "grants", key, 0, body(`{"refresh_token":"overwritten"}`))
			require.ErrorContains(t, err, "LEMONMCP_TEST_WRONG_KEY")
			require.Equal(t, before, rawOf(t, inner, "grants", key), "a wrong key changed the store")
			for _, k := range []string{os.Getenv(right), os.Getenv(wrong)} {
				require.NotContains(t, err.Error(), k)
			}
		})
	}
	_, err := store.NewSealed(store.NewMemory(), store.Encryption{KeyEnv: "LEMONMCP_TEST_NO_SUCH_KEY"})
	require.ErrorContains(t, err, "LEMONMCP_TEST_NO_SUCH_KEY is not set")
	t.Setenv("LEMONMCP_TEST_SHORT_KEY", base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!")))
	_, err = store.NewSealed(store.NewMemory(), store.Encryption{KeyEnv: "LEMONMCP_TEST_SHORT_KEY"})
	require.ErrorContains(t, err, "LEMONMCP_TEST_SHORT_KEY does not hold a key of 32 bytes")
	require.NotContains(t, err.Error(), base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!")))
}

// TestSealedKeyRotation: with the new key in key_env and the old one in
// previous_key_envs, documents sealed with the old key open, and the next
// save seals them with the new key (the old key alone no longer opens
// them; the new one alone does).
func TestSealedKeyRotation(t *testing.T) {
	ctx := context.Background()
	oldEnv := storetest.SetKey(t, "LEMONMCP_TEST_OLD_KEY")
	newEnv := storetest.SetKey(t, "LEMONMCP_TEST_NEW_KEY")
	for name, inner := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			key := uniqueKey(t)
			v, _, err := sealedOver(t, inner, oldEnv).CompareAndSave(ctx, "grants", key, 0, body(`{"generation":1}`))
			require.NoError(t, err)
			oldID := keyIDOf(t, rawOf(t, inner, "grants", key))

			rotated := sealedOver(t, inner, newEnv, oldEnv)
			d, ver, err := rotated.Load(ctx, "grants", key)
			require.NoError(t, err)
			require.Equal(t, v, ver)
			require.JSONEq(t, `{"generation":1}`, string(d.Body))
			_, _, err = rotated.CompareAndSave(ctx, "grants", key, ver, body(`{"generation":2}`))
			require.NoError(t, err)
			require.NotEqual(t, oldID, keyIDOf(t, rawOf(t, inner, "grants", key)), "resealed with the new key")

			_, _, err = sealedOver(t, inner, oldEnv).Load(ctx, "grants", key)
			require.ErrorContains(t, err, "LEMONMCP_TEST_OLD_KEY")
			d, _, err = sealedOver(t, inner, newEnv).Load(ctx, "grants", key)
			require.NoError(t, err)
			require.JSONEq(t, `{"generation":2}`, string(d.Body))
		})
	}
}

// TestSealedRefusesWhatItDidNotSeal: an envelope copied to another
// document, an altered envelope, and a document in clear (an attacker
// with write access to the backend) never open as trusted.
func TestSealedRefusesWhatItDidNotSeal(t *testing.T) {
	ctx := context.Background()
	env := storetest.SetKey(t, "LEMONMCP_TEST_PLACE_KEY")
	inner := store.NewMemory()
	s := sealedOver(t, inner, env)
	_, _, err := s.CompareAndSave(ctx, "pins", "a", 0, body(`{"approved":"sha256:a"}`))
	require.NoError(t, err)
	raw := rawOf(t, inner, "pins", "a")

	_, _, err = inner.CompareAndSave(ctx, "pins", "b", 0, body(raw))
	require.NoError(t, err)
	_, _, err = s.Load(ctx, "pins", "b")
	require.ErrorContains(t, err, "altered or sealed for another document")

	var env2 map[string]string
	require.NoError(t, json.Unmarshal([]byte(raw), &env2))
	data, _ := base64.StdEncoding.DecodeString(env2["data"])
	data[len(data)-1] ^= 1
	env2["data"] = base64.StdEncoding.EncodeToString(data)
	altered, _ := json.Marshal(env2)
	_, _, err = inner.CompareAndSave(ctx, "pins", "c", 0, body(string(altered)))
	require.NoError(t, err)
	_, _, err = s.Load(ctx, "pins", "c")
	require.ErrorContains(t, err, "altered")

	_, _, err = inner.CompareAndSave(ctx, "pins", "d", 0, body(`{"approved":"sha256:evil"}`))
	require.NoError(t, err)
	_, _, err = s.Load(ctx, "pins", "d")
	require.ErrorContains(t, err, "is not sealed")
}

func keyIDOf(t *testing.T, raw string) string {
	t.Helper()
	var env struct {
		KeyID string `json:"key_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &env))
	require.NotEmpty(t, env.KeyID)
	require.False(t, strings.ContainsAny(env.KeyID, "+/="), "a key id is hex")
	return env.KeyID
}
