package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresTable is the table the PostgreSQL store keeps documents in,
// created on first use:
//
//	CREATE TABLE IF NOT EXISTS lemonmcp_store (
//	    collection  text NOT NULL,
//	    key         text NOT NULL,
//	    version     bigint NOT NULL,
//	    document    jsonb NOT NULL,
//	    lease_owner text,
//	    lease_until bigint,
//	    updated_at  timestamptz NOT NULL DEFAULT now(),
//	    PRIMARY KEY (collection, key))
const PostgresTable = "lemonmcp_store"

const pgCreate = `CREATE TABLE IF NOT EXISTS ` + PostgresTable + ` (
	collection  text NOT NULL,
	key         text NOT NULL,
	version     bigint NOT NULL,
	document    jsonb NOT NULL,
	lease_owner text,
	lease_until bigint,
	updated_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (collection, key))`

// pgCreateLock is the transaction-level advisory lock (pg_advisory_xact_lock)
// taken around the table's creation: "lemonmcp" in ASCII.
const pgCreateLock int64 = 0x6c656d6f6e6d6370

// Postgres is a store in a PostgreSQL table, for processes on many
// machines. A save is one statement: an INSERT ... ON CONFLICT DO NOTHING
// for the first version of a document, else an UPDATE ... WHERE version =
// $n; a statement that changes no row lost, and the winner is read back.
type Postgres struct {
	pool     *pgxpool.Pool
	password string // cut out of error messages

	mu      sync.Mutex
	created bool
}

// OpenPostgres returns the store at a postgres:// URL. It connects on
// first use.
func OpenPostgres(rawURL string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, errors.New("url: not a valid PostgreSQL connection URL")
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, errors.New("url: not a valid PostgreSQL connection URL")
	}
	return &Postgres{pool: pool, password: urlPassword(rawURL)}, nil
}

// ensureTable creates the table once per store (and again after a
// failure).
func (s *Postgres) ensureTable(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.created {
		return nil
	}
	if err := s.createTable(ctx); err != nil {
		return s.fail("creating the table "+PostgresTable, err)
	}
	s.created = true
	return nil
}

// createTable runs CREATE TABLE IF NOT EXISTS under a transaction-level
// advisory lock. The statement alone is not safe when many processes
// first use the store at once: two sessions can both find no table and
// the later one fails with a unique violation on pg_type (or pg_class).
// The lock makes creators take turns, on every machine, and ends with the
// transaction.
func (s *Postgres) createTable(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgCreateLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgCreate)
		return err
	})
}

// Load implements Store.
func (s *Postgres) Load(ctx context.Context, collection, key string) (*Document, Version, error) {
	if err := s.ensureTable(ctx); err != nil {
		return nil, 0, err
	}
	return s.load(ctx, collection, key)
}

func (s *Postgres) load(ctx context.Context, collection, key string) (*Document, Version, error) {
	var ver int64
	var raw []byte
	var owner *string
	var until *int64
	err := s.pool.QueryRow(ctx, `SELECT version, document::text, lease_owner, lease_until FROM `+PostgresTable+
		` WHERE collection = $1 AND key = $2`, collection, key).Scan(&ver, &raw, &owner, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, s.fail("loading a document", err)
	}
	d := &Document{Body: raw}
	if owner != nil && until != nil {
		d.Lease = &Lease{Owner: *owner, Until: *until}
	}
	return d, Version(ver), nil
}

// VersionOf implements Versioner.
func (s *Postgres) VersionOf(ctx context.Context, collection, key string) (Version, error) {
	if err := s.ensureTable(ctx); err != nil {
		return 0, err
	}
	var ver int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM `+PostgresTable+` WHERE collection = $1 AND key = $2`, collection, key).Scan(&ver)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.fail("loading a version", err)
	}
	return Version(ver), nil
}

// CompareAndSave implements Store.
func (s *Postgres) CompareAndSave(ctx context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error) {
	if err := checkBody(collection, key, doc); err != nil {
		return 0, nil, err
	}
	if err := s.ensureTable(ctx); err != nil {
		return 0, nil, err
	}
	var owner *string
	var until *int64
	if doc.Lease != nil {
		owner, until = &doc.Lease.Owner, &doc.Lease.Until
	}
	body := string(doc.Body)
	var row pgx.Row
	if expected == 0 {
		row = s.pool.QueryRow(ctx, `INSERT INTO `+PostgresTable+` (collection, key, version, document, lease_owner, lease_until)
			VALUES ($1, $2, 1, $3::jsonb, $4, $5) ON CONFLICT (collection, key) DO NOTHING RETURNING version`, collection, key, body, owner, until)
	} else {
		row = s.pool.QueryRow(ctx, `UPDATE `+PostgresTable+` SET version = version + 1, document = $4::jsonb,
			lease_owner = $5, lease_until = $6, updated_at = now()
			WHERE collection = $1 AND key = $2 AND version = $3 RETURNING version`, collection, key, int64(expected), body, owner, until)
	}
	var ver int64
	switch err := row.Scan(&ver); {
	case err == nil:
		return Version(ver), nil, nil
	case errors.Is(err, pgx.ErrNoRows):
		won, v, err := s.load(ctx, collection, key)
		return v, won, err
	default:
		return 0, nil, s.fail("saving a document", err)
	}
}

// Close implements Store.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}

// fail is a database error without the connection's password.
func (s *Postgres) fail(what string, err error) error {
	if isCanceled(err) {
		return err
	}
	return fmt.Errorf("the PostgreSQL store failed %s: %s", what, scrub(err.Error(), s.password))
}

// urlPassword is the password in a connection URL ("" when none).
func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// scrub cuts a secret out of a message.
func scrub(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "[redacted]")
}
