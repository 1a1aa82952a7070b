#!/usr/bin/env bash
# tools/fetch-traces in a scratch checkout of its own: an unknown name is
# refused (2); a local copy beside the checkout with the right SHA-256 is
# linked and its path printed (0); one with another SHA-256, with no way to
# download, is one line saying where it looked and what to put where (1).
# Usage: run_fetch_traces.sh SOURCE_DIR REAL_KTH_TRACE
set -u
src=$1 real=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/vramsim-fetch-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/repo/tools" "$work/shared/data/traces/pwa-swf" "$work/bin"
cp "$src/tools/fetch-traces" "$work/repo/tools/"
# The commands it needs, and no curl or wget: no download can happen.
for c in bash sha256sum cut mkdir ln mktemp rm gzip mv dirname basename; do ln -s "$(command -v $c)" "$work/bin/$c"; done
run() { PATH=$work/bin "$work/repo/tools/fetch-traces" "$@"; }
fail=0
err=$(run nope 2>&1 >/dev/null); rc=$?
[ "$rc" = 2 ] && [[ "$err" == *"expected a trace name"* ]] || { echo "FAIL unknown name: $rc $err"; fail=1; }
printf 'not the log\n' >"$work/shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf"
err=$(run kth-sp2 2>&1 >/dev/null); rc=$?
[ "$rc" = 1 ] && [[ "$err" == *"no local copy (looked in"*"neither curl nor wget is installed"*"put KTH-SP2-1996-2.1-cln.swf (SHA-256 fba36494"* ]] \
  && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { echo "FAIL wrong copy: $rc $err"; fail=1; }
[ ! -e "$work/repo/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf" ] || { echo "FAIL: a wrong copy was linked"; fail=1; }
cp "$real" "$work/shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf"
out=$(run --locate kth-sp2); rc=$?
[ "$rc" = 0 ] && [ "$out" = "$work/shared/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf" ] && [ ! -e "$work/repo/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf" ] \
  || { echo "FAIL --locate: $rc $out"; fail=1; }
out=$(run kth-sp2); rc=$?
[ "$rc" = 0 ] && [ "$out" = "$work/repo/data/traces/pwa-swf/KTH-SP2-1996-2.1-cln.swf" ] && [ -L "$out" ] \
  || { echo "FAIL local copy: $rc $out"; fail=1; }
exit $fail
