#!/bin/sh
# SPDX-License-Identifier: MIT
# install_test.sh BUILD_DIR SRC_DIR OBCRUN CC - installs BUILD_DIR into a
# temporary prefix (cmake --install), checks the layout (include/obc.h,
# lib/libobc.so and .a, lib/pkgconfig/obc.pc, lib/cmake/obc), then builds
# hello_installed.c through pkg-config and through find_package(obc), checks
# that each binary loads the installed libobc, and runs each with obcrun -n 2;
# then the installed Python package, which must load the installed libobc.
set -eu
build=$1
src=$2
obcrun=$3
cc=$4
tmp=$(mktemp -d /tmp/obct-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

step() { echo "install_test: $*"; }
die() { echo "install_test: FAIL: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; die "cmake --install failed"; }
for f in include/obc.h lib/libobc.so lib/libobc.a lib/pkgconfig/obc.pc; do
    [ -e "$prefix/$f" ] || die "$f is not installed (installed: $(cd "$prefix" && find . -type f | tr '\n' ' '))"
done
ls "$prefix"/lib/cmake/obc/obcConfig.cmake "$prefix"/lib/cmake/obc/obc-config.cmake 2>/dev/null |
    grep -q . || die "no lib/cmake/obc/obcConfig.cmake"

if command -v c++ >/dev/null 2>&1; then
    step "obc.h compiles as C++"
    c++ -fsyntax-only -Wall -Wextra -Werror -x c++ "$prefix/include/obc.h" ||
        die "obc.h does not compile as C++"
fi

step "build through pkg-config"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs obc) || die "pkg-config --cflags --libs obc failed"
step "  pkg-config: $flags"
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$tmp/hello_pc" "$src/hello_installed.c" \
    $flags || die "compiling with pkg-config flags failed"
LD_LIBRARY_PATH=$prefix/lib ldd "$tmp/hello_pc" | grep -q "$prefix/lib/libobc.so" ||
    die "hello_pc does not load $prefix/lib/libobc.so: $(LD_LIBRARY_PATH=$prefix/lib ldd "$tmp/hello_pc")"
LD_LIBRARY_PATH=$prefix/lib "$obcrun" -n 2 --timeout 60 "$tmp/hello_pc" ||
    die "obcrun -n 2 hello_pc failed"

step "build through find_package(obc)"
cmake -S "$src" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; die "configuring the find_package consumer failed"; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; die "building the find_package consumer failed"; }
ldd "$tmp/cmake-build/hello_installed" | grep -q "$prefix/lib/libobc" ||
    die "hello_installed does not load libobc from $prefix: $(ldd "$tmp/cmake-build/hello_installed")"
"$obcrun" -n 2 --timeout 60 "$tmp/cmake-build/hello_installed" ||
    die "obcrun -n 2 hello_installed failed"
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
    step "the installed Python package loads the installed libobc and runs"
    pysite=$prefix/lib/python3/dist-packages
    [ -e "$pysite/obc/__init__.py" ] || die "the Python package is not in $pysite"
    (cd "$tmp" && PYTHONPATH=$pysite /usr/bin/python3 -c "import obc; print(obc._native.path)") |
        grep -q "^$prefix/lib/libobc.so" || die "the installed obc package loads another libobc"
    (cd "$tmp" && PYTHONPATH=$pysite "$obcrun" -n 2 --timeout 60 /usr/bin/python3 -c \
        "import obc, numpy as np; obc.init(); a = np.ones(5); obc.all_reduce(a); assert (a == 2).all()") ||
        die "obcrun -n 2 python3 with the installed package failed"
fi
step "ok"
