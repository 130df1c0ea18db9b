#!/usr/bin/env bash
# memcheck.sh — runs the C host tests under valgrind memcheck (called by
# `make test-c-memcheck`; the flags and the reasons for them are in
# mk/ctest.mk). Every step runs even when an earlier one fails, so one run
# reports test failures, memory errors and leaks together.
#
# Environment: MC_DIR (binaries and logs), VG_ERRORS, VG_LEAKS (valgrind
# flags of the two passes), VG_ENV (test environment), CTEST_ONLY (test
# name filters).
set -u
fail=0 passed=0 failed=0
note() { printf 'memcheck: %s\n' "$*"; }
# step OK NAME: counts one memcheck step for the closing line.
step() {
  if [ "$1" -eq 0 ]; then passed=$((passed + 1)); note "ok: $2"
  else failed=$((failed + 1)); fail=1; note "FAILED: $2"; fi
}

# no_leaks LOG: true when the leak summary shows nothing definitely or
# indirectly lost.
no_leaks() {
  awk '/no leaks are possible/{ok=1} /definitely lost:/{d=$4} /indirectly lost:/{i=$4}
       END{exit !(ok || (d=="0" && i=="0"))}' "$1"
}

# run NAME FLAGS... -- PROGRAM ARGS...: one valgrind run, logged to NAME.vg.log.
run() {
  local name=$1; shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  env $VG_ENV valgrind "${flags[@]}" --log-file="$MC_DIR/$name.vg.log" "$@"
}

# Each step below is a function that prints its report; steps run in two
# lanes at once (valgrind runs a program's threads on one core, so two
# programs under it use both), and the reports are printed afterwards in
# step order, so the log reads the same as a serial run.

# show_errors LOG: prints the first reports of a failed pass, so a CI log
# that keeps only the output names the error, not just the log's path.
show_errors() {
  grep -E -A24 '== (Invalid (read|write|free)|Syscall param|Mismatched free|Source and destination overlap|Jump to the invalid|Process terminating|Argument .* of function)' "$1" \
    | head -80 | sed 's/^/memcheck:   /'
}

# Pass 1: memory errors (exit 99 means memcheck found one).
# lmcp_free_race (lmcp_client_free and lmcp_host_free racing every call;
# 12 client and 8 host iterations under valgrind) takes no baseline.
errors_pass() { # PROG
  local prog=$1 st
  args=("$MC_DIR/baseline.txt")
  [ "$prog" = ctest ] && args+=(${CTEST_ONLY:-})
  case $prog in free_race | serve) args=() ;; esac
  run "$prog.errors" $VG_ERRORS -- "$MC_DIR/lmcp_$prog" "${args[@]}"
  st=$?
  grep -H 'ERROR SUMMARY' "$MC_DIR/$prog.errors.vg.log"
  case $st in
    0) result 0 "lmcp_$prog: no memory errors, every test passed" ;;
    99) show_errors "$MC_DIR/$prog.errors.vg.log"
        result 1 "lmcp_$prog: memory errors (see $MC_DIR/$prog.errors.vg.log)" ;;
    *) result 1 "lmcp_$prog: no memory errors, but tests failed under memcheck (exit $st, see above)" ;;
  esac
}

# Pass 2: leaks (only the leak summary counts here; see mk/ctest.mk).
#
# Handle keys are kept as tombstones on purpose: a go-pointer key is a
# one-byte C allocation made by lmcp_client_new and never freed, so that its
# address is never handed to a later client (a stale handle must fail with
# LMCP_E_INVALID_HANDLE, not reach another client; see internal/handles).
# Only go-pointer's map in the Go heap points to them, and memcheck cannot
# always scan that memory (it marks Go heap pages it mistakes for popped
# goroutine stack frames as inaccessible), so a random few tombstones can show
# up as "definitely lost". The suppression names go-pointer's own cgo malloc
# stub, whose prefix is a hash cgo derives from that package: it is read from
# the library's symbols, so it matches exactly go-pointer's allocations and
# nothing the library hands to hosts (the canary below proves those checked).
leaks_pass() {
  local stub st
  stub=$(nm "$MC_DIR/liblemonmcp.so.1" | awk '$3 ~ /^github.com\/mattn\/go-pointer\._cgo_[0-9a-f]+_Cfunc__Cmalloc$/ {sub(/^github.com\/mattn\/go-pointer\./, "", $3); print $3; exit}')
  if [ -z "$stub" ]; then
    result 1 "cannot find go-pointer's cgo malloc stub in the library's symbols"
    return
  fi
  printf '{\n   lmcp-handle-tombstone-keys\n   Memcheck:Leak\n   match-leak-kinds: definite\n   fun:malloc\n   fun:%s\n}\n' "$stub" \
    >"$MC_DIR/tombstones.supp"
  run ctest.leaks $VG_LEAKS -- "$MC_DIR/lmcp_ctest" "$MC_DIR/baseline.txt" ${CTEST_ONLY:-} \
    >"$MC_DIR/ctest.leaks.out" 2>&1
  st=$?
  grep -H -E 'definitely lost:|indirectly lost:|still reachable:' "$MC_DIR/ctest.leaks.vg.log"
  no_leaks "$MC_DIR/ctest.leaks.vg.log"
  result $? "lmcp_ctest: nothing definitely or indirectly lost (see $MC_DIR/ctest.leaks.vg.log)"
  if [ $st -ne 0 ]; then
    # The leak pass judges leaks only, but a test that failed here may have
    # skipped its cleanup: show which, so a leak report can be read in context.
    note "(lmcp_ctest exited $st in the leak pass; its output: $MC_DIR/ctest.leaks.out)"
    grep -E '^\[ *FAILED|CHECK|failed' "$MC_DIR/ctest.leaks.out" | head -20 | sed 's/^/memcheck:   /'
  fi
}

# The canary: a deliberate overread and leak of library memory must be caught
# by both passes, proving the exemptions leave C memory checked.
canary_errors() {
  local st
  LMCP_SMOKE_CANARY=1 run canary.errors $VG_ERRORS -- "$MC_DIR/lmcp_smoke" >/dev/null
  st=$?
  [ $st -eq 99 ]; result $? "canary: a deliberate overread of library memory is reported (exit $st)"
}
canary_leaks() {
  LMCP_SMOKE_CANARY=1 run canary.leaks $VG_LEAKS -- "$MC_DIR/lmcp_smoke" >/dev/null
  ! no_leaks "$MC_DIR/canary.leaks.vg.log"; result $? "canary: a deliberate leak of library memory is reported"
}

# lane NAME STEP...: runs steps one after another, each step's report into
# $MC_DIR/NAME.report and its results into $MC_DIR/NAME.results.
result() { echo "$1 $2" >>"$results_file"; }
lane() {
  local name=$1; shift
  results_file="$MC_DIR/$name.results"
  : >"$results_file"
  for s in "$@"; do eval "$s"; done >"$MC_DIR/$name.report" 2>&1
}
# report NAME: prints a lane's report and counts its results.
report() {
  cat "$MC_DIR/$1.report"
  while read -r ok text; do step "$ok" "$text"; done <"$MC_DIR/$1.results"
}

# The smoke program writes the goroutine baseline both lmcp_ctest runs read.
lane smoke "errors_pass smoke"
lane errors "errors_pass ctest" "errors_pass free_race" &
lane leaks leaks_pass canary_errors canary_leaks "errors_pass serve" &
wait
for l in smoke errors leaks; do report $l; done
printf '%d passed, %d failed\n' "$passed" "$failed"
exit $fail
