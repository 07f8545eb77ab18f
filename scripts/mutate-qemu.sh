#!/bin/bash
# Mutation run of patches/qemu.  Each mutant in mutants/qemu is a small patch
# on top of the series that breaks one rule of the emulation.  It is built
# incrementally in a scratch worktree of build/qemu and judged by the
# instruction-level test image (tests/cet-insn) on qemu-ibt's CPU, booted
# twice, with 4-level and with 5-level paging: it must be killed, at least
# one test failing or the image not finishing.  The series itself, built the
# same way first, must pass every test; else the run stops.
#
# Usage: mutate-qemu.sh [NN ...]    (default: every mutant)
# Needs: build/qemu and build/cet-insn/cet-insn.elf (make qemu insn).
# Results: build/logs-mutate-qemu/results.md, a folder per mutant with the
# build log and both consoles.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/qemu
work=$top/build/mutate-qemu
out=$top/build/mutate-qemu-build
logs=$top/build/logs-mutate-qemu
elf=$top/build/cet-insn/cet-insn.elf

die() { echo "mutate-qemu: $*" >&2; exit 1; }
rel() { echo "${1#"$top"/}"; }

[ -d "$src/.git" ] || die "no build/qemu: run 'make qemu' first"
[ -f "$elf" ] || die "no $(rel "$elf"): run 'make insn' first"
cpu=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["qemu-ibt"]["cpu"])' "$top/harness/platforms.json")

mutants=()
if [ $# -eq 0 ]; then
	mutants=("$top"/mutants/qemu/*.patch)
else
	for n in "$@"; do
		m=("$top/mutants/qemu/$n"-*.patch)
		[ -f "${m[0]}" ] || die "no mutant $n in mutants/qemu"
		mutants+=("${m[0]}")
	done
fi

head=$(git -C "$src" rev-parse HEAD)
if [ ! -d "$work" ]; then
	git -C "$src" worktree prune
	git -C "$src" worktree add -q --detach "$work" "$head"
fi
mkdir -p "$out" "$logs"

# A TCG-only emulator, as scripts/qemu-build.sh builds it, without the
# extras (9p, plugins) that cet-insn does not need.
build() {
	if [ ! -f "$out/build.ninja" ]; then
		(cd "$out" && nice -n 10 "$work/configure" \
			--target-list=x86_64-softmmu --without-default-features \
			--enable-tcg --disable-install-blobs --disable-docs \
			--disable-tools --disable-werror) || return
	fi
	nice -n 10 ninja -C "$out" qemu-system-x86_64
}

# Boot the image with extra command-line tokens; print the failed tests,
# or "(no result)" if the image did not finish.
insn() {
	local console=$1 tokens=$2
	timeout 300 "$out/qemu-system-x86_64" -nodefaults -accel tcg -cpu "$cpu" \
		-no-reboot -L /usr/share/seabios -L /usr/share/qemu -nic none \
		-m 64 -kernel "$elf" -append "platform=qemu-ibt $tokens" \
		-display none -monitor none -serial "file:$console" || true
	if ! grep -q '^cet-insn: done' "$console"; then
		echo "(no result)"
		return
	fi
	sed -n 's/^not ok [0-9]* \([a-z0-9_]*\).*/\1/p' "$console"
}

# Build the tree as it is and boot it twice; print the failures.
judge() {
	local dir=$1
	if ! build >"$dir/build.log" 2>&1; then
		echo "(build failed)"
		return
	fi
	insn "$dir/console-4level.log" ""
	insn "$dir/console-la57.log" "cet-insn.la57"
}

echo "mutate-qemu: build/qemu at ${head:0:12}; the series first, then ${#mutants[@]} mutants; logs: $(rel "$logs")"
git -C "$work" reset -q --hard "$head"
mkdir -p "$logs/series"
echo "  the series (a cold build takes about 8 minutes)"
failed=$(judge "$logs/series")
[ -z "$failed" ] || die "the series itself fails: $failed (see $(rel "$logs")/series)"

results=$logs/results.md
{
	echo "# patches/qemu mutants, $(date -u '+%Y-%m-%d %H:%M UTC'), build/qemu at ${head:0:12}"
	echo
	echo "| mutant | result | failing tests (4-level and 5-level boots) |"
	echo "|---|---|---|"
} >"$results"
killed=0 survived=0
for m in "${mutants[@]}"; do
	name=$(basename "$m" .patch)
	dir=$logs/$name
	mkdir -p "$dir"
	git -C "$work" reset -q --hard "$head"
	git -C "$work" apply "$m" || die "$name does not apply to build/qemu"
	echo "  $name: building and booting cet-insn"
	failed=$(judge "$dir" | sort -u | tr '\n' ' ')
	if [ -n "$failed" ]; then
		result=killed
		killed=$((killed + 1))
	else
		result=SURVIVED
		survived=$((survived + 1))
	fi
	echo "  $name: $result ${failed:+($failed)}"
	echo "| $name | $result | ${failed:--} |" >>"$results"
done
# Leave the scratch tree as the series, so the next run builds little.
git -C "$work" reset -q --hard "$head"
echo "mutate-qemu: $killed killed, $survived survived; table: $(rel "$results")"
[ "$survived" -eq 0 ]
