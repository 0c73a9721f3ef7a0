#!/usr/bin/env bash
# Checks what `cmake --install` produces, the way a user consumes it:
#   1. cmake --install BUILD_DIR into a temporary prefix, then move the prefix
#      elsewhere (the installed tree must be relocatable);
#   2. scripts/install_check/ (a separate CMake project) finds it with
#      find_package(OpenACL), builds a C99 program against OpenACL::ascendcl
#      and runs it (aclInit ... aclFinalize);
#   3. the same program built with `pkg-config --cflags --libs ascendcl`.
#
#   scripts/install_check.sh [BUILD_DIR]     (default: build)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${1:-${OPENACL_BUILD_DIR:-build}}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/openacl-install-check.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

say() { printf '[install-check] %s\n' "$*"; }
fail() { printf '[install-check] FAIL: %s\n' "$*" >&2; exit 1; }

say "cmake --install $BUILD_DIR --prefix $TMP/prefix"
cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" >"$TMP/install.log" \
  || { cat "$TMP/install.log"; fail "cmake --install failed"; }

# Relocate: nothing installed may depend on the prefix it was installed to.
mv "$TMP/prefix" "$TMP/moved"
PREFIX=$TMP/moved

find_one() {  # find_one NAME_PATTERN -> first match under $PREFIX
  find "$PREFIX" -name "$1" \( -type f -o -type l \) | sort | head -n 1
}
LIB=$(find_one 'libascendcl.so')
HDR=$PREFIX/include/acl/acl.h
CFG=$(find_one 'OpenACLConfig.cmake')
VER=$(find_one 'OpenACLConfigVersion.cmake')
PC=$(find_one 'ascendcl.pc')
[[ -n $LIB ]] || fail "libascendcl.so not installed"
[[ -f $HDR ]] || fail "include/acl/acl.h not installed"
[[ -n $CFG && -n $VER ]] || fail "OpenACLConfig.cmake / OpenACLConfigVersion.cmake not installed"
[[ -n $PC ]] || fail "ascendcl.pc not installed"
say "installed: ${LIB#"$PREFIX"/} include/acl/ ($(find "$PREFIX/include/acl" -name '*.h' | wc -l) headers)" \
  "${CFG#"$PREFIX"/} ${PC#"$PREFIX"/}"
LIBDIR=$(dirname "$LIB")

# 2. find_package(OpenACL)
say "find_package(OpenACL) consumer"
cmake -S "$ROOT/scripts/install_check" -B "$TMP/consumer-cmake" -G Ninja \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >"$TMP/consumer.log" 2>&1 \
  || { cat "$TMP/consumer.log"; fail "consumer project did not configure"; }
cmake --build "$TMP/consumer-cmake" >>"$TMP/consumer.log" 2>&1 \
  || { cat "$TMP/consumer.log"; fail "consumer project did not build"; }
# The build tree RPATH points at the installed library; no LD_LIBRARY_PATH.
"$TMP/consumer-cmake/consumer" || fail "find_package consumer failed"

# 3. pkg-config
say "pkg-config consumer"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$PC")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
FLAGS=$(pkg-config --cflags --libs ascendcl) || fail "pkg-config --cflags --libs ascendcl failed"
say "pkg-config --cflags --libs ascendcl: $FLAGS (version $(pkg-config --modversion ascendcl))"
# shellcheck disable=SC2086  # FLAGS is a list of words by design
cc -std=c99 -Wall -Wextra -Werror "$ROOT/scripts/install_check/consumer.c" $FLAGS \
  -o "$TMP/consumer-pc" || fail "pkg-config consumer did not build"
LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$TMP/consumer-pc" \
  || fail "pkg-config consumer failed"

say "ok"
