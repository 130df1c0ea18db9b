#!/bin/sh
# Private PostgreSQL 15 and Redis servers for the shared token store tests
# (mk/tokenstores.mk), on free loopback ports, everything under DIR:
#
#   tokenstore-servers.sh start DIR   starts both; writes DIR/env with
#                                     LEMONMCP_TEST_POSTGRES_URL and
#                                     LEMONMCP_TEST_REDIS_URL
#   tokenstore-servers.sh stop DIR    stops them by the PIDs they recorded
#                                     and removes DIR (idempotent)
#
# PostgreSQL refuses to run as root: as root its cluster belongs to the
# postgres user and its commands run through runuser. redis-server is
# installed with apt-get when missing.
set -eu

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=$1
dir=$2
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac # as_pg runs from /

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		# From /: postgres may not enter the caller's directory (a clone
		# under a 0700 one), and its tools would say so on every start.
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop() {
	if [ -f "$dir/redis.pid" ]; then
		pid=$(cat "$dir/redis.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	if [ -f "$dir/pg/data/postmaster.pid" ]; then
		pid=$(head -1 "$dir/pg/data/postmaster.pid")
		kill -INT "$pid" 2>/dev/null || true # fast shutdown
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}

start() {
	[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 is not installed ($PGBIN/initdb)" >&2; exit 1; }
	if ! command -v redis-server >/dev/null; then
		# The apt lock is the one make's APT_GET takes: suites run side by
		# side, and a fresh machine has no package lists until an update.
		flock /tmp/lemonmcp-apt.lock sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null; }'
	fi
	mkdir -p "$dir/pg"
	chmod 755 "$dir"
	[ "$(id -u)" = 0 ] && chown postgres "$dir/pg"
	as_pg "$PGBIN/initdb" -D "$dir/pg/data" -A trust -U postgres --no-sync >"$dir/pg/initdb.log" 2>&1 ||
		{ cat "$dir/pg/initdb.log" >&2; exit 1; }
	pgport=$(free_port)
	as_pg "$PGBIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" -w -t 60 \
		-o "-p $pgport -k $dir/pg -c listen_addresses=127.0.0.1" start >/dev/null ||
		{ cat "$dir/pg/log" >&2; exit 1; }
	redisport=$(free_port)
	redis-server --port "$redisport" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
		--pidfile "$dir/redis.pid" --dir "$dir" --logfile "$dir/redis.log"
	for _ in $(seq 100); do [ -s "$dir/redis.pid" ] && break; sleep 0.1; done
	{
		echo "export LEMONMCP_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable"
		echo "export LEMONMCP_TEST_REDIS_URL=redis://127.0.0.1:$redisport/0"
	} >"$dir/env"
}

case $cmd in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
