#!/bin/bash
# Mutation testing of the kernel series (make mutate; not part of make test).
# Each patch in mutants/linux breaks one promise of
# Documentation/arch/x86/ibt.rst; applied on top of the series, built, and
# booted on qemu-ibt (also with nouseribt and with ibt=off) with the
# suite, it must be "killed": at least one test fails.  See
# mutants/README.md.
#
# Usage: mutate.sh [MUTANT...]    MUTANT: NN or NN-name (default: all)
#
#   build/mutate-linux      a git worktree of build/linux at its HEAD, reset
#                           (checkout -f, clean -fd) before each mutant
#   build/mutate-kbuild     one kernel build folder, configured like the test
#                           kernel, built incrementally from mutant to mutant
#   build/mutate-guest      the guest (initramfs) of the mutated tree
#   build/logs-mutate/NAME/ apply.log, kernel.log, guest.log, harness.log,
#                           PLATFORM/console.log and results.txt, result
#   build/logs-mutate/results.md   the table of this run
#   mutants/linux/results.tsv      every result, kept in the repository
#
# First the unmutated tree runs the same way (build/logs-mutate/baseline):
# if the suite fails without a mutant, killing one proves nothing.
# Results are recorded per mutant with the series (build/linux's tree), the
# patch and the test set-up they were obtained with, in the mutant's log
# folder and in mutants/linux/results.tsv: a rerun skips what is recorded,
# also in a later session whose build/ is new, as long as those three are
# the same.  Commit results.tsv with the work it speaks of.
#
# A mutant is booted first on qemu-ibt with only the programs its header
# names (uibt.only=): one of its named tests failing there is a kill.
# Otherwise it boots as the baseline did, the whole suite on the three
# platforms.  MUTATE_FULL=1 always boots the whole suite.
#
# Environment: MUTATE_FORCE=1 reruns recorded mutants; MUTATE_BASELINE=0
# skips the baseline; MUTATE_JOBS (default: nproc) for the kernel build.
# Kernel builds go through ccache where it is installed (make deps): each
# mutant's files are compiled again once it is reset, from the cache.
#
# A mutant killed by tests other than those its header names is booted a
# second time, and counts as killed only if a same test fails on the same
# platform again ("unconfirmed" otherwise: a flaky test is no kill).
#
# Exit status: 0 if every mutant was killed (mutants declared equivalent on
# this platform aside), 1 if one survived, was unconfirmed or was invalid
# (did not apply or did not build), 2 if the run could not be set up.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
tree=$top/build/linux
wt=$top/build/mutate-linux
kout=$top/build/mutate-kbuild
kout_debug=$top/build/mutate-kbuild-debug
guest=$top/build/mutate-guest
logs=$top/build/logs-mutate
mdir=$top/mutants/linux
store=$mdir/results.tsv
jobs=${MUTATE_JOBS:-$(nproc)}
platforms_src=${UIBT_PLATFORMS:-$top/harness/platforms.json}
platforms=$logs/platforms.json
kcc=gcc
command -v ccache >/dev/null && kcc="ccache gcc"

die() { echo "mutate: $*" >&2; exit 2; }
rel() { echo "${1#"$top"/}"; }
git_wt() { git -C "$wt" "$@"; }

# --- the mutants ---------------------------------------------------------------
# Line 1 of a mutant: "# breaks: PROMISE | killer: KILLER", KILLER being
#   prog:test[, prog:test...]      tests of guest/tests expected to fail
#   build: TEXT                    the build must fail, saying TEXT
#   debug-build: TEXT              the build of make test-debug's kernel
#                                  (config/debug.config: no X86_KERNEL_IBT)
#                                  must fail, saying TEXT; only its vDSO is
#                                  built, where that kernel's build checks
#                                  what such a mutant breaks
#   none: equivalent ...           cannot be killed on this platform
#   none: needs test ...           a known gap of the suite
header() {
	local line
	IFS= read -r line <"$1" || true
	case "$line" in
	'# breaks: '*' | killer: '*) printf '%s\n' "$line" ;;
	*) return 1 ;;
	esac
}
promise_of() {
	local h=${1#\# breaks: }
	printf '%s\n' "${h%% | killer: *}"
}
killer_of() { printf '%s\n' "${1##* | killer: }"; }
kind_of() {
	case "$1" in
	'none: equivalent'*) echo equivalent ;;
	none:*) echo gap ;;
	build:*) echo build ;;
	debug-build:*) echo debug-build ;;
	*) echo suite ;;
	esac
}

