// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kinsn: a QEMU TCG plugin that counts the instructions the guest kernel
 * executes between two marker instructions run by a user-mode workload
 * (guest/bench/bench.c), for "make bench".
 *
 * Markers are multi-byte NOPs with a recognisable displacement:
 *
 *   nopl 0x4b4d01TT(%rax)   0f 1f 80 TT 01 4d 4b   start a sample tagged TT
 *   nopl 0x4b4d0200(%rax)   0f 1f 80 00 02 4d 4b   end the sample
 *
 * They are found by their bytes at translation time, and only they get an
 * execution callback.  Every instruction at a kernel address (the upper
 * half, from 0xffff800000000000) gets an inline add to one counter, so the
 * counting costs no helper call.  The counter is global: boot with -smp 1,
 * so that it counts one CPU.  A sample is the counter's growth from a start
 * to the next end; a start without an end is dropped by the next start.
 *
 * Usage: -plugin build/plugin/libkinsn.so,out=FILE[,pcs=TAG]
 * FILE gets one line per sample, "TAG COUNT" (decimal), written as the
 * samples end; without out=, the lines go to QEMU's log (stderr).
 *
 * pcs=TAG, to find where the instructions go: also count, per kernel
 * address, the instructions executed in the samples tagged TAG, and write
 * them at exit as "pc ADDRESS COUNT" lines (hexadecimal address).  Slow:
 * every kernel instruction gets a callback.
 *
 * QEMU 7.2's plugin API has no register access: that is why the tag is in
 * the instruction bytes rather than in a register.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START	0xffff800000000000ULL
#define MARK_LEN	7
#define MARK_START	1
#define MARK_END	2

/* Instructions executed at kernel addresses since the boot. */
static uint64_t kernel_insns;
/* The open sample: its tag, and the counter at its start. */
static int open_tag = -1;
static uint64_t open_count;
static uint64_t samples;
static FILE *out;
/* pcs=: the tag whose instructions are counted per address, or -1 */
static int pcs_tag = -1;
static GHashTable *pcs;

static void emit(const char *line)
{
	if (out)
		fputs(line, out);
	else
		qemu_plugin_outs(line);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	unsigned int kind = GPOINTER_TO_UINT(udata) >> 8;
	unsigned int tag = GPOINTER_TO_UINT(udata) & 0xff;
	char line[64];

	if (kind == MARK_START) {
		open_tag = tag;
		open_count = kernel_insns;
		return;
	}
	if (open_tag < 0)
		return;
	snprintf(line, sizeof(line), "%d %" PRIu64 "\n", open_tag,
		 kernel_insns - open_count);
	emit(line);
	samples++;
	open_tag = -1;
}

static void on_kernel_insn(unsigned int vcpu, void *udata)
{
	uint64_t *n;

	if (open_tag != pcs_tag)
		return;
	n = g_hash_table_lookup(pcs, udata);
	if (!n) {
		n = g_new0(uint64_t, 1);
		g_hash_table_insert(pcs, udata, n);
	}
	(*n)++;
}

/* The marker's kind << 8 | tag, or 0 for any other instruction. */
static unsigned int marker(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != MARK_LEN)
		return 0;
	if (b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    b[5] != 0x4d || b[6] != 0x4b)
		return 0;
	if (b[4] == MARK_START || (b[4] == MARK_END && b[3] == 0))
		return b[4] << 8 | b[3];
	return 0;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned int m;

		if (qemu_plugin_insn_vaddr(insn) >= KERNEL_START) {
			qemu_plugin_register_vcpu_insn_exec_inline(
				insn, QEMU_PLUGIN_INLINE_ADD_U64,
				&kernel_insns, 1);
			if (pcs)
				qemu_plugin_register_vcpu_insn_exec_cb(
					insn, on_kernel_insn,
					QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)
					qemu_plugin_insn_vaddr(insn));
			continue;
		}
		m = marker(insn);
		if (m)
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
				GUINT_TO_POINTER(m));
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char line[96];
	GHashTableIter it;
	gpointer pc, n;

	if (pcs) {
		g_hash_table_iter_init(&it, pcs);
		while (g_hash_table_iter_next(&it, &pc, &n)) {
			snprintf(line, sizeof(line), "pc %" PRIxPTR " %" PRIu64 "\n",
				 (uintptr_t)pc, *(uint64_t *)n);
			emit(line);
		}
	}
	if (out) {
		fclose(out);
		out = NULL;
	}
	snprintf(line, sizeof(line), "kinsn: %" PRIu64 " samples, %" PRIu64
		 " kernel instructions in all\n", samples, kernel_insns);
	qemu_plugin_outs(line);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr, "kinsn: x86_64 only, not %s\n", info->target_name);
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (g_str_has_prefix(argv[i], "out=")) {
			out = fopen(argv[i] + 4, "w");
			if (!out) {
				perror(argv[i] + 4);
				return -1;
			}
		} else if (g_str_has_prefix(argv[i], "pcs=")) {
			pcs_tag = atoi(argv[i] + 4);
			pcs = g_hash_table_new_full(NULL, NULL, NULL, g_free);
		} else {
			fprintf(stderr, "kinsn: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
