#!/bin/sh
# Kernel IBT tests (DESIGN.md section 2): the boot detected IBT and its
# selftest passed; indirect calls to a module function without ENDBR and to
# a sealed, non-exported kernel function are reported as "Missing ENDBR"
# (the guest boots with ibt=warn, so the kernel carries on); an indirect call
# to an exported function that starts with ENDBR is not.
# Needs a CPU with IBT and a kernel built with X86_KERNEL_IBT: without
# either, every test skips.

# Sealed in our test kernels: global, never address-taken, harmless to call.
SEALED=nr_processes

n=0
result() { # ok|fail|skip name [reason]
	n=$((n + 1))
	case "$1" in
	ok) echo "ok $n $2" ;;
	fail) echo "not ok $n $2${3:+ # $3}" ;;
	skip) echo "ok $n $2 # SKIP $3" ;;
	esac
}

# Load kibt.ko with the given parameters and leave its kernel log in $log.
log=/tmp/kibt.log
run_module() {
	dmesg -c >/dev/null
	insmod ./kibt.ko "$@" || echo "kibt.sh: insmod $* failed" >>"$log.err"
	dmesg >"$log"
	rmmod kibt 2>/dev/null
}

echo "KTAP version 1"
echo "1..5"

# ibt_selftest() exists only in a kernel built with X86_KERNEL_IBT.
why=
if ! grep -qw ibt /proc/cpuinfo; then
	why="CPU has no IBT"
elif ! grep -qw ibt_selftest /proc/kallsyms; then
	why="kernel built without X86_KERNEL_IBT"
fi
if [ -n "$why" ]; then
	for t in boot_detected boot_selftest noendbr_module_function \
		sealed_kernel_function exported_function_allowed; do
		result skip "$t" "kernel_ibt: $why"
	done
	exit 0
fi

boot=/tmp/boot.log
dmesg >"$boot"
if grep -q "CET detected: Indirect Branch Tracking enabled" "$boot"; then
	result ok boot_detected
else
	result fail boot_detected "no 'CET detected' line at boot"
fi
if grep -q "IBT selftest: Failed" "$boot"; then
	result fail boot_selftest "IBT selftest: Failed"
else
	result ok boot_selftest
fi

run_module mode=noendbr
if grep -q "kibt: target kibt_noendbr starts with other" "$log" &&
	grep -q "Missing ENDBR: kibt_noendbr" "$log"; then
	result ok noendbr_module_function
else
	result fail noendbr_module_function "indirect call to a function without ENDBR was not caught"
fi

addr=$(grep " [tT] $SEALED\$" /proc/kallsyms | cut -d' ' -f1)
if [ -z "$addr" ]; then
	result fail sealed_kernel_function "$SEALED not in /proc/kallsyms"
else
	run_module mode=addr addr=0x"$addr"
	if ! grep -q "kibt: target $SEALED+0x0/.* starts with seal-poison" "$log"; then
		result fail sealed_kernel_function "$SEALED is not sealed"
	elif ! grep -q "Missing ENDBR: $SEALED+0x0/" "$log"; then
		result fail sealed_kernel_function "indirect call to sealed $SEALED was not caught"
	else
		result ok sealed_kernel_function
	fi
fi

run_module mode=control
if grep -q "kibt: target jiffies_to_msecs+0x0/.* starts with endbr64" "$log" &&
	grep -q "kibt: call returned" "$log" &&
	! grep -q "Missing ENDBR" "$log"; then
	result ok exported_function_allowed
else
	result fail exported_function_allowed "exported function with ENDBR did not run cleanly"
fi
[ ! -s "$log.err" ] || { cat "$log.err"; exit 1; }