[ -d "$mdir" ] || die "no folder $(rel "$mdir")"
mapfile -t all < <(find "$mdir" -maxdepth 1 -name '[0-9]*.patch' -printf '%f\n' | sort)
[ "${#all[@]}" -gt 0 ] || die "no mutants in $(rel "$mdir")"

selected=()
if [ "$#" -eq 0 ]; then
	selected=("${all[@]}")
else
	for want in "$@"; do
		want=${want%.patch}
		found=
		for p in "${all[@]}"; do
			n=${p%.patch}
			if [ "$n" = "$want" ] || [ "${n%%-*}" = "$want" ]; then
				found=$p
			fi
		done
		[ -n "$found" ] || die "no mutant '$want' in $(rel "$mdir")"
		selected+=("$found")
	done
fi
for p in "${selected[@]}"; do
	header "$mdir/$p" >/dev/null ||
		die "$p: line 1 must be '# breaks: PROMISE | killer: KILLER'"
done

# --- set-up --------------------------------------------------------------------
[ -d "$tree/.git" ] || die "no tree build/linux: run 'make build' first"
mkdir -p "$logs"
exec 9>"$logs/.lock"
flock -n 9 || die "another mutation run holds $(rel "$logs")/.lock"

head=$(git -C "$tree" rev-parse --verify HEAD) || die "build/linux has no HEAD"
# The series as content: the same in every session that applies it.  The
# tree without Documentation/, which neither the kernel nor the tests read:
# a change to ibt.rst alone keeps the results.
git -C "$tree" rev-parse --verify -q 'HEAD^{tree}' >/dev/null || die "build/linux has no tree"
series=$(git -C "$tree" ls-tree HEAD | grep -v $'\tDocumentation$' | git -C "$tree" mktree)

