#!/usr/bin/env bash
# Installs every Debian package vramsim needs to build and test. Idempotent:
# packages already present are left alone. CUDA is optional and not
# installed here; CMake builds the probe where it finds a toolkit.
set -euo pipefail

packages=(
  build-essential cmake ninja-build g++ pkg-config ccache
  libboost-dev libboost-graph-dev libeigen3-dev libcli11-dev nlohmann-json3-dev libssl-dev
  # Ray Serve config files (vramsim import/export ray-serve)
  libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # the scheduler cross-check (tests/backends/ref_sched.py) and tools/bench-replay
  python3
  # `import vramsim` (python/, docs/python.md): the module, NumPy for its
  # request columns; its tests (pytest) and the example notebook, run
  # headless (nbconvert, a Python kernel, pandas, matplotlib)
  pybind11-dev python3-dev python3-numpy
  python3-pytest python3-pandas python3-matplotlib jupyter-nbconvert python3-ipykernel python3-nbformat
  # the scenario fuzzer (tools/fuzz.sh): libFuzzer from clang
  clang libclang-rt-14-dev
  # the linker: lld, faster than ld on the sanitizer build's many test binaries
  lld
  # live mode and its integration tests: a real single-node SLURM on loopback
  slurm-wlm munge
  # the multi-node harness: network namespaces, veth pairs and a bridge
  iproute2 util-linux
  # vramsim report draws its plots with gnuplot (PNG via cairo, SVG)
  gnuplot-nox
  # docs/architecture.svg: the library graph CMake writes, drawn (tools/draw-architecture)
  graphviz
  # tools/fetch-traces: the studies' public logs, downloaded where no local copy is
  curl ca-certificates gzip
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
# dpkg without an fsync per file (--force-unsafe-io): on a fresh machine
# this is some two hundred packages, and a failed install is simply rerun.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
