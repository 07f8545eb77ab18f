#!/bin/sh
# The kernel's view of XSAVES on a CPU where it keeps user CET state: the
# compacted format, with CET_U (xstate feature 11, 'Control-flow User
# registers') among the managed features and at a sane offset.  This is how
# the kernel reads what the CPU enumerates in CPUID leaf 0xD, so it checks
# the emulation's XSAVES layout the way Linux uses it.
# Needs user_ibt: Linux sets it only when XSAVES manages CET_U.
# Runs first: kibt.sh empties the kernel log with dmesg -c.

echo "KTAP version 1"
echo "1..3"
if ! grep -qw user_ibt /proc/cpuinfo; then
	n=0
	for t in compacted_format cet_u_supported cet_u_offset; do
		n=$((n + 1))
		echo "ok $n $t # SKIP user_ibt: not supported"
	done
	exit 0
fi
log=/tmp/xstate.log
dmesg >"$log"

if grep -q "using 'compacted' format" "$log"; then
	echo "ok 1 compacted_format"
else
	echo "not ok 1 compacted_format"
fi
if grep -q "Supporting XSAVE feature 0x800: 'Control-flow User registers'" "$log"; then
	echo "ok 2 cet_u_supported"
else
	echo "not ok 2 cet_u_supported"
fi
# Where CET_U (16 bytes: U_CET and PL3_SSP) must be: worked out from CPUID
# leaf 0xD by xsave_layout, from the SDM's rule for the compacted format,
# for the features the kernel enabled; the kernel's own offset must match.
line=$(grep -o 'xstate_offset\[11\]: *[0-9]*, xstate_sizes\[11\]: *[0-9]*' "$log")
off=$(echo "$line" | sed 's/.*\[11\]: *\([0-9]*\),.*/\1/')
size=${line##* }
mask=$(sed -n "s/.*Enabled xstate features \(0x[0-9a-f]*\),.*/\1/p" "$log")
want=$(/tests/boot/xsave_layout "$mask" 11 || true)
if [ -n "$off" ] && [ "$off $size" = "$want" ] && [ "$size" = 16 ]; then
	echo "ok 3 cet_u_offset"
else
	echo "# kernel: '$line', enabled '$mask'; CPUID and the SDM say offset, size '$want' (size 16)"
	echo "not ok 3 cet_u_offset"
fi