# The test kernel's fragments (as make test: all but the debug kernel's).
fragments=()
for f in "$top"/config/*.config; do
	[ "$f" = "$top/config/debug.config" ] || fragments+=("$f")
done

# What else decides a result: the guest, the harness, the configuration.
setup_hash=$(cd "$top" && find guest harness config scripts/guest.sh scripts/kconfig.sh \
	-type f ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha1sum |
	sha1sum | cut -c1-12)

# A worktree of build/linux; recreated if it is not one any more (after
# build/linux was made again, say).  It is this script's scratch folder.
setup_worktree() {
	local top_dir common
	if [ -e "$wt" ]; then
		top_dir=$(git -C "$wt" rev-parse --show-toplevel 2>/dev/null || true)
		common=$(git -C "$wt" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
		if [ "$(realpath -m "${top_dir:-/nonexistent}")" != "$(realpath -m "$wt")" ] ||
			[ "$(realpath -m "${common:-/nonexistent}")" != "$(realpath -m "$tree/.git")" ]; then
			echo "mutate: $(rel "$wt") is not a worktree of build/linux: making it again"
			rm -rf "$wt"
		fi
	fi
	if [ ! -e "$wt" ]; then
		git -C "$tree" worktree prune
		git -C "$tree" worktree add -q --detach "$wt" "$head"
	fi
}

reset_worktree() {
	git_wt checkout -q -f --detach "$head"
	git_wt clean -q -fd
}

# Configure a build folder (build/mutate-kbuild like the test kernel,
# build/mutate-kbuild-debug like make test-debug's) with the given
# fragments, again when they, kconfig.sh or the tree's HEAD changed.
configure() {
	local dir=$1 f again='' stamp=$1/.mutate-head
	shift
	if [ ! -f "$dir/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$head" ]; then
		again=1
	fi
	for f in "$@" "$top/scripts/kconfig.sh"; do
		[ "$f" -nt "$dir/.config" ] && again=1
	done
	[ -n "$again" ] || return 0
	echo "mutate: configuring $(rel "$dir") (log: $(rel "$logs")/kconfig.log)"
	if ! "$top/scripts/kconfig.sh" "$wt" "$dir" "$@" >"$logs/kconfig.log" 2>&1; then
		tail -20 "$logs/kconfig.log" >&2
		die "kernel configuration failed; log: $(rel "$logs")/kconfig.log"
	fi
	echo "$head" >"$stamp"
}

# qemu-ibt, and the same CPU booted with nouseribt and with ibt=off (for
# the mutants of the boot options), each with its Linux suite only: the
# instruction-level image (cet-insn) does not run the kernel, so no mutant
# can change its results.
mutate_platforms=(qemu-ibt qemu-ibt-nouseribt qemu-ibt-ibtoff)
write_platforms() {
	python3 - "$platforms_src" "$platforms" "${mutate_platforms[@]}" <<'EOF'
import json
import sys

with open(sys.argv[1]) as f:
    plats = json.load(f)
out = {}
for name in sys.argv[3:]:
    out[name] = plats[name]
    out[name]["suites"] = ["linux"]
    like = plats[name].get("like")
    if like and like not in out:
        out[like] = plats[like]
        out[like]["default"] = False
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=2)
EOF
}

echo "mutate: ${#selected[@]} mutant(s) on build/linux $(git -C "$tree" log -1 --format='%h %s' "$head")"
echo "mutate: worktree $(rel "$wt"), build $(rel "$kout"), logs $(rel "$logs")"
setup_worktree
reset_worktree
trap 'reset_worktree >/dev/null 2>&1 || true' EXIT
configure "$kout" "${fragments[@]}"
write_platforms || die "cannot read ${mutate_platforms[*]} from $platforms_src"

# --- one run: build, guest, suite ------------------------------------------------
# The outcome goes to these globals.
outcome=''	# build-failed, guest-failed, passed, failed, harness-error
failed=''		# the failing tests, one a line ("prog: test")
harness_rc=0

# The kernel and the guest of the worktree as it is; outcome is set on a
# failure only.
build_kernel_guest() {
	local dir=$1
	outcome=''
	echo "  building the kernel (log: $(rel "$dir")/kernel.log)"
	if ! make -C "$wt" O="$kout" CC="$kcc" -j"$jobs" bzImage modules >"$dir/kernel.log" 2>&1; then
		outcome='build-failed'
		return 0
	fi
	echo "  building the guest (log: $(rel "$dir")/guest.log)"
	if ! "$top/scripts/guest.sh" "$wt" "$kout" "$guest" >"$dir/guest.log" 2>&1; then
		cat "$guest/build.log" >>"$dir/guest.log" 2>/dev/null || true
		outcome='guest-failed'
		return 0
	fi
	cat "$guest/build.log" >>"$dir/guest.log" 2>/dev/null || true
}

# Build, then boot: with a list of programs, first qemu-ibt with only those
# (where they pass alone on the baseline), then, unless that failed, the
# whole suite.
build_and_test() {
	local dir=$1 only=${2:-}
	failed=''
	harness_rc=0
	build_kernel_guest "$dir"
	[ -z "$outcome" ] || return 0
	if [ -n "$only" ] && baseline_only "$only"; then
		boot_suite "$dir/only" "$only"
		[ "$outcome" = failed ] && return 0
		echo "  no named test failed there: the whole suite"
	fi
	boot_suite "$dir"
}

# Boot the built kernel and guest with the suite, logs in dir; sets outcome
# and failed ("PLATFORM: prog: test" lines: which platform failed matters
# when the same test passes on another).  With a second argument, a list
# of programs: boot qemu-ibt only, running only those.
boot_suite() {
	local dir=$1 only=${2:-} plats what
	local -a sel=()
	failed=''
	harness_rc=0
	mkdir -p "$dir"
	plats=$(IFS=,; echo "${mutate_platforms[*]}") what="the suite"
	if [ -n "$only" ]; then
		plats=qemu-ibt what="only $only"
		sel=(--only "$only")
	fi
	echo "  booting $plats with $what (consoles:" \
		"$(rel "$dir")/PLATFORM/console.log, harness: $(rel "$dir")/harness.log)"
	(cd "$top" && UIBT_KOUT="${boot_kout:-$kout}" UIBT_GUEST="${boot_guest:-$guest}" \
		UIBT_LOGS="$dir" UIBT_PLATFORMS="$platforms" \
		python3 harness/uibt.py test --platforms "$plats" "${sel[@]}") \
		>"$dir/harness.log" 2>&1 || harness_rc=$?
	# The kernel check (harness/endbr.py) reports as platform "kernel".
	failed=$(sed -n 's/^  \(qemu-ibt[a-z0-9-]*\|kernel\): FAIL  /\1: /p' "$dir/harness.log" |
		sed 's/  (.*$//' | sort -u)
	if [ "$harness_rc" -eq 0 ]; then
		outcome=passed
	elif [ "$harness_rc" -eq 1 ] && [ -n "$failed" ]; then
		outcome=failed
	else
		outcome='harness-error'
	fi
}

# The failures of two runs that are the same test on the same platform.
common_failures() {
	comm -12 <(printf '%s\n' "$1" | sed '/^$/d' | sort -u) \
		<(printf '%s\n' "$2" | sed '/^$/d' | sort -u)
}

# A debug-build mutant: make test-debug's kernel configuration, its vDSO
# only (the build checks each exported function's landing pad there).
debug_build() {
	local dir=$1
	failed=''
	harness_rc=0
	configure "$kout_debug" "${fragments[@]}" "$top/config/debug.config"
	echo "  building the debug kernel's vDSO (log: $(rel "$dir")/kernel-debug.log)"
	if make -C "$wt" O="$kout_debug" CC="$kcc" -j"$jobs" arch/x86/entry/vdso/ \
		>"$dir/kernel-debug.log" 2>&1; then
		outcome=passed
	else
		outcome=build-failed
	fi
}

# A result file per run: key, status, detail, failed (one line, "; ").
field() {
	[ -f "$1/result" ] || return 0
	sed -n "s/^$2=//p" "$1/result" | head -1
}
record() {
	local dir=$1 failed
	failed=$(printf '%s\n' "$5" | sed '/^$/d' | paste -sd';' | sed 's/;/; /g')
	{
		echo "key=$2"
		echo "status=$3"
		echo "detail=$4"
		echo "failed=$failed"
	} >"$dir/result.tmp"
	mv "$dir/result.tmp" "$dir/result"
	store_put "${dir##*/}" "$2" "$3" "$4" "$failed"
}
# mutants/linux/results.tsv: NAME, key, status, detail, failed; a line a
# mutant (and the baseline), the newest result.
store_put() {
	local tmp=$store.tmp
	{
		[ -f "$store" ] && awk -F'\t' -v n="$1" '$1 != n' "$store"
		printf '%s\t%s\t%s\t%s\t%s\n' "$@"
	} | LC_ALL=C sort >"$tmp"
	mv "$tmp" "$store"
}
# A result recorded in the mutant's folder, or else in results.tsv (then
# written to the folder, where the table reads it).
recorded() {
	local dir=$1 key=$2 line
	[ -z "${MUTATE_FORCE:-}" ] || return 1
	if [ "$(field "$dir" key)" = "$key" ] && [ -n "$(field "$dir" status)" ]; then
		return 0
	fi
	[ -f "$store" ] || return 1
	line=$(awk -F'\t' -v n="${dir##*/}" -v k="$key" '$1 == n && $2 == k' "$store" | head -1)
	[ -n "$line" ] || return 1
	mkdir -p "$dir"
	printf '%s\n' "$line" | awk -F'\t' '{
		print "key=" $2; print "status=" $3; print "detail=" $4; print "failed=" $5 }' \
		>"$dir/result"
}

