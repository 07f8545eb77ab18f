#!/bin/sh
# 5-level paging is on: the kernel keeps "la57" in /proc/cpuinfo only when
# it runs with 5-level page tables (no5lvl clears it), so the legacy bitmap
# tests that run after this one cover the 2 TiB bitmap.
# Needs la57: the platform that boots without no5lvl.

echo "KTAP version 1"
echo "1..1"
if grep -qw la57 /proc/cpuinfo; then
	echo "ok 1 five_level_paging"
else
	echo "ok 1 five_level_paging # SKIP la57: 4-level paging (no5lvl)"
fi
