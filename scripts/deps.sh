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
	# ... and its 9p file sharing, for "uibt exec"
	libcap-ng-dev
	# glibc from source with --enable-cet (the guest's C libraries)
	gawk
	# make mutate: each mutant's files compiled again after its reset
	ccache
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

# QEMU's and glibc's sources come from Debian's source archive: add deb-src
# entries mirroring the binary sources of this machine, and Debian 13's
# (trixie) for a current glibc.  Source entries only: nothing installed
# changes.  The file is rewritten when this script's version differs.
src_list=/etc/apt/sources.list.d/uibt-deb-src.sources
src_text=$(cat <<'EOF'
# Added by uibt (scripts/deps.sh): QEMU's and glibc's sources.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
)
need_update=
if [ "$(cat "$src_list" 2>/dev/null)" != "$src_text" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: $src_list is missing or old and writing it needs root: run 'sudo make deps'" >&2
		exit 1
	fi
	printf '%s\n' "$src_text" >"$src_list"
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