# --- the baseline --------------------------------------------------------------
# Its kernel and guest are kept (baseline/kout, baseline/guest) for the
# boots with only a mutant's named programs, which must pass there first.
base_kout=$logs/baseline/kout
base_guest=$logs/baseline/guest
baseline() {
	local dir=$logs/baseline key="$series none $setup_hash" start=$SECONDS
	local keep=''
	recorded "$dir" "$key" && [ "$(field "$dir" status)" = passed ] && keep=1
	if [ -n "$keep" ] && [ "$(cat "$dir/built" 2>/dev/null)" = "$key" ]; then
		echo "mutate: baseline: passed (recorded)"
		return 0
	fi
	mkdir -p "$dir"
	echo "mutate: baseline: the series without a mutant"
	reset_worktree
	build_kernel_guest "$dir"
	[ -z "$outcome" ] || die "the series does not build without a mutant ($outcome); see $(rel "$dir")"
	rm -rf "$base_kout" "$base_guest"
	mkdir -p "$base_kout/arch/x86/boot" "$base_guest/root/etc/uibt"
	cp "$kout/arch/x86/boot/bzImage" "$base_kout/arch/x86/boot/"
	cp "$guest/initramfs.cpio.gz" "$base_guest/"
	cp "$guest/root/etc/uibt/tests" "$base_guest/root/etc/uibt/"
	echo "$key" >"$dir/built"
	if [ -n "$keep" ]; then
		echo "mutate: baseline: passed (recorded; kernel and guest built again)"
		return 0
	fi
	boot_suite "$dir"
	record "$dir" "$key" "$outcome" "" "$failed"
	echo "  baseline: $outcome ($((SECONDS - start)) s)"
	[ "$(field "$dir" status)" = passed ] ||
		die "the suite does not pass without a mutant ($(field "$dir" status): $(field "$dir" failed)); see $(rel "$dir")"
}

