/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Snippets run by the tests.  They live in user pages (U=1; SMEP stays off,
 * so the CPL0 snippets can run here too) and end with int $0x80, or with the
 * exception under test.  Targets whose name says "noendbr" must not start
 * with ENDBR: the tests rely on it.  Register inputs come from struct ctx.
 */
#include "defs.h"

#define GLOBAL(x) .globl x; x:

	.section .utext, "ax"
	.code64

/* ---- 64-bit landing pads ---- */
	.balign 16
GLOBAL(t_endbr64)
	endbr64
	int $0x80
	.balign 16
GLOBAL(t_noendbr)
	nop
	int $0x80
	.balign 16
GLOBAL(t_endbr32)
	endbr32
	int $0x80
	.balign 16
GLOBAL(t_ud2)
	ud2
	.balign 16
GLOBAL(t_int3)
	int3
	int $0x80
	.balign 16
GLOBAL(t_int3_endbr64)			/* a breakpoint planted on an ENDBR64 */
	int3
	endbr64
	int $0x80
	.balign 16
GLOBAL(t_int1_at)			/* INT1 (ICEBP) */
	.byte 0xf1
	int $0x80
	.balign 16
GLOBAL(t_int_imm8_3)			/* INT 3 as INT imm8: CD 03 */
	.byte 0xcd, 0x03
	int $0x80
	.balign 16
GLOBAL(t_endbr64_66)			/* ENDBR64 with a 66h prefix */
	.byte 0x66, 0xf3, 0x0f, 0x1e, 0xfa
	int $0x80
	.balign 16
GLOBAL(t_endbr64_lock)			/* ENDBR64 with LOCK: #UD */
	.byte 0xf0, 0xf3, 0x0f, 0x1e, 0xfa
	int $0x80

/* ---- 64-bit branch sites (RAX = target) ---- */
	.balign 16
GLOBAL(s_call_reg)
	call *%rax
	int $0x80
	.balign 16
GLOBAL(s_jmp_reg)
	jmp *%rax
	.balign 16
GLOBAL(s_call_mem)
	movq %rax, uptr(%rip)
	call *uptr(%rip)
	int $0x80
	.balign 16
GLOBAL(s_jmp_mem)
	movq %rax, uptr(%rip)
	jmp *uptr(%rip)
	.balign 16
GLOBAL(s_notrack_call)
	notrack call *%rax		/* 3e ff d0 */
	int $0x80
	.balign 16
GLOBAL(s_notrack_jmp_mem)
	movq %rax, uptr(%rip)
	notrack jmp *uptr(%rip)		/* 3e ff 25 */
	.balign 16
GLOBAL(s_notrack_then_fs)
	.byte 0x3e, 0x64, 0xff, 0xd0	/* ds fs call *%rax */
	int $0x80
	.balign 16
GLOBAL(s_gs_then_notrack)
	.byte 0x65, 0x3e, 0xff, 0xd0	/* gs ds call *%rax */
	int $0x80
	.balign 16
GLOBAL(s_notrack_far_jmp)
	.byte 0x3e
	ljmp *ufar(%rip)		/* FF /5 m16:32 */
	.balign 16
GLOBAL(s_notrack_far_call)
	.byte 0x3e
	lcall *ufar(%rip)		/* FF /3 m16:32 */
	int $0x80
	.balign 16
GLOBAL(s_ret)				/* RBX = a second target */
	leaq 1f(%rip), %rax
	pushq %rax
	ret
1:	nop				/* no ENDBR */
	jmp *%rbx			/* proves IBT is on: arms */
	.balign 16
GLOBAL(s_syscall)			/* RBX = a second target */
	syscall
	nop				/* SYSRET lands here: no ENDBR */
	jmp *%rbx
	.balign 16
GLOBAL(s_int81)
	int $0x81
	.balign 16
GLOBAL(s_div0)
	xorl %ecx, %ecx
	xorl %edx, %edx
	movl $1, %eax
	divl %ecx
	int $0x80
	.balign 16
