#!/usr/bin/env bash
# bench and wsbench-load record the commit they were built from
# (source_git_*) beside the checkout's at run time (checkout_git_*), and
# warn (stderr and provenance_warning) when the two differ, only then.
# WSBENCH_CHECKOUT_DIR points a run at another checkout, so the checkout
# "moves" without a commit here: a new repository, a clone at the stamped
# commit, the clone with its changes flipped. A build outside git stamps
# "unknown".
set -euo pipefail
bench=$1 load=$2 src=$3 cmake=$4
fail() { echo "FAIL: $*"; exit 1; }
command -v git >/dev/null || { echo "SKIP: no git"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

context() {  # file key: the context's value, empty if absent
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["context"].get(sys.argv[2], ""))' \
    "$1" "$2"
}
run_bench() {  # name checkout
  WSBENCH_CHECKOUT_DIR=$2 "$bench" --benchmark_filter='^memcpy/ints/200$' \
    --benchmark_repetitions=1 --benchmark_min_time=0.001 --benchmark_out="$tmp/$1.json" \
    --benchmark_out_format=json >/dev/null 2>"$tmp/$1.err" || fail "bench exited $?: $(cat "$tmp/$1.err")"
}
run_load() {  # name checkout
  WSBENCH_CHECKOUT_DIR=$2 "$load" --load beast/json -c 1 -n 2 --out "$tmp/$1.json" \
    >/dev/null 2>"$tmp/$1.err" || fail "wsbench-load exited $?: $(cat "$tmp/$1.err")"
}
warned() {  # name program: the run warned, in its context and on stderr
  local warning
  warning=$(context "$tmp/$1.json" provenance_warning)
  [ -n "$warning" ] || fail "$1: no provenance_warning in the context"
  grep -qF "$2: warning: $warning" "$tmp/$1.err" || fail "$1: stderr lacks the warning: $(cat "$tmp/$1.err")"
}
silent() {  # name
  [ -z "$(context "$tmp/$1.json" provenance_warning)" ] || fail "$1: provenance_warning in the context"
  ! grep -q ": warning: " "$tmp/$1.err" || fail "$1: stderr warns: $(cat "$tmp/$1.err")"
}

# Another repository's state as the checkout.
other=$tmp/other
git init -q "$other"
echo one >"$other/file"
git -C "$other" add file
git -C "$other" -c user.name=t -c user.email=t@t commit -qm one
other_commit=$(git -C "$other" rev-parse HEAD)
run_bench moved "$other"
warned moved bench
stamp=$(context "$tmp/moved.json" source_git_commit)
stamp_dirty=$(context "$tmp/moved.json" source_git_dirty)
[ "$(context "$tmp/moved.json" checkout_git_commit)" = "$other_commit" ] ||
  fail "checkout_git_commit is not the checkout's HEAD"
[ "$stamp" != "$other_commit" ] || fail "source_git_commit follows the checkout"
grep -qF "built from $stamp" "$tmp/moved.err" || fail "the warning does not name the build's commit"
grep -qF "at $other_commit" "$tmp/moved.err" || fail "the warning does not name the checkout's commit"
echo "ok: bench warns when the checkout is at another commit"
run_load load-moved "$other"
warned load-moved wsbench-load
# Its own stamp: the two binaries may come from different builds.
load_stamp=$(context "$tmp/load-moved.json" source_git_commit)
load_dirty=$(context "$tmp/load-moved.json" source_git_dirty)
[ "$load_stamp" != "$other_commit" ] || fail "wsbench-load: source_git_commit follows the checkout"
grep -qF "built from $load_stamp" "$tmp/load-moved.err" || fail "wsbench-load: the warning does not name its build"
echo "ok: wsbench-load warns when the checkout is at another commit"

# A build outside git says so.
mkdir "$tmp/tarball"
"$cmake" -DSOURCE_DIR="$tmp/tarball" -DOUTPUT="$tmp/stamp.cpp" -P "$src/cmake/SourceStamp.cmake" >/dev/null
grep -qF 'return {"unknown", "unknown"};' "$tmp/stamp.cpp" || fail "a tarball's stamp: $(cat "$tmp/stamp.cpp")"
echo "ok: a build outside git stamps unknown"

if [ "$stamp" = unknown ] || [ "$load_stamp" = unknown ]; then
  echo "SKIP: this build is not from a git checkout: no checkout can match it"
  exit 77
fi
as_built() {  # dir commit dirty: a clone at the commit, a tracked file changed if dirty
  git clone -q --shared --no-checkout "$src" "$1"
  git -C "$1" checkout -q --detach "$2"
  if [ "$3" = true ]; then echo "# changed" >>"$1/README.md"; fi
}
# A clone at the stamped commit, with changes to a tracked file if the build
# had some: the same state, no warning.
same=$tmp/same
as_built "$same" "$stamp" "$stamp_dirty"
run_bench same "$same"
silent same
[ "$(context "$tmp/same.json" checkout_git_commit)" = "$stamp" ] || fail "same: checkout_git_commit"
[ "$(context "$tmp/same.json" checkout_git_dirty)" = "$stamp_dirty" ] || fail "same: checkout_git_dirty"
as_built "$tmp/load-same" "$load_stamp" "$load_dirty"
run_load load-same "$tmp/load-same"
silent load-same
echo "ok: no warning when the checkout is as built"

# The same commit with its changes flipped: a mismatch too.
if [ "$stamp_dirty" = true ]; then
  git -C "$same" checkout -q -- README.md
else
  echo "# changed" >>"$same/README.md"
fi
run_bench flipped "$same"
warned flipped bench
echo "ok: bench warns when the checkout's changes differ from the build's"
