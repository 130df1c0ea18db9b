package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix prefixes every document's key in Redis:
// lemonmcp:store:<collection>:<key>, a hash with the fields "version",
// "document" and, while leased, "lease_owner" and "lease_until"; created
// on first save.
const RedisKeyPrefix = "lemonmcp:store:"

// redisCAS compares the version and saves in one step (a Lua script runs
// atomically). ARGV: expected version, document, lease owner, lease until
// ("" and "": no lease). It answers {new version} or {current version,
// document, lease owner, lease until}.
var redisCAS = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if cur ~= tonumber(ARGV[1]) then
  local f = redis.call('HMGET', KEYS[1], 'document', 'lease_owner', 'lease_until')
  return {cur, f[1], f[2], f[3]}
end
redis.call('HSET', KEYS[1], 'version', cur + 1, 'document', ARGV[2])
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], 'lease_owner', 'lease_until')
else
  redis.call('HSET', KEYS[1], 'lease_owner', ARGV[3], 'lease_until', ARGV[4])
end
return {cur + 1}
`)

// Redis is a store in Redis, for processes on many machines.
type Redis struct {
	client   *redis.Client
	password string // cut out of error messages
}

// OpenRedis returns the store at a redis://, rediss:// or unix:// URL. It
// connects on first use.
func OpenRedis(rawURL string) (*Redis, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New("url: not a valid Redis URL")
	}
	return &Redis{client: redis.NewClient(opts), password: opts.Password}, nil
}

func redisKey(collection, key string) string { return RedisKeyPrefix + collection + ":" + key }

// Load implements Store.
func (s *Redis) Load(ctx context.Context, collection, key string) (*Document, Version, error) {
	vals, err := s.client.HMGet(ctx, redisKey(collection, key), "version", "document", "lease_owner", "lease_until").Result()
	if err != nil {
		return nil, 0, s.fail("loading a document", err)
	}
	return decodeRedis(vals)
}

// VersionOf implements Versioner.
func (s *Redis) VersionOf(ctx context.Context, collection, key string) (Version, error) {
	v, err := s.client.HGet(ctx, redisKey(collection, key), "version").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, s.fail("loading a version", err)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, errors.New("the Redis store's version of a document is not a number")
	}
	return Version(n), nil
}

// CompareAndSave implements Store.
func (s *Redis) CompareAndSave(ctx context.Context, collection, key string, expected Version, doc *Document) (Version, *Document, error) {
	if err := checkBody(collection, key, doc); err != nil {
		return 0, nil, err
	}
	owner, until := "", ""
	if doc.Lease != nil {
		owner, until = doc.Lease.Owner, strconv.FormatInt(doc.Lease.Until, 10)
	}
	res, err := redisCAS.Run(ctx, s.client, []string{redisKey(collection, key)}, int64(expected), doc.Body, owner, until).Slice()
	if err != nil {
		return 0, nil, s.fail("saving a document", err)
	}
	if len(res) == 1 {
		v, _ := res[0].(int64)
		return Version(v), nil, nil
	}
	for len(res) < 4 {
		res = append(res, nil)
	}
	won, v, err := decodeRedis(res)
	return v, won, err
}

// decodeRedis turns the stored fields (version, document, lease owner,
// lease until) into a document and version.
func decodeRedis(f []any) (*Document, Version, error) {
	var ver int64
	switch v := f[0].(type) {
	case nil:
		return nil, 0, nil
	case int64:
		ver = v
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, 0, errors.New("the Redis store's version of a document is not a number")
		}
		ver = n
	}
	raw, _ := f[1].(string)
	if raw == "" {
		return nil, Version(ver), nil
	}
	d := &Document{Body: []byte(raw)}
	if owner, ok := f[2].(string); ok && owner != "" {
		until, _ := f[3].(string)
		n, err := strconv.ParseInt(until, 10, 64)
		if err != nil {
			return nil, 0, errors.New("the Redis store's lease of a document is not a number")
		}
		d.Lease = &Lease{Owner: owner, Until: n}
	}
	return d, Version(ver), nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.client.Close() }

func (s *Redis) fail(what string, err error) error {
	if isCanceled(err) {
		return err
	}
	return fmt.Errorf("the Redis store failed %s: %s", what, scrub(err.Error(), s.password))
}
