package tokenstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// RedisKeyPrefix prefixes every grant's key in Redis: a hash with the
// fields "version" and "record" (JSON), created on first save.
const RedisKeyPrefix = "lemonmcp:oauth:"

// redisCAS compares the version and saves in one step (a Lua script runs
// atomically). It answers {new version} or {current version, record}.
var redisCAS = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if cur ~= tonumber(ARGV[1]) then
  return {cur, redis.call('HGET', KEYS[1], 'record')}
end
redis.call('HSET', KEYS[1], 'version', cur + 1, 'record', ARGV[2])
return {cur + 1}
`)

// Redis is a Store in Redis, for processes on many machines.
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

// Load implements Store.
func (s *Redis) Load(ctx context.Context, key string) (*Record, Version, error) {
	vals, err := s.client.HMGet(ctx, RedisKeyPrefix+key, "version", "record").Result()
	if err != nil {
		return nil, 0, s.fail("loading the token", err)
	}
	return s.decode(vals[0], vals[1])
}

// CompareAndSave implements Store.
func (s *Redis) CompareAndSave(ctx context.Context, key string, expected Version, rec *Record) (Version, *Record, error) {
	data, err := jsonx.Marshal(rec)
	if err != nil {
		return 0, nil, fmt.Errorf("encoding the token record failed: %s", err)
	}
	res, err := redisCAS.Run(ctx, s.client, []string{RedisKeyPrefix + key}, int64(expected), data).Slice()
	if err != nil {
		return 0, nil, s.fail("saving the token", err)
	}
	if len(res) == 1 {
		v, _ := res[0].(int64)
		return Version(v), nil, nil
	}
	var raw any
	if len(res) > 1 {
		raw = res[1]
	}
	won, v, err := s.decode(res[0], raw)
	return v, won, err
}

// decode turns the stored fields into a record and version.
func (s *Redis) decode(version, record any) (*Record, Version, error) {
	var ver int64
	switch v := version.(type) {
	case nil:
		return nil, 0, nil
	case int64:
		ver = v
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, 0, errors.New("the Redis token store's version of this grant is not a number")
		}
		ver = n
	}
	raw, _ := record.(string)
	if raw == "" {
		return nil, Version(ver), nil
	}
	rec := &Record{}
	if err := jsonx.Unmarshal([]byte(raw), rec); err != nil {
		return nil, 0, errors.New("the Redis token store's record of this grant is not a token record")
	}
	return rec, Version(ver), nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.client.Close() }

func (s *Redis) fail(what string, err error) error {
	if isCanceled(err) {
		return err
	}
	return fmt.Errorf("the Redis token store failed %s: %s", what, scrub(err.Error(), s.password))
}