GLOBAL(s_endbr_only)
	endbr64
	int $0x80
	.balign 16
GLOBAL(s_nop)
	nop
	int $0x80
	.balign 16
GLOBAL(s_nop_jmp)			/* RBX = a second target */
	nop
	jmp *%rbx

	.balign 16
GLOBAL(s_sysenter)
	sysenter
	.balign 16
GLOBAL(s_sysenter_exit)			/* RBX = a second target */
	leaq 1f(%rip), %rdx
	movq %rsp, %rcx
	sysenter
1:	nop				/* SYSEXIT lands here: no ENDBR */
	jmp *%rbx

/* ---- events (issue 14): NMI, INT1, external interrupts ---- */
	.balign 16
GLOBAL(s_apic_ipi)			/* RDI = ICR low (APIC page), ESI = ICR low, EDX = ICR high */
	movl %edx, 0x10(%rdi)
	movl %esi, (%rdi)		/* send: the event arrives in the loop */
	movl $1000000, %ecx
1:	decl %ecx
	jnz 1b
	int $0x80			/* it never came */
	.balign 16
GLOBAL(s_icebp)
	.byte 0xf1			/* INT1 (ICEBP) */
GLOBAL(s_icebp_after)
	int $0x80

/* ---- far transfers through gates and to TSSs (ufar = the far pointer) ---- */
	.balign 16
GLOBAL(s_lcall_mem)
	lcall *ufar(%rip)		/* FF /3 m16:32 */
	int $0x80
	.balign 16
GLOBAL(s_ljmp_mem)
	ljmp *ufar(%rip)		/* FF /5 m16:32 */
	.balign 16
GLOBAL(s_int82)
	int $0x82

/* ---- CPL0 snippets ---- */
	.balign 16
GLOBAL(k_wrmsr)				/* ECX, EDX:EAX */
	wrmsr
	int $0x80
	.balign 16
GLOBAL(k_cet_without_wp)
	movq %cr0, %rax
	btrq $16, %rax
	movq %rax, %cr0
	movq %cr4, %rax
	btsq $23, %rax
GLOBAL(k_cet_without_wp_fault)
	movq %rax, %cr4
	int $0x80
	.balign 16
GLOBAL(k_clear_wp)			/* runs with CR4.CET set */
	movq %cr0, %rax
	btrq $16, %rax
GLOBAL(k_clear_wp_fault)
	movq %rax, %cr0
	int $0x80
	.balign 16
GLOBAL(k_iret)				/* IRETQ to a CPL0 target without ENDBR */
	movq %rsp, %rax
	pushq $KDS
	pushq %rax
	pushfq
	pushq $KCS64
	leaq 1f(%rip), %rax
	pushq %rax
	iretq
1:	nop
	jmp *%rbx			/* RBX = a second target */

	.balign 16
GLOBAL(k_iret_nt)			/* IRETQ to 1f with RFLAGS.NT |= RBX */
	movq %rsp, %rax
	pushq $KDS
	pushq %rax
	pushfq
	pushq $KCS64
	leaq 1f(%rip), %rax
	pushq %rax
	pushfq
	orq %rbx, (%rsp)
	popfq
GLOBAL(k_iret_nt_at)
	iretq
1:	int $0x80
	.balign 16
GLOBAL(k_patch_jmp)			/* store EBX at (RDI), then jmp *%rax */
	movl %ebx, (%rdi)
	jmp *%rax

/*
 * ---- XSAVE family (CPL0, or CPL3 for the privilege checks) ----
 * RDI = the 64-byte aligned area, EDX:EAX = the requested-feature bitmap,
 * RSI = xs_mxcsr: MXCSR is loaded from 0(%rsi) first and stored to 4(%rsi)
 * after the instruction; RBX != 0 sets CR0.TS just before it (CPL0 only).
 * The instruction itself is at <name>_at.
 */
	.macro XSNIP name, insn
	.balign 16