# Do these programs (comma-separated) pass alone on qemu-ibt without a
# mutant?  Only then is their failing alone with one a kill.  Recorded
# like a mutant, as baseline-only-PROGRAMS.
baseline_only() {
	local only=$1 name dir key
	name=baseline-only-$(printf '%s' "$only" | tr '/,.' '_+_')
	dir=$logs/$name key="$series only:$only $setup_hash"
	if ! recorded "$dir" "$key"; then
		if [ "$(cat "$logs/baseline/built" 2>/dev/null)" != "$series none $setup_hash" ]; then
			echo "  no baseline kernel of this series to boot $only alone on: the whole suite"
			return 1
		fi
		rm -rf "$dir"
		mkdir -p "$dir"
		echo "  the baseline with only $only (must pass)"
		boot_kout=$base_kout boot_guest=$base_guest boot_suite "$dir" "$only"
		record "$dir" "$key" "$outcome" "" "$failed"
	fi
	[ "$(field "$dir" status)" = passed ] && return 0
	echo "  $only does not pass alone on the baseline ($(field "$dir" status)): the whole suite"
	return 1
}

# --- a mutant ------------------------------------------------------------------
run_mutant() {
	local p=$1 name=${1%.patch} dir=$logs/${1%.patch} hdr killer kind key sum
	local start=$SECONDS status detail
	hdr=$(header "$mdir/$p")
	killer=$(killer_of "$hdr")
	kind=$(kind_of "$killer")
	sum=$(sha1sum <"$mdir/$p" | cut -c1-40)
	key="$series $sum $setup_hash"
	if recorded "$dir" "$key"; then
		echo "mutate: $name: $(field "$dir" status) (recorded; MUTATE_FORCE=1 reruns it)"
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "mutate: $name: breaks: $(promise_of "$hdr")"
	reset_worktree
	if ! git_wt apply "$mdir/$p" >"$dir/apply.log" 2>&1; then
		record "$dir" "$key" invalid "does not apply (apply.log)" ""
		echo "  $name: invalid: does not apply (log: $(rel "$dir")/apply.log)"
		return 0
	fi
	if [ "$kind" = debug-build ]; then
		debug_build "$dir"
	elif [ "$kind" = suite ] && [ -z "${MUTATE_FULL:-}" ]; then
		build_and_test "$dir" "$(killer_programs "$killer")"
	else
		build_and_test "$dir"
	fi
	case "$outcome" in
	build-failed)
		if [ "$kind" = build ] && grep -qF -- "${killer#build: }" "$dir/kernel.log"; then
			status=killed detail="by the build: ${killer#build: }"
		elif [ "$kind" = debug-build ] &&
			grep -qF -- "${killer#debug-build: }" "$dir/kernel-debug.log"; then
			status=killed detail="by the debug kernel's build: ${killer#debug-build: }"
		else
			status=invalid detail="the kernel does not build (kernel.log)"
		fi ;;
	guest-failed)
		status=invalid detail="the guest does not build (guest.log)" ;;
	harness-error)
		status=invalid
		detail="the harness could not judge, exit status $harness_rc (harness.log)" ;;
	failed)
		status=killed detail="by the suite"
		# A kill by tests other than the named ones may be a flaky test
		# (three boots per mutant triple that chance): boot again, and
		# count it only if a same test fails on the same platform again.
		if [ "$kind" = suite ] && ! expected_hit "$killer" "$(printf '%s\n' "$failed" | paste -sd';' | sed 's/;/; /g')"; then
			local first=$failed
			echo "  not killed by the expected test; booting again to confirm"
			boot_suite "$dir/again"
			failed=$(common_failures "$first" "$failed")
			if [ -n "$failed" ]; then
				detail="by the suite, not the expected test, the same failure twice (again/)"
			else
				status=unconfirmed
				detail="a failure that did not repeat (again/): flaky, or a race"
				failed=$first
			fi
		fi ;;
	passed)
		status=survived detail="the suite passes" ;;
	esac
	record "$dir" "$key" "$status" "$detail" "$failed"
	echo "  $name: $status, $detail ($((SECONDS - start)) s; logs: $(rel "$dir"))"
	if [ -n "$failed" ]; then
		printf '%s\n' "$failed" | head -3 | sed 's/^/    FAIL  /'
	fi
}

