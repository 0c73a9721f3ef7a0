#!/usr/bin/env bash
# Installs what OpenACL needs to build and test, from Debian's packages and PyPI
# only. Idempotent and quick when everything is present: it looks first and
# installs only what is missing (no `apt-get update` when nothing is missing).
#
# Debian: cmake ninja-build g++ pkg-config nlohmann-json3-dev libgtest-dev
#         libgmock-dev python3-dev libprotobuf-dev protobuf-compiler libonnx-dev
#         libdnnl-dev (oneDNN kernels) ocl-icd-opencl-dev (oneDNN's CMake
#         config requires OpenCL; Debian only recommends it) clang libclang-rt-14-dev (the importer's
#         libFuzzer target) python3-torch python3-torchvision (CPU builds for
#         /usr/bin/python3: scripts/make_models.py exports the test models)
# PyPI (for the `python3` on PATH): numpy pytest scikit-build-core onnx ml_dtypes
#         onnxruntime (reference outputs for the real-model tests)
#         openvino (a peer in bench/models_bench.py)
#
# Environment: OPENACL_SKIP_APT=1 / OPENACL_SKIP_PIP=1 skip a half (for machines
# where another tool manages it).
set -euo pipefail

log() { printf '[install-deps] %s\n' "$*"; }

APT_PACKAGES=(
  cmake
  ninja-build
  g++
  pkg-config
  nlohmann-json3-dev
  libgtest-dev
  libgmock-dev
  python3-dev
  libprotobuf-dev
  protobuf-compiler
  libonnx-dev
  libdnnl-dev
  ocl-icd-opencl-dev
  clang
  libclang-rt-14-dev
  python3-torch
  python3-torchvision
)

# Python import name -> PyPI distribution name.
# onnx: its backend node tests are the conformance corpus, and it writes test models.
# onnxruntime: reference outputs for the real-model tests (tests/models).
# openvino: the second peer in bench/models_bench.py (its test skips without it).
# ml_dtypes: onnx's reference code casts the 4- and 2-bit integer types with
# it, so it decides the conformance corpus's expected outputs (0.7.0 made
# float -> int4 saturate where 0.6.0 wraps): pinned, like onnx.
# A pinned distribution that is present in another version is reinstalled.
PIP_MODULES=(numpy pytest scikit_build_core onnx ml_dtypes onnxruntime openvino)
PIP_DISTS=(numpy pytest scikit-build-core onnx==1.23.2 ml_dtypes==0.6.0 onnxruntime==1.32.0 openvino==2026.4.1)

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  fi
fi

apt_installed() {
  local status
  status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)
  [[ $status == "install ok installed" ]]
}

install_apt() {
  if [[ ${OPENACL_SKIP_APT:-0} == 1 ]]; then
    log "apt: skipped (OPENACL_SKIP_APT=1)"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "apt: not a Debian system; install by hand: ${APT_PACKAGES[*]}"
    return 0
  fi
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    apt_installed "$pkg" || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "apt: all ${#APT_PACKAGES[@]} packages present"
    return 0
  fi
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

install_pip() {
  if [[ ${OPENACL_SKIP_PIP:-0} == 1 ]]; then
    log "pip: skipped (OPENACL_SKIP_PIP=1)"
    return 0
  fi
  local py
  py=$(command -v python3) || { log "pip: no python3 on PATH"; return 1; }
  local missing=() i
  for i in "${!PIP_MODULES[@]}"; do
    local dist=${PIP_DISTS[$i]} check="import ${PIP_MODULES[$i]}"
    if [[ $dist == *==* ]]; then
      check+="; import importlib.metadata as m, sys; sys.exit(m.version('${dist%%==*}') != '${dist#*==}')"
    fi
    if ! "$py" -c "$check" >/dev/null 2>&1; then
      missing+=("$dist")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    log "pip: ${PIP_DISTS[*]} present for $py"
    return 0
  fi
  if ! "$py" -m pip --version >/dev/null 2>&1; then
    log "pip: $py has no pip; installing python3-pip"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -q
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends python3-pip
  fi
  local extra=()
  # Debian's own interpreter refuses pip installs (PEP 668) unless told.
  if "$py" -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")) and sys.prefix == sys.base_prefix else 1)'; then
    extra+=(--break-system-packages)
  fi
  log "pip: installing ${missing[*]} for $py"
  "$py" -m pip install --disable-pip-version-check -q "${extra[@]}" "${missing[@]}"
}

install_apt
install_pip
log "done"
