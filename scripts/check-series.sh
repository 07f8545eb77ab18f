#!/bin/bash
# Prove a series bisectable and clean: apply it one patch at a time onto
# "base" in a scratch worktree, build after each patch, and run the tree's
# checkpatch.pl on each patch (the kernel's with --strict).
# Usage: check-series.sh linux|qemu
#
# Builds go to build/check-NAME-out, incrementally from one patch to the next.
set -euo pipefail

name=${1:?usage: check-series.sh linux|qemu}
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/$name
work=$top/build/check-$name
out=$top/build/check-$name-out
log=$top/build/logs/check-$name.log
series_dir=$top/patches/$name

die() { echo "check-series: $*" >&2; exit 1; }

[ -d "$tree/.git" ] || die "no tree build/$name: run 'make build' first"
mkdir -p "$(dirname "$log")" "$out"
: >"$log"
echo "check-series: $name; log: ${log#"$top"/}"

if [ ! -d "$work" ]; then
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$work" base
fi
git -C "$work" am --abort >/dev/null 2>&1 || true
git -C "$work" reset -q --hard base

build() {
	case "$name" in
	linux)
		KCONFIG_LENIENT=1 "$top/scripts/kconfig.sh" "$work" "$out" \
			"$top"/config/*.config &&
			make -C "$work" O="$out" -j"$(nproc)" bzImage modules
		;;
	qemu)
		if [ ! -f "$out/build.ninja" ]; then
			(cd "$out" && "$work/configure" --target-list=x86_64-softmmu \
				--without-default-features --enable-tcg \
				--disable-install-blobs --disable-docs --disable-tools)
		fi
		ninja -C "$out" qemu-system-x86_64
		;;
	esac
}

checkpatch() {
	case "$name" in
	# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is left out: the
	# new files are under entries MAINTAINERS already has (X86 ARCHITECTURE).
	linux) (cd "$work" && ./scripts/checkpatch.pl --strict -q \
		--ignore FILE_PATH_CHANGES "$1") ;;
	qemu) "$work/scripts/checkpatch.pl" -q "$1" ;;
	esac
}

fail=0
n=0
while read -r p; do
	case "$p" in ''|\#*) continue ;; esac
	n=$((n + 1))
	patch=$series_dir/$p
	git -C "$work" -c user.name=uibt -c user.email=uibt@localhost \
		am -q "$patch" >>"$log" 2>&1 || die "$p does not apply; see $log"
	cp=ok
	checkpatch "$patch" >>"$log" 2>&1 || { cp=FAIL; fail=1; }
	start=$SECONDS
	bd=ok
	build >>"$log" 2>&1 || { bd=FAIL; fail=1; }
	printf '%2d  checkpatch %-4s  build %-4s (%3d s)  %s\n' \
		"$n" "$cp" "$bd" "$((SECONDS - start))" "$p"
done <"$series_dir/series"

[ "$n" -gt 0 ] || die "patches/$name/series is empty"
if [ "$fail" -ne 0 ]; then
	die "problems above; details in $log"
fi
echo "check-series: $n patches: each applies, builds and is checkpatch-clean"
