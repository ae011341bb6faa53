# Sourced by every script under scripts/: the Debian packages wsbench builds
# against (installed only when missing, so a second run does nothing), the
# build with its log, the results folder of a run, help and progress lines.
# Defines functions only: sourcing it installs and builds nothing, so a
# script may source it before answering --help.
# shellcheck shell=bash

# PHP 8.2 and the extensions runtimes/php uses (wsbench_ensure_php).
WSBENCH_PHP_PACKAGES=(php8.2-cli php8.2-soap php8.2-xml php8.2-curl php8.2-xmlrpc)

WSBENCH_PACKAGES=(
  g++ cmake ninja-build pkgconf python3 python3-venv curl
  gsoap libgsoap-dev
  libxmlrpc-c++8-dev libxmlrpc-core-c3-dev libcurl4-openssl-dev
  libboost1.81-dev libboost-program-options1.81-dev
  rapidjson-dev libsimdjson-dev libxml2-dev libprotobuf-dev protobuf-compiler libssl-dev
  libgrpc++-dev protobuf-compiler-grpc
  libbenchmark-dev libgtest-dev libnghttp2-dev valgrind
  python3-zeep
  wrk nginx-light
  libsqlite3-dev wamerican
  iproute2
  "${WSBENCH_PHP_PACKAGES[@]}"
)

# scripts/fuzz (and so scripts/test): clang with its sanitizer and
# libFuzzer runtimes.
# shellcheck disable=SC2034  # used by the scripts that source this file
WSBENCH_FUZZ_PACKAGES=(clang libclang-rt-14-dev libfuzzer-14-dev)

# scripts/test only: report.html's test opens it in headless Chromium;
# report_html.py needs Python-Markdown, the report's plots matplotlib.
WSBENCH_TEST_PACKAGES=(chromium python3-markdown python3-matplotlib)

# wsbench_ensure_packages [extra packages...]
wsbench_ensure_packages() {
  local wanted=("${WSBENCH_PACKAGES[@]}" "$@") missing=() pkg
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "wsbench: missing Debian packages: ${missing[*]}" >&2
    echo "wsbench: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "wsbench: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# wsbench_ensure_php: the PHP packages alone, then a check that the
# extensions load; fails with the reason when either is not possible.
wsbench_ensure_php() {
  local WSBENCH_PACKAGES=()
  wsbench_ensure_packages "${WSBENCH_PHP_PACKAGES[@]}" || return 1
  # shellcheck disable=SC2016  # PHP code: its $e is PHP's
  php -r 'foreach (["soap", "xmlrpc", "curl", "simplexml", "json"] as $e)
            if (!extension_loaded($e)) { fwrite(STDERR, "php: no $e extension\n"); exit(1); }'
}

# wsbench_build <preset>: configure once, then build incrementally, with
# the output in build/<preset>/build.log (a wrapper's own output stays
# readable); a line a minute while it runs (a first build takes many
# minutes on 2 vCPUs), and the log's last 40 lines on stderr if it fails.
wsbench_build() {
  local preset=$1 log=build/$1/build.log status=0 ticker
  mkdir -p "build/$preset"
  : >"$log"
  echo "wsbench: building the $preset preset (log: $log)" >&2
  # The ticker ends with the build, or within a minute of this shell's end
  # (Ctrl-C), since a background job ignores SIGINT.
  (
    started=$SECONDS
    while sleep 60 && kill -0 $$ 2>/dev/null; do
      echo "wsbench: still building after $(wsbench_duration $((SECONDS - started))):" \
        "$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -1)" >&2
    done
  ) &
  ticker=$!
  if [ ! -f "build/$preset/CMakeCache.txt" ]; then
    cmake --preset "$preset" >>"$log" 2>&1 || status=$?
  fi
  [ "$status" != 0 ] || cmake --build --preset "$preset" >>"$log" 2>&1 || status=$?
  kill "$ticker" 2>/dev/null || true
  if [ "$status" != 0 ]; then
    echo "wsbench: the $preset build failed (exit $status); the end of $log:" >&2
    tail -n 40 "$log" >&2
    return "$status"
  fi
}

# wsbench_outdir <tool>: a new folder results/<tool>/<UTC time>/ (under
# $WSBENCH_RESULTS instead of results/ when set; the tests use it), with
# results/<tool>/latest pointing at it; prints its path. Never reuses a
# folder: a second run in the same second gets a suffix.
wsbench_outdir() {
  local root=${WSBENCH_RESULTS:-results}/$1 stamp name n=1
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  name=$stamp
  mkdir -p "$root"
  until mkdir "$root/$name" 2>/dev/null; do
    n=$((n + 1))
    name=$stamp-$n
    [ "$n" -lt 100 ] || { echo "wsbench: cannot make a folder in $root" >&2; return 1; }
  done
  # Relative, so the tree can move; -n replaces the link, not a file in it.
  ln -sfn "$name" "$root/latest"
  echo "$root/$name"
}

# wsbench_help <script>: the script's header comment (from line 2 to the
# first line that is not a comment) as its --help, so help and comment are
# one text.
wsbench_help() {
  sed -n '2,/^[^#]/{/^#/!d;/^# shellcheck/d;s/^# \{0,1\}//;p}' "$1"
}

# wsbench_wants_help <args...>: true when -h or --help is among them.
wsbench_wants_help() {
  local arg
  for arg; do
    case $arg in -h | --help) return 0 ;; esac
  done
  return 1
}