GLOBAL(\name)
	ldmxcsr (%rsi)
	testq %rbx, %rbx
	jz 1f
	movq %cr0, %rcx
	orq $8, %rcx
	movq %rcx, %cr0
1:
GLOBAL(\name\()_at)
	\insn (%rdi)
	stmxcsr 4(%rsi)
	int $0x80
	.endm
	XSNIP x_xrstor, xrstor64
	XSNIP x_xrstors, xrstors64
	XSNIP x_xsavec, xsavec64
	XSNIP x_xsaves, xsaves64

/*
 * Compacted layout (issue 14): RDI = the area, EDX:EAX = RFBM, RBX = 0:
 * XSAVEC, 1: XSAVES.  x_ymm_save first loads YMM0 from 0(%rsi) (AVX only);
 * x_init_save first initialises everything with XRSTOR (XSAVEC) or
 * XRSTORS (XSAVES) of 0(%rsi), an area with XSTATE_BV = 0.
 */
	.balign 16
GLOBAL(x_ymm_save)
	vmovdqu (%rsi), %ymm0
	testq %rbx, %rbx
	jnz 1f
	xsavec64 (%rdi)
	int $0x80
1:	xsaves64 (%rdi)
	int $0x80
	.balign 16
GLOBAL(x_init_save)
	testq %rbx, %rbx
	jnz 1f
	xrstor64 (%rsi)
	xsavec64 (%rdi)
	int $0x80
1:	xrstors64 (%rsi)
	xsaves64 (%rdi)
	int $0x80

/* ---- 32-bit compatibility-mode code (EAX = target) ---- */
	.code32
	.balign 16
GLOBAL(c_call_reg)
	call *%eax
	int $0x80
	.balign 16
GLOBAL(c_t_endbr32)
	endbr32
	int $0x80
	.balign 16
GLOBAL(c_t_endbr64)
	endbr64
	int $0x80
	.balign 16
GLOBAL(c_t_noendbr)
	nop
	int $0x80
	.balign 16
GLOBAL(c_far_jmp_endbr64)		/* direct far jmp (EA) with 3E */
	.byte 0x3e
	ljmp $UCS64, $t_endbr64
	.balign 16
GLOBAL(c_far_jmp_noendbr)
	.byte 0x3e
	ljmp $UCS64, $t_noendbr
	.balign 16
GLOBAL(c_far_jmp_compat_endbr32)
	.byte 0x3e
	ljmp $UCS32, $c_t_endbr32
	.code64

/*
 * ---- a page of targets that the tests patch at run time (test 63) ----
 * Written through PATCH_ALIAS, a supervisor mapping of the same page, as
 * the kernel's text_poke() does.
 */
	.section .upatch, "ax"
	.balign 4096
GLOBAL(p_endbr)				/* starts with ENDBR64 */
	endbr64
	int $0x80
	.balign 16
GLOBAL(p_noendbr)			/* starts with a 4-byte NOP */
	.byte 0x0f, 0x1f, 0x40, 0x00
	int $0x80
	.balign 4096

/* ---- a page of legacy code: its bit is set in the legacy bitmaps ---- */
	.section .ulegacy, "ax"
	.balign 4096
GLOBAL(l_noendbr)
	nop
	int $0x80
	.balign 4096

/* ---- user data ---- */
	.section .udata, "aw"
	.balign 4096
GLOBAL(bm_user)				/* legacy bitmap in a user page */
	.skip 4096
GLOBAL(uptr)
	.quad 0
GLOBAL(ufar)				/* m16:32 far pointer */
	.long 0
	.word 0
	.balign 8
GLOBAL(xs_mxcsr)			/* MXCSR in, MXCSR out (XSNIP) */
	.long 0, 0
	.balign 4096
GLOBAL(xs_area)				/* XSAVE area: user page, 64-byte aligned */
	.skip 4096
	.balign 16
	.skip 8192
GLOBAL(ustack_top)
	.balign 4096
