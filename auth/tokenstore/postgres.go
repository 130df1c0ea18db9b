package tokenstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// PostgresTable is the table the PostgreSQL store keeps grants in,
// created on first use:
//
//	CREATE TABLE IF NOT EXISTS lemonmcp_oauth_grants (
//	    key        text PRIMARY KEY,
//	    version    bigint NOT NULL,
//	    record     jsonb NOT NULL,
//	    updated_at timestamptz NOT NULL DEFAULT now())
const PostgresTable = "lemonmcp_oauth_grants"

const pgCreate = `CREATE TABLE IF NOT EXISTS ` + PostgresTable + ` (
	key        text PRIMARY KEY,
	version    bigint NOT NULL,
	record     jsonb NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now())`

// pgCreateLock is the transaction-level advisory lock (pg_advisory_xact_lock)
// taken around the table's creation: "lemonmcp" in ASCII.
const pgCreateLock int64 = 0x6c656d6f6e6d6370

// Postgres is a Store in a PostgreSQL table, for processes on many
// machines. A save is one statement: an INSERT ... ON CONFLICT DO NOTHING
// for the first record of a key, else an UPDATE ... WHERE version = $n;
// a statement that changes no row lost, and the winner is read back.
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
func (s *Postgres) Load(ctx context.Context, key string) (*Record, Version, error) {
	if err := s.ensureTable(ctx); err != nil {
		return nil, 0, err
	}
	return s.load(ctx, key)
}

func (s *Postgres) load(ctx context.Context, key string) (*Record, Version, error) {
	var ver int64
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT version, record FROM `+PostgresTable+` WHERE key = $1`, key).Scan(&ver, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, s.fail("loading the token", err)
	}
	rec := &Record{}
	if err := jsonx.Unmarshal(raw, rec); err != nil {
		return nil, 0, fmt.Errorf("the token store's record of this grant is not a token record (table %s)", PostgresTable)
	}
	return rec, Version(ver), nil
}

// CompareAndSave implements Store.
func (s *Postgres) CompareAndSave(ctx context.Context, key string, expected Version, rec *Record) (Version, *Record, error) {
	if err := s.ensureTable(ctx); err != nil {
		return 0, nil, err
	}
	data, err := jsonx.Marshal(rec)
	if err != nil {
		return 0, nil, fmt.Errorf("encoding the token record failed: %s", err)
	}
	var row pgx.Row
	if expected == 0 {
		row = s.pool.QueryRow(ctx, `INSERT INTO `+PostgresTable+` (key, version, record) VALUES ($1, 1, $2)
			ON CONFLICT (key) DO NOTHING RETURNING version`, key, data)
	} else {
		row = s.pool.QueryRow(ctx, `UPDATE `+PostgresTable+` SET version = version + 1, record = $3, updated_at = now()
			WHERE key = $1 AND version = $2 RETURNING version`, key, int64(expected), data)
	}
	var ver int64
	switch err := row.Scan(&ver); {
	case err == nil:
		return Version(ver), nil, nil
	case errors.Is(err, pgx.ErrNoRows):
		won, v, err := s.load(ctx, key)
		return v, won, err
	default:
		return 0, nil, s.fail("saving the token", err)
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
	return fmt.Errorf("the PostgreSQL token store failed %s: %s", what, scrub(err.Error(), s.password))
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

func isCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
