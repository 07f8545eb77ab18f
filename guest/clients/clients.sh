#!/bin/sh
# Real clients of user-mode IBT: programs built with -fcf-protection=branch
# against glibc 2.36 built with --enable-cet (the guest's /lib64, whose
# ld.so manages IBT through ARCH_CET_*), and the same programs run by
# glibc 2.41 (Debian 13's, built --enable-cet as distributions build theirs,
# in /opt/glibc-2.41), which never manages IBT.  KTAP, one result per case.
#
# Each case runs a program (host.c) and checks its report: PR_GET_CFI before
# any of its code ran ("preinit-cfi": 1 on, 2 off, 5 on and locked), the
# values its libraries returned, a SIGSEGV (SEGV_CPERR is 10) at the address
# it was about to call, and IBT's enforcement by experiment at the end.
#
# Where the platform has no user IBT, every case still runs and must exit
# as a program on any kernel does; it is reported as a skip, since it
# checked nothing about IBT.
# shellcheck disable=SC2016,SC2034,SC2317 # conditions are strings for eval
cd "$(dirname "$0")" || exit 1

has_ibt=0
grep -qw user_ibt /proc/cpuinfo && has_ibt=1
n=0
failed=0
out=/tmp/clients.out

echo "KTAP version 1"
echo "1..22"

# run NAME ENV... -- COMMAND...: run it, keep its output in $out, $rc
run() {
	name=$1
	shift
	envs=
	while [ "$1" != -- ]; do
		envs="$envs $1"
		shift
	done
	shift
	echo "# $name: ${envs:+env$envs }$*"
	# shellcheck disable=SC2086 # the environment assignments split
	env $envs timeout 60 "$@" >"$out" 2>&1
	rc=$?
	sed 's/^/#   /' "$out"
}

has() { grep -qx "$1" "$out"; }

# target_addr NAME: the address the program was about to call in NAME
target_addr() { awk -v n="$1" '$1 == "target" && $2 == n { print $3 }' "$out"; }

# cp_at NAME: the program died of #CP at the entry of NAME
cp_at() { [ "$rc" -eq 3 ] && has "sigsegv 10 $(target_addr "$1")"; }

