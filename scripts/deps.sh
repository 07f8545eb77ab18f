#!/bin/bash
# Install the Debian 12 packages uibt needs (as root), and nothing when all of
# them are present.  Called by the Makefile; safe to run by hand.
set -euo pipefail

# Pinned so that patches/linux applies to the same tree everywhere.
LINUX_SOURCE=linux-source-6.12=6.12.118-1~deb12u1

packages=(
	"$LINUX_SOURCE"
	# kernel build
	build-essential bc bison flex libelf-dev libssl-dev cpio kmod xz-utils
	python3 git rsync
	# checkpatch.pl: spdxcheck.py (license identifiers) needs ply and GitPython
	python3-ply python3-git
	# guest programs: static busybox for init, multilib for 32-bit tests
	busybox-static gcc-multilib binutils
	# platforms
	qemu-system-x86 qemu-system-data seabios ipxe-qemu
	bochs bochsbios vgabios bochs-term isolinux syslinux-common xorriso
	# QEMU from source (the CET emulation)
	dpkg-dev ninja-build meson libglib2.0-dev libpixman-1-dev libfdt-dev
	zlib1g-dev python3-venv
)

missing=()
for p in "${packages[@]}"; do
	name=${p%%=*}
	want=${p#*=}
	[ "$want" = "$p" ] && want=
	status=$(dpkg-query -W -f='${Status}' "$name" 2>/dev/null || true)
	version=$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)
	if [ "$status" = "install ok installed" ] &&
		{ [ -z "$want" ] || [ "$version" = "$want" ]; }; then
		continue
	fi
	missing+=("$p")
done

# QEMU's source comes from Debian's source archive: add a deb-src entry
# mirroring the binary sources of this machine.
src_list=/etc/apt/sources.list.d/uibt-deb-src.sources
need_update=
if [ ! -f "$src_list" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: $src_list is missing and adding it needs root: run 'sudo make deps'" >&2
		exit 1
	fi
	cat >"$src_list" <<'EOF'
# Added by uibt (scripts/deps.sh): QEMU's source for the CET emulation.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	need_update=1
fi

if [ ${#missing[@]} -eq 0 ] && [ -z "$need_update" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: installing them needs root: run 'sudo make deps'" >&2
	exit 1
fi
echo "deps: installing ${missing[*]:-(deb-src lists)}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ ${#missing[@]} -ne 0 ]; then
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