# --- the table ---------------------------------------------------------------------
# The programs of a killer "prog:test, prog:test", comma-separated, once each
killer_programs() {
	local k
	local -a ks
	IFS=',' read -ra ks <<<"$1"
	for k in "${ks[@]}"; do
		k=${k# }
		printf '%s\n' "${k%%:*}"
	done | awk '!seen[$0]++' | paste -sd,
}

# Did one of the expected tests fail?  killer: "prog:test, prog:test"
expected_hit() {
	local killer=$1 failed=$2 k
	local -a ks
	IFS=',' read -ra ks <<<"$killer"
	for k in "${ks[@]}"; do
		k=${k# }
		k="${k%%:*}: ${k#*:}"
		# "PLATFORM: prog: test", or "prog: test" in an older record
		case "; $failed;" in
		*" $k;"*) return 0 ;;
		esac
	done
	return 1
}

md() { printf '%s' "$1" | sed 's/|/\\|/g'; }

table() {
	local p name dir hdr killer kind status shown first
	echo "# Mutation run"
	echo
	echo "build/linux at $head (tree $series); $(date -u '+%Y-%m-%d %H:%M UTC'); qemu-ibt, also booted with nouseribt and with ibt=off; Linux suite; a mutant whose named tests fail in a first boot with only their programs is not booted again."
	echo
	echo "| mutant | result | expected killer | first failing tests |"
	echo "|---|---|---|---|"
	for p in "${selected[@]}"; do
		name=${p%.patch}
		dir=$logs/$name
		hdr=$(header "$mdir/$p")
		killer=$(killer_of "$hdr")
		kind=$(kind_of "$killer")
		status=$(field "$dir" status)
		shown=${status:-not run}
		case "$status/$kind" in
		survived/equivalent) shown="survived (equivalent)" ;;
		survived/gap) shown="survived (known gap)" ;;
		killed/suite)
			if expected_hit "$killer" "$(field "$dir" failed)"; then
				shown="killed"
			else
				shown="killed (not by the expected test)"
			fi ;;
		killed/build) shown="killed (build)" ;;
		killed/debug-build) shown="killed (debug kernel's build)" ;;
		killed/*) shown="killed (expected to survive)" ;;
		unconfirmed/*) shown="unconfirmed: failed once, passed when booted again" ;;
		invalid/*) shown="invalid: $(field "$dir" detail)" ;;
		esac
		case "$kind" in
		equivalent) killer="none (equivalent here, see the patch)" ;;
		gap) killer="none (needs a new test, see the patch)" ;;
		esac
		first=$(field "$dir" failed | cut -d';' -f1-3)
		echo "| $name | $(md "$shown") | $(md "$killer") | $(md "$first") |"
	done
}

count() {
	local p status kind
	killed=0 survived=0 invalid=0 equivalent=0 missing=0 unconfirmed=0
	for p in "${selected[@]}"; do
		status=$(field "$logs/${p%.patch}" status)
		kind=$(kind_of "$(killer_of "$(header "$mdir/$p")")")
		case "$status" in
		killed) killed=$((killed + 1)) ;;
		survived)
			if [ "$kind" = equivalent ]; then
				equivalent=$((equivalent + 1))
			else
				survived=$((survived + 1))
			fi ;;
		invalid) invalid=$((invalid + 1)) ;;
		unconfirmed) unconfirmed=$((unconfirmed + 1)) ;;
		*) missing=$((missing + 1)) ;;
		esac
	done
}

# --- main ----------------------------------------------------------------------
[ "${MUTATE_BASELINE:-1}" = 0 ] || baseline
i=0
for p in "${selected[@]}"; do
	i=$((i + 1))
	echo "mutate: [$i/${#selected[@]}]"
	run_mutant "$p"
done
reset_worktree

table >"$logs/results.md"
echo
cat "$logs/results.md"
count
echo
echo "mutate: $killed killed, $survived survived, $unconfirmed unconfirmed, $invalid invalid," \
	"$equivalent equivalent (survived, as declared), of ${#selected[@]}; table: $(rel "$logs")/results.md"
[ "$survived" -eq 0 ] && [ "$invalid" -eq 0 ] && [ "$missing" -eq 0 ] && [ "$unconfirmed" -eq 0 ]
