# uibt: Intel CET Indirect Branch Tracking for Linux user space.
#
#   make run     build everything, boot the patched kernel into the demo
#   make test    build everything, run the suite on every platform
#
# Everything is built in build/ (ignored by git); logs go to build/logs/.
# See README.md.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := test

TOP := $(CURDIR)
B := $(TOP)/build
# Another kernel tree can be tested with KSRC=... KOUT=... GUEST=... (absolute
# paths); then build/linux is left alone.
KSRC ?= $(B)/linux
KOUT ?= $(B)/kbuild
GUEST ?= $(B)/guest
export UIBT_KOUT := $(KOUT)
LOGDIR ?= $(B)/logs
export UIBT_GUEST := $(GUEST)
export UIBT_LOGS := $(LOGDIR)
NPROC := $(shell nproc)

KIMG := $(KOUT)/arch/x86/boot/bzImage
INITRD := $(GUEST)/initramfs.cpio.gz
# config/debug.config is for make test-debug only.
FRAGMENTS ?= $(filter-out config/debug.config,$(sort $(wildcard config/*.config)))
LINUX_PATCHES := $(wildcard patches/linux/*.patch) patches/linux/series
HARNESS := python3 harness/uibt.py

# Progress for long steps: what runs and where its log is.
step = @echo "uibt: $(1) (log: $(patsubst $(TOP)/%,%,$(2)))"

.PHONY: all build deps test test-debug run bench kernel guest linux-tree qemu glibc \
	export-linux export-qemu check-series check-series-linux \
	check-series-qemu clean distclean help

all: test

help:
	@sed -n '2,10p' Makefile | sed 's/^# \{0,1\}//'

# --- set-up -----------------------------------------------------------------
deps: $(B)/.deps
$(B)/.deps: scripts/deps.sh
	@mkdir -p $(B)
	@scripts/deps.sh
	@touch $@

# The kernel tree: Debian's source, a base commit, the series applied with
# git am.  scripts/tree.sh is cheap when nothing changed, so it always runs;
# it touches build/linux/.git/uibt-series only when the series changed.
linux-tree: $(B)/.deps
	@if [ "$(KSRC)" = "$(B)/linux" ]; then scripts/tree.sh linux; fi

# --- kernel -----------------------------------------------------------------
kernel: linux-tree
	@$(MAKE) --no-print-directory kernel-build

$(KOUT)/.config: $(FRAGMENTS) scripts/kconfig.sh $(wildcard $(KSRC)/.git/uibt-series)
	$(call step,configuring the kernel (tinyconfig + $(FRAGMENTS)),$(LOGDIR)/kconfig.log)
	@mkdir -p $(LOGDIR)
	@scripts/kconfig.sh $(KSRC) $(KOUT) $(FRAGMENTS) >$(LOGDIR)/kconfig.log 2>&1 || \
		{ cat $(LOGDIR)/kconfig.log; rm -f $@; exit 1; }

.PHONY: kernel-build
kernel-build: $(KOUT)/.config
	$(call step,building the kernel (a few minutes cold),$(LOGDIR)/kernel.log)
	@$(MAKE) -C $(KSRC) O=$(KOUT) -j$(NPROC) bzImage modules >$(LOGDIR)/kernel.log 2>&1 || \
		{ tail -30 $(LOGDIR)/kernel.log; echo "uibt: kernel build failed; log: build/logs/kernel.log"; exit 1; }

# --- QEMU with CET-IBT emulation ----------------------------------------------
# build/qemu: Debian's qemu 7.2 source with patches/qemu, like build/linux.
qemu: $(B)/.deps
	@scripts/tree.sh qemu
	$(call step,building QEMU with CET emulation (about 6 minutes cold),$(B)/qemu-build/build.log)
	@scripts/qemu-build.sh >/dev/null

# --- glibc with --enable-cet: the guest's C libraries ---------------------------
# glibc 2.36 (Debian 12's, whose ld.so manages IBT), installed, with its own
# CET tests; the run-time of glibc 2.41 (Debian 13's, which never manages
# IBT).  scripts/glibc.sh keeps stamps: a warm run does nothing.
.PHONY: glibc
glibc: $(B)/.deps
	@scripts/glibc.sh 2.36 --cet-tests $(B)/glibc-2.36/cet-tests
	@scripts/glibc.sh 2.41 --runtime

# --- guest ------------------------------------------------------------------
guest: kernel glibc
	$(call step,building guest programs and the initramfs,$(GUEST)/build.log)
	@scripts/guest.sh $(KSRC) $(KOUT) $(GUEST)

$(GUEST)/uibt-%.iso: $(INITRD) $(KIMG) scripts/iso.sh harness/uibt.py
	$(call step,making the Bochs ISO $(notdir $@),$@)
	@scripts/iso.sh $(KIMG) $(INITRD) $@ "$$($(HARNESS) cmdline $*)"

# The ISOs depend on files the phony guest target refreshes: make them in a
# second pass so that make sees the new timestamps.
build: guest qemu exec-tests
	@$(MAKE) --no-print-directory isos insn

.PHONY: isos insn
isos: $(GUEST)/uibt-test.iso $(GUEST)/uibt-demo-batch.iso

# The instruction-level test image (multiboot ELF for QEMU, ISO for Bochs).
insn: $(B)/.deps
	$(call step,building the instruction-level test image,$(B)/cet-insn/build.log)
	@mkdir -p $(B)/cet-insn
	@$(MAKE) -C tests/cet-insn O=$(B)/cet-insn >$(B)/cet-insn/build.log 2>&1 || \
		{ cat $(B)/cet-insn/build.log; exit 1; }

# --- uibt exec ------------------------------------------------------------------
# ./uibt exec boots the test kernel with guest.sh's exec.cpio.gz on qemu-ibt;
# its own tests' programs (tests/exec) are built with the CET glibc.
.PHONY: exec-tests
exec-tests: glibc
	$(call step,building uibt exec's test programs,$(B)/exec-tests/build.log)
	@scripts/exec-tests.sh $(B)/exec-tests >/dev/null

# --- run and test -------------------------------------------------------------
PLATFORM ?= qemu-ibt
run: build
	@$(HARNESS) run --platform $(PLATFORM)

test: build
	@$(HARNESS) test --selftest $(if $(PLATFORMS),--platforms $(PLATFORMS))

# The whole suite on qemu-ibt with a debug kernel (KASAN, lockdep, UBSAN,
# atomic-sleep checks): any report fails the test that was running.  The
# debug kernel is also the one built without X86_KERNEL_IBT (platform
# qemu-ibt-debug): user IBT on a kernel that does not use IBT itself.  Its
# own build and log folders (build/kbuild-debug, build/guest-debug,
# build/logs-debug).
test-debug:
	@$(MAKE) --no-print-directory test-debug-run \
		KOUT=$(B)/kbuild-debug GUEST=$(B)/guest-debug LOGDIR=$(B)/logs-debug \
		FRAGMENTS="$(FRAGMENTS) config/debug.config"

.PHONY: test-debug-run
# KASAN and lockdep announce themselves at boot: check that they did, so
# that a run without reports means they were there to report.
test-debug-run: guest qemu insn exec-tests
	@$(HARNESS) test --platforms qemu-ibt-debug \
		--expect-log 'KernelAddressSanitizer initialized' \
		--expect-log 'Lock dependency validator'

# What IBT costs, in one boot of qemu-ibt with one CPU: the wall-clock time
# of the same workload with IBT enforced and not, and the kernel's
# instructions per exec, signal and pipe round trip with IBT on and off,
# counted by a TCG plugin (tools/plugin/kinsn.c).  The plugin is built
# after the QEMU tree, whose qemu-plugin.h it includes.
KINSN := $(B)/plugin/libkinsn.so
bench: build
	@$(MAKE) --no-print-directory $(KINSN)
	@$(HARNESS) bench --plugin $(KINSN)

$(KINSN): tools/plugin/kinsn.c $(B)/qemu/include/qemu/qemu-plugin.h
	@mkdir -p $(@D)
	gcc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC \
		$$(pkg-config --cflags glib-2.0) -I $(B)/qemu/include/qemu -o $@ $<

# What ./uibt exec costs: a static hello-world, end to end and by part.
.PHONY: bench-exec
bench-exec: build
	@$(HARNESS) bench-exec

# Real projects' own suites under ./uibt exec --report, built from Debian's
# source with -fcf-protection=branch (slow; not part of make test; issue 13's
# acceptance).  PROJECTS="libffi" runs one; results in build/acceptance/.
.PHONY: exec-acceptance
exec-acceptance: build
	@scripts/acceptance.sh $(PROJECTS)

# --- working on the series ----------------------------------------------------
# Export the commits on top of "base" in build/NAME to patches/NAME.
# With patches/NAME/cover-letter.txt, also 0000-cover-letter.patch.
export-linux export-qemu: export-%:
	@scripts/export-series.sh $*

# Each patch of a series applies, builds and is checkpatch-clean (slow: one
# build per patch; not part of make test).
check-series: check-series-linux check-series-qemu
check-series-linux check-series-qemu: check-series-%: build
	@scripts/check-series.sh $*

# Mutation testing (slow; not part of make test): each patch of mutants/linux
# breaks one promise of Documentation/arch/x86/ibt.rst, and the suite on
# qemu-ibt must fail with it.  MUTANTS="03 07" runs some; see
# mutants/README.md.  Table: build/logs-mutate/results.md.
.PHONY: mutate
mutate: linux-tree qemu insn exec-tests
	@scripts/mutate.sh $(MUTANTS)

# The same for patches/qemu: mutants/qemu, judged by cet-insn on qemu-ibt's
# CPU (MUTANTS="01 05" runs some).  Table: build/logs-mutate-qemu/results.md.
.PHONY: mutate-qemu
mutate-qemu: qemu insn
	@scripts/mutate-qemu.sh $(MUTANTS)

clean:
	rm -rf $(GUEST) $(LOGDIR)

distclean:
	rm -rf $(B)
