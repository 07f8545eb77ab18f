#!/bin/bash
# Make a bootable ISO (isolinux) holding the kernel, the initramfs and a fixed
# kernel command line: Bochs boots it from its CD-ROM drive.
# Usage: iso.sh BZIMAGE INITRD OUT.iso CMDLINE...
set -euo pipefail

kernel=$1 initrd=$2 out=$3
shift 3
cmdline=$*

isolinux=/usr/lib/ISOLINUX/isolinux.bin
ldlinux=/usr/lib/syslinux/modules/bios/ldlinux.c32
for f in "$isolinux" "$ldlinux"; do
	[ -f "$f" ] || { echo "iso: $f is missing: run 'make deps'" >&2; exit 1; }
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/isolinux"
cp "$isolinux" "$ldlinux" "$dir/isolinux/"
cp "$kernel" "$dir/bzimage"
cp "$initrd" "$dir/initrd.gz"
cat >"$dir/isolinux/isolinux.cfg" <<CFG
default uibt
prompt 0
timeout 0
label uibt
  kernel /bzimage
  append initrd=/initrd.gz $cmdline
CFG
xorriso -as mkisofs -quiet -o "$out.tmp" -b isolinux/isolinux.bin \
	-c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
	"$dir" 2>/dev/null
mv "$out.tmp" "$out"