result() {
	n=$((n + 1))
	if [ "$has_ibt" -eq 0 ]; then
		if [ "$rc" -eq 0 ]; then
			echo "ok $n $1 # SKIP no user_ibt: ran (exit $rc), checked nothing about IBT"
		else
			echo "not ok $n $1 # exit $rc without user IBT"
			failed=1
		fi
	elif [ "$2" = ok ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		failed=1
	fi
}

# needs_ibt NAME: true where the platform has user IBT; elsewhere reports
# NAME as skipped without running it (cetcmd --on needs user IBT).
needs_ibt() {
	[ "$has_ibt" -eq 1 ] && return 0
	n=$((n + 1))
	echo "ok $n $1 # SKIP no user_ibt: cetcmd --on needs it"
	return 1
}

# verdict COND...: ok if every condition (a command line, as one string)
# holds, else fail, saying which did not.
verdict() {
	for c in "$@"; do
		if ! eval "$c"; then
			echo "#   expected: $c" >&2
			echo fail
			return
		fi
	done
	echo ok
}

# --- glibc 2.36: its ld.so manages IBT ---------------------------------------

# (a) IBT is on before any code of the program runs: ld.so's first
# ARCH_CET_STATUS turned the armed IBT on, and ld.so locked it.
run glibc236_ibt_on_before_program_code -- ./host-236
result glibc236_ibt_on_before_program_code "$(verdict 'has "preinit-cfi 5"' \
	'has "enforced 1"')"

run glibc236_dlopen_marked_loads -- ./host-236 dlopen:./plugin-marked.so
result glibc236_dlopen_marked_loads "$(verdict \
	'has "plugin ./plugin-marked.so 42"' 'has "end-cfi 5"' 'has "enforced 1"')"

# glibc refuses an unmarked plugin while IBT is on and locked.
run glibc236_dlopen_unmarked_refused -- ./host-236 dlopen:./plugin-unmarked.so
result glibc236_dlopen_unmarked_refused "$(verdict \
	'grep -q "^dlopen-failed ./plugin-unmarked.so .*rebuild shared object with IBT support enabled" "$out"' \
	'has "end-cfi 5"' 'has "enforced 1"')"

# glibc.cpu.x86_ibt=permissive: not locked, and the unmarked plugin turns
# IBT off and loads.
run glibc236_dlopen_unmarked_permissive GLIBC_TUNABLES=glibc.cpu.x86_ibt=permissive \
	-- ./host-236 dlopen:./plugin-unmarked.so
result glibc236_dlopen_unmarked_permissive "$(verdict 'has "preinit-cfi 1"' \
	'has "plugin ./plugin-unmarked.so 42"' 'has "end-cfi 2"' \
	'has "enforced 0"')"

# An unmarked DT_NEEDED library: ld.so turns IBT off at start-up, before
# any code of the program runs, and locks it off.
run glibc236_needed_unmarked_off_at_startup -- ./host-236-needed needed
result glibc236_needed_unmarked_off_at_startup "$(verdict \
	'has "preinit-cfi 6"' 'has "needed 7"' 'has "enforced 0"')"

# glibc.cpu.x86_ibt=on keeps IBT on anyway: the call into the library is
# stopped at its entry.
run glibc236_needed_unmarked_ibt_on_stopped GLIBC_TUNABLES=glibc.cpu.x86_ibt=on \
	-- ./host-236-needed needed
result glibc236_needed_unmarked_ibt_on_stopped "$(verdict \
	'has "preinit-cfi 5"' 'cp_at needed_value')"

# glibc.cpu.x86_ibt=off: off at start-up, and locked off.
run glibc236_ibt_off_tunable GLIBC_TUNABLES=glibc.cpu.x86_ibt=off -- ./host-236
result glibc236_ibt_off_tunable "$(verdict 'has "preinit-cfi 6"' \
	'has "enforced 0"')"

# (b) a static marked program gets IBT at exec (and its start-up code,
# glibc's static ARCH_CET_STATUS, locks it).
run glibc236_static_ibt_at_exec -- ./host-236-static
result glibc236_static_ibt_at_exec "$(verdict 'has "preinit-cfi 5"' \
	'has "enforced 1"')"

# The dynamic linker run as a program (ET_DYN, no interpreter) is armed
# too, and its first ARCH_CET_STATUS turns IBT on, as for ./host-236.
run glibc236_ldso_as_program -- /lib64/ld-linux-x86-64.so.2 ./host-236
result glibc236_ldso_as_program "$(verdict 'has "preinit-cfi 5"' \
	'has "enforced 1"')"

# --- glibc 2.41: today's distributions; it never manages IBT ------------------

# A marked program of a marked ld.so that loads an unmarked plugin or
# library runs, as it does on every kernel without user IBT.
run glibc241_dlopen_unmarked_runs -- ./host-241 dlopen:./plugin-unmarked.so
result glibc241_dlopen_unmarked_runs "$(verdict 'has "preinit-cfi 2"' \
	'has "plugin ./plugin-unmarked.so 42"' 'has "enforced 0"')"

run glibc241_needed_unmarked_runs -- ./host-241-needed needed
result glibc241_needed_unmarked_runs "$(verdict 'has "preinit-cfi 2"' \
	'has "needed 7"' 'has "enforced 0"')"

# Run as a program, glibc 2.41's dynamic linker is armed and never claims:
# the unmarked plugin of the marked program loads and runs.
run glibc241_ldso_as_program -- /opt/glibc-2.41/lib64/ld-linux-x86-64.so.2 \
	./host-241 dlopen:./plugin-unmarked.so
result glibc241_ldso_as_program "$(verdict 'has "preinit-cfi 2"' \
	'has "plugin ./plugin-unmarked.so 42"' 'has "enforced 0"')"

# (c) cetcmd --on (CET_EXEC_ALWAYS_ON) still forces IBT at exec: a marked
# plugin loads and runs, the unmarked one is stopped at its entry.
if needs_ibt glibc241_always_on_enforced; then
	run glibc241_always_on_enforced -- /tests/bin/cetcmd --on -- ./host-241 \
		dlopen:./plugin-marked.so dlopen:./plugin-unmarked.so
	result glibc241_always_on_enforced "$(verdict 'has "preinit-cfi 1"' \
		'has "plugin ./plugin-marked.so 42"' 'cp_at ./plugin-unmarked.so')"
fi

if needs_ibt glibc241_always_on_needed_stopped; then
	run glibc241_always_on_needed_stopped -- /tests/bin/cetcmd --on -- \
		./host-241-needed needed
	result glibc241_always_on_needed_stopped "$(verdict 'has "preinit-cfi 1"' \
		'cp_at needed_value')"
fi

# The marked program alone, without the policy: IBT stays armed, off.
run glibc241_marked_no_policy_off -- ./host-241
result glibc241_marked_no_policy_off "$(verdict 'has "preinit-cfi 2"' \
	'has "enforced 0"')"

# --- Lua 5.4 from Debian's source, built -fcf-protection=branch ----------------
# A real program whose C modules are dlopen()ed and called through pointers.
# work.lua must print on the guest what the same lua-236 printed on the
# build machine, without IBT (lua/expected).
want_work=$(cat lua/expected)

run lua236_workload -- ./lua-236 lua/work.lua
result lua236_workload "$(verdict 'has "$want_work"')"

run lua236_module_marked_loads -- ./lua-236 lua/load.lua ./lua/mod-marked.so
result lua236_module_marked_loads "$(verdict 'has "value 42"')"

run lua236_module_unmarked_refused -- ./lua-236 lua/load.lua ./lua/mod-unmarked.so
result lua236_module_unmarked_refused "$(verdict \
	'grep -q "^loadlib-failed .*rebuild shared object with IBT support enabled" "$out"')"

run lua236_module_unmarked_permissive GLIBC_TUNABLES=glibc.cpu.x86_ibt=permissive \
	-- ./lua-236 lua/load.lua ./lua/mod-unmarked.so
result lua236_module_unmarked_permissive "$(verdict 'has "value 42"')"

run lua241_module_unmarked_loads -- ./lua-241 lua/load.lua ./lua/mod-unmarked.so
result lua241_module_unmarked_loads "$(verdict 'has "value 42"')"

# Under cetcmd --on the whole VM runs with IBT enforced: the workload gives
# the same answer, and the unmarked module dies at its first call.
if needs_ibt lua241_always_on_workload; then
	run lua241_always_on_workload -- /tests/bin/cetcmd --on -- ./lua-241 lua/work.lua
	result lua241_always_on_workload "$(verdict 'has "$want_work"')"
fi

if needs_ibt lua241_always_on_module_unmarked_killed; then
	run lua241_always_on_module_unmarked_killed -- /tests/bin/cetcmd --on -- \
		./lua-241 lua/load.lua ./lua/mod-unmarked.so
	result lua241_always_on_module_unmarked_killed "$(verdict '[ "$rc" -eq 139 ]' \
		'! has "value 42"')"
fi

rm -f "$out"
exit "$failed"
