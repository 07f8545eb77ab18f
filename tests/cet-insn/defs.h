/* SPDX-License-Identifier: GPL-2.0 */
/* Constants shared by the assembly and C parts of the cet-insn test image. */
#ifndef CET_INSN_DEFS_H
#define CET_INSN_DEFS_H

#define KCS64	0x08	/* ring-0 64-bit code */
#define KDS	0x10	/* ring-0 data */
#define UCS32	0x1b	/* ring-3 32-bit (compatibility) code, RPL 3 */
#define UDS	0x23	/* ring-3 data, RPL 3 */
#define UCS64	0x2b	/* ring-3 64-bit code, RPL 3 */
#define KCS32	0x30	/* ring-0 32-bit (compatibility) code */
#define TSS_SEL	0x38
#define CGATE_SEL	0x48	/* 64-bit call gate (16 bytes), set per test */
#define UCS32_BASE	0x5b	/* ring-3 32-bit code with a base, RPL 3 */
#define GDT_ENTRIES	12

/* A second linear address of the page that holds l_noendbr (main.c maps it) */
#define LEGACY_ALIAS	0x3ff000
/* A supervisor mapping of the page of the patch targets (test 63) */
#define PATCH_ALIAS	0x3fe000
#define APIC_BASE	0xfee00000

#define MSR_EFER	0xc0000080
#define MSR_STAR	0xc0000081
#define MSR_LSTAR	0xc0000082
#define MSR_FMASK	0xc0000084
#define MSR_SYSENTER_CS	0x174
#define MSR_SYSENTER_ESP 0x175
#define MSR_SYSENTER_EIP 0x176
#define MSR_U_CET	0x6a0
#define MSR_S_CET	0x6a2
#define MSR_XSS		0xda0

#define CET_SH_STK_EN	(1 << 0)
#define CET_WR_SHSTK_EN	(1 << 1)
#define CET_ENDBR_EN	(1 << 2)
#define CET_LEG_IW_EN	(1 << 3)
#define CET_NO_TRACK_EN	(1 << 4)
#define CET_SUPPRESS_DIS (1 << 5)
#define CET_SUPPRESS	(1 << 10)
#define CET_TRACKER	(1 << 11)

#define CR0_TS		(1 << 3)
#define CR0_WP		(1 << 16)
#define CR4_OSFXSR	(1 << 9)
#define CR4_OSXSAVE	(1 << 18)
#define CR4_SMEP	(1 << 20)
#define CR4_SMAP	(1 << 21)
#define CR4_CET		(1 << 23)

/* Pseudo vectors recorded by the trap path. */
#define VEC_DONE	0x80	/* int $0x80: the snippet finished */
#define VEC_GATE81	0x181	/* the ENDBR-less target of gate 0x81 ran */
#define VEC_NOENDBR_DE	0x100	/* the ENDBR-less #DE replacement handler ran */
#define VEC_NMI_NOENDBR	0x102	/* the ENDBR-less NMI handler ran */
#define VEC_DB_NOENDBR	0x103	/* the ENDBR-less #DB handler ran */
#define VEC_IRQ_NOENDBR	0x104	/* the ENDBR-less external-interrupt handler ran */
#define IRQ_VEC		0x40	/* the vector of the self-IPI */

/* Offsets into struct ctx (main.c). */
#define CTX_RIP		0
#define CTX_CS		8
#define CTX_RFLAGS	16
#define CTX_RSP		24
#define CTX_SS		32
#define CTX_U_CET	40
#define CTX_S_CET	48
#define CTX_CR4		56
#define CTX_RAX		64
#define CTX_RBX		72
#define CTX_RCX		80
#define CTX_RDX		88
#define CTX_RSI		96
#define CTX_RDI		104

/* Offsets into struct res (main.c). */
#define RES_VEC		0
#define RES_ERR		8
#define RES_RIP		16
#define RES_CS		24
#define RES_RFLAGS	32
#define RES_RSP		40
#define RES_SS		48
#define RES_U_CET	56
#define RES_S_CET	64
#define RES_CR2		72
#define RES_RAX		80
#define RES_RCX		88
#define RES_RDX		96

#endif
