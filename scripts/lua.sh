#!/bin/bash
# Build Lua from Debian's source with -fcf-protection=branch against glibc
# 2.36 built --enable-cet (scripts/glibc.sh): a real program that loads C
# modules with dlopen() and calls them through pointers.  Two builds of
# the same objects: lua-236 runs with /lib64's glibc 2.36, lua-241 with
# /opt/glibc-2.41's dynamic linker (glibc 2.41, which never manages IBT).
#
# Usage: lua.sh OUT
#   build/dl/lua/      the source package (apt-get source)
#   build/lua/src      Debian's source, Debian's patches applied
#   OUT/               lua-236, lua-241, mod-marked.so, mod-unmarked.so
#   OUT/build.log
set -euo pipefail

out=${1:?usage: lua.sh OUT}
top=$(cd "$(dirname "$0")/.." && pwd -P)
dl=$top/build/dl/lua
src=$top/build/lua/src
g236=$top/build/glibc-2.36/root
log=$out/build.log
pin=lua5.4=5.4.4-3+deb12u1

die() { echo "lua: $*; log: ${log#"$top"/}" >&2; exit 1; }

mkdir -p "$out" "$dl" "$(dirname "$src")"
: >"$log"
[ -f "$g236/.installed" ] || die "glibc 2.36 is not built: run 'make glibc'"

dsc() { find "$dl" -maxdepth 1 -name 'lua5.4_*.dsc' | sort -V | tail -1; }
if [ ! -f "$src/.unpacked" ]; then
	if [ -z "$(dsc)" ]; then
		echo "lua: downloading Debian's source package $pin"
		(cd "$dl" && { apt-get source -qq --download-only "$pin" ||
			apt-get source -qq --download-only lua5.4/bookworm; }) >>"$log" 2>&1 ||
			die "apt-get source failed: run 'make deps' and check the network"
	fi
	rm -rf "$src"
	dpkg-source -q -x --no-copy "$(dsc)" "$src" >>"$log" 2>&1 ||
		die "dpkg-source failed"
	touch "$src/.unpacked"
fi

cc=(gcc --sysroot="$g236" -B"$g236/usr/lib64/" -L"$g236/usr/lib64" -O2 -Wall
	-DLUA_COMPAT_5_3 -DLUA_USE_LINUX
	-I "$src/src")
# Debian's luaconf.h includes a header its rules generate.
mkdir -p "$out/include"
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' \
	>"$out/include/lua5.4-deb-multiarch.h"
cc+=(-I "$out/include")
mapfile -t srcs < <(find "$src/src" -maxdepth 1 -name '*.c' ! -name luac.c | sort)
objs=$out/obj
mkdir -p "$objs"
for f in "${srcs[@]}"; do
	o=$objs/$(basename "${f%.c}").o
	[ "$o" -nt "$f" ] && continue
	"${cc[@]}" -fcf-protection=branch -c -o "$o" "$f" >>"$log" 2>&1 ||
		die "compiling $(basename "$f") failed"
done
# -E: modules resolve the Lua API in the executable.
"${cc[@]}" -fcf-protection=branch -Wl,-E -o "$out/lua-236" "$objs"/*.o \
	-lm >>"$log" 2>&1 || die "linking lua-236 failed"
"${cc[@]}" -fcf-protection=branch -Wl,-E -o "$out/lua-241" "$objs"/*.o -lm \
	-Wl,--dynamic-linker=/opt/glibc-2.41/lib64/ld-linux-x86-64.so.2 \
	-Wl,-rpath,/opt/glibc-2.41/lib64 >>"$log" 2>&1 ||
	die "linking lua-241 failed"
"${cc[@]}" -fcf-protection=branch -fPIC -shared -o "$out/mod-marked.so" \
	"$top/guest/clients/lua/mod.c" >>"$log" 2>&1 || die "mod-marked.so failed"
"${cc[@]}" -fcf-protection=none -fPIC -shared -o "$out/mod-unmarked.so" \
	"$top/guest/clients/lua/mod.c" >>"$log" 2>&1 || die "mod-unmarked.so failed"

for f in lua-236 lua-241 mod-marked.so; do
	readelf -n "$out/$f" | grep -q 'x86 feature: IBT' ||
		die "$f lacks the IBT property"
done
if readelf -n "$out/mod-unmarked.so" | grep -q 'x86 feature: IBT'; then
	die "mod-unmarked.so has the IBT property; it must not"
fi