# wsbench_bad_option <tool> <option>: the one-line error and exit status 2
# of an option the tool does not know.
wsbench_bad_option() {
  echo "$1: unknown option '$2' (scripts/$1 --help lists them)" >&2
  exit 2
}

# bench's own options (bench --help, "wsbench options"), for the wrappers
# that pass options on to it: an unknown one is refused before any build.
# tests/scripts/help_test.sh checks the list against bench --help.
WSBENCH_BENCH_OPTIONS=(dictionary-size full placement remote target remote-floor link
  sampling-seconds iterations wire-sizes list-codecs no-probes strings heap alloc)

# wsbench_is_bench_option <arg>: true for an option bench accepts (its own
# or Google Benchmark's --benchmark_* and --v).
wsbench_is_bench_option() {
  local name=${1%%=*} known
  case $name in --benchmark_* | --v) return 0 ;; esac
  for known in "${WSBENCH_BENCH_OPTIONS[@]}"; do
    [ "$name" = "--$known" ] && return 0
  done
  return 1
}

# wsbench_cases <tool> <bench binary> [bench arguments...]: the cases the
# arguments select, one per line (bench --benchmark_list_tests). None:
# "<tool>: no case matches REGEX" and status 1, before anything is made.
wsbench_cases() {
  local tool=$1 binary=$2 filter=. arg listing err status=0
  shift 2
  for arg; do
    case $arg in --benchmark_filter=*) filter=${arg#*=} ;; esac
  done
  err=$(mktemp)
  listing=$("$binary" "$@" --benchmark_list_tests=true 2>"$err") || status=$?
  if [ -n "$listing" ]; then
    rm -f "$err"
    printf '%s\n' "$listing"
    return 0
  fi
  # Status 2 is an option bench refused: its own message says which.
  if [ "$status" -gt 1 ]; then
    cat "$err" >&2
    rm -f "$err"
    return "$status"
  fi
  rm -f "$err"
  echo "$tool: no case matches $filter" >&2
  return 1
}

# wsbench_duration <seconds>: "45s", "4m12s" or "1h05m".
wsbench_duration() {
  local s=$1
  if [ "$s" -lt 60 ]; then
    echo "${s}s"
  elif [ "$s" -lt 3600 ]; then
    printf '%dm%02ds\n' $((s / 60)) $((s % 60))
  else
    printf '%dh%02dm\n' $((s / 3600)) $((s % 3600 / 60))
  fi
}

# wsbench_progress <tool> <done> <total> <started (SECONDS)> <what>: the
# line of a step just done, "tool: [done/total] what, elapsed 4m12s, about
# 3m left", on stderr (tables on stdout stay clean), the time left
# estimated from the steps done.
wsbench_progress() {
  local elapsed=$((SECONDS - $4)) left=""
  if [ "$2" -gt 0 ] && [ "$2" -lt "$3" ]; then
    left=", about $(wsbench_duration $((elapsed * ($3 - $2) / $2))) left"
  fi
  echo "$1: [$2/$3] $5, elapsed $(wsbench_duration "$elapsed")$left" >&2
}

# wsbench_ensure_python: Python 3 with zeep for the Python runtime's
# clients (runtimes/python). Debian's python3-zeep installs for Debian's
# own python3, which another python3 first on PATH may not see. Sets
# WSBENCH_RUNTIME_PYTHON; fails with the reason when neither is possible.
wsbench_ensure_python() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import zeep' 2>/dev/null; then
      WSBENCH_RUNTIME_PYTHON=$py
      export WSBENCH_RUNTIME_PYTHON
      return 0
    fi
  done
  wsbench_ensure_packages python3 python3-zeep >&2 || {
    echo "wsbench: the Python runtime needs python3 and python3-zeep, which could not be installed" >&2
    return 1
  }
  WSBENCH_RUNTIME_PYTHON=/usr/bin/python3
  export WSBENCH_RUNTIME_PYTHON
}

# wsbench_ensure_java: Java 17 and Maven for runtimes/java only (the C++
# build does not need them); safe to run twice.
wsbench_ensure_java() {
  local WSBENCH_PACKAGES=()
  wsbench_ensure_packages openjdk-17-jdk-headless maven
}
