# Sourced by scripts/bench and scripts/test: installs the Debian packages
# wsbench builds against, only those missing, so a second run does nothing.
# shellcheck shell=bash

# PHP 8.2 and the extensions runtimes/php uses (wsbench_ensure_php).
WSBENCH_PHP_PACKAGES=(php8.2-cli php8.2-soap php8.2-xml php8.2-curl php8.2-xmlrpc)

WSBENCH_PACKAGES=(
  g++ cmake ninja-build pkgconf python3 python3-venv curl
  gsoap libgsoap-dev
  libxmlrpc-c++8-dev libxmlrpc-core-c3-dev libcurl4-openssl-dev
  libboost1.81-dev libboost-program-options1.81-dev
  rapidjson-dev libxml2-dev libprotobuf-dev protobuf-compiler libssl-dev
  libbenchmark-dev libgtest-dev valgrind
  python3-zeep
  wrk nginx-light
  libsqlite3-dev wamerican
  iproute2
  "${WSBENCH_PHP_PACKAGES[@]}"
)

# scripts/fuzz (and so scripts/test): clang with its sanitizer and
# libFuzzer runtimes.
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
  php -r 'foreach (["soap", "xmlrpc", "curl", "simplexml", "json"] as $e)
            if (!extension_loaded($e)) { fwrite(STDERR, "php: no $e extension\n"); exit(1); }'
}

# wsbench_build <preset>: configure once, then build incrementally.
wsbench_build() {
  local preset=$1
  if [ ! -f "build/$preset/CMakeCache.txt" ]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build --preset "$preset"
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
