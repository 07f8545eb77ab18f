/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cet-insn: multiboot v1 entry (32-bit), switch to long mode, the trap path
 * and the snippet runner.
 *
 * Every exception and the int $0x80 "done" gate go through isr_common on the
 * IST1 stack.  isr_common records the event (vector, error code, frame,
 * U_CET, S_CET, CR2 as they were on entry) in `res`, turns S_CET and SMAP off
 * and returns from run_snippet() ("longjmp"), so a snippet never returns by
 * itself: it ends with int $0x80 or with the exception under test.
 */
#include "defs.h"

#define MB_MAGIC	0x1badb002
#define MB_FLAGS	0x00000003	/* page-aligned modules, memory info */

	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC, MB_FLAGS, -(MB_MAGIC + MB_FLAGS)

	.text
	.code32
	.globl _start
_start:
	cli
	cld
	movl %eax, mb_magic
	movl %ebx, mb_info
	/* zero .bss (page tables and stacks live there) */
	movl $__bss_start, %edi
	movl $__bss_end, %ecx
	subl %edi, %ecx
	xorl %eax, %eax
	rep stosb
	movl $boot_stack_top, %esp

	/* identity map the first 1 GiB with 2 MiB supervisor pages */
	movl $pdpt, %eax
	orl $7, %eax
	movl %eax, pml4
	movl $pd, %eax
	orl $7, %eax
	movl %eax, pdpt
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $21, %eax
	orl $0x83, %eax			/* P | RW | PS */
	movl %eax, pd(,%ecx,8)
	incl %ecx
	cmpl $512, %ecx
	jne 1b

	/*
	 * 5-level paging (CR4.LA57, which can only change with paging off)
	 * if the command line has "cet-insn.la57" and CPUID.(7,0):ECX[16]
	 * says the CPU has it: PML5[0] -> the same PML4 (test 69).
	 */
	cmpl $0x2badb002, mb_magic
	jne 8f
	movl mb_info, %esi
	testl $4, (%esi)
	jz 8f
	movl 16(%esi), %esi		/* the command line */
7:	cmpb $0, (%esi)
	je 8f
	movl $la57_token, %edi
	movl %esi, %edx
6:	movb (%edi), %al
	testb %al, %al
	jz 5f				/* the whole token matched */
	cmpb (%edx), %al
	jne 4f
	incl %edi
	incl %edx
	jmp 6b
4:	incl %esi
	jmp 7b
5:	movl $7, %eax
	xorl %ecx, %ecx
	cpuid
	btl $16, %ecx
	jnc 8f
	movl $pml4, %eax
	orl $7, %eax
	movl %eax, pml5
	movl $1, la57_on
8:
	movl $pml4, %eax
	cmpl $0, la57_on
	je 1f
	movl $pml5, %eax
1:	movl %eax, %cr3
	movl %cr4, %eax
	orl $0x20, %eax			/* PAE */
	cmpl $0, la57_on
	je 1f
	orl $0x1000, %eax		/* LA57 */
1:	movl %eax, %cr4
	movl $MSR_EFER, %ecx
	rdmsr
	orl $0x101, %eax		/* LME | SCE */
	wrmsr
	movl %cr0, %eax
	orl $0x80010001, %eax		/* PG | WP | PE */
	movl %eax, %cr0
	lgdt gdt_desc
	ljmp $KCS64, $long_entry

	.code64
long_entry:
	movw $KDS, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorl %eax, %eax
	movw %ax, %fs
	movw %ax, %gs
	movq $boot_stack_top, %rsp
	call kmain
2:	cli
	hlt
	jmp 2b

/* ------------------------------------------------------------------ */
/* Exception stubs: 16 bytes each, all start with ENDBR64.            */

	.balign 16
	.globl isr_stubs
isr_stubs:
	.set vec, 0
	.rept 256
	.balign 16
	endbr64
	.if (vec == 8) || (vec == 10) || (vec == 11) || (vec == 12) || (vec == 13) || (vec == 14) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp isr_common
	.set vec, vec + 1
	.endr

/* Targets without ENDBR, reached through the IDT or SYSCALL. */
	.balign 16
	.globl gate81_noendbr
gate81_noendbr:
	nop
	pushq $0
	pushq $VEC_GATE81
	jmp isr_common

	.globl de_noendbr
de_noendbr:
	nop
	pushq $0
	pushq $VEC_NOENDBR_DE
	jmp isr_common

	/* NMI, #DB (INT1) and external-interrupt handlers without ENDBR */
	.macro NOENDBR name, vec
	.globl \name
\name:
	nop
	pushq $0
	pushq $\vec
	jmp isr_common
	.endm
	NOENDBR nmi_noendbr, VEC_NMI_NOENDBR
	NOENDBR db_noendbr, VEC_DB_NOENDBR
	NOENDBR irq_noendbr, VEC_IRQ_NOENDBR

	/* SYSCALL targets: the marker 0x5ca11 in RAX says we got there */
	.globl lstar_noendbr
lstar_noendbr:
	nop
	movl $0x5ca11, %eax
	int $0x80

	.globl lstar_endbr
lstar_endbr:
	endbr64
	movl $0x5ca11, %eax
	int $0x80

	/* #DB handler that returns: IRETQ back to the target, TF cleared */
	.globl db_iret
db_iret:
	endbr64
	btrq $8, 16(%rsp)
	iretq

	.globl sysexit_stub
sysexit_stub:
	endbr64
	sysexitq

	.globl lstar_sysret
lstar_sysret:
	endbr64
	sysretq

/* ------------------------------------------------------------------ */
isr_common:
	/* stack: rdx rcx rax | vec err rip cs rflags rsp ss */
	pushq %rax
	pushq %rcx
	pushq %rdx
	cmpl $0, skip_cet_msrs
	jne 6f
	movl $MSR_U_CET, %ecx
	rdmsr
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, res + RES_U_CET
	movl $MSR_S_CET, %ecx
	rdmsr
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, res + RES_S_CET
	movq %cr2, %rax
	movq %rax, res + RES_CR2
	/* S_CET off first, so nothing below can trip over kernel IBT */
	xorl %eax, %eax
	xorl %edx, %edx
	movl $MSR_S_CET, %ecx
	wrmsr
6:
	/* SMAP off (only if on: CR4 writes are not free of side effects) */
	movq %cr4, %rax
	btq $21, %rax
	jnc 3f
	btrq $21, %rax
	movq %rax, %cr4
3:
	movq 0(%rsp), %rax
	movq %rax, res + RES_RDX
	movq 8(%rsp), %rax
	movq %rax, res + RES_RCX
	movq 16(%rsp), %rax
	movq %rax, res + RES_RAX
	movq 24(%rsp), %rax
	movq %rax, res + RES_VEC
	movq 32(%rsp), %rax
	movq %rax, res + RES_ERR
	movq 40(%rsp), %rax
	movq %rax, res + RES_RIP
	movq 48(%rsp), %rax
	movq %rax, res + RES_CS
	movq 56(%rsp), %rax
	movq %rax, res + RES_RFLAGS
	movq 64(%rsp), %rax
	movq %rax, res + RES_RSP
	movq 72(%rsp), %rax
	movq %rax, res + RES_SS

	cmpl $0, in_snippet
	je unexpected_trap
	movl $0, in_snippet
	/* back into run_snippet's caller */
	movq $KDS, %rax
	movw %ax, %ds
	movw %ax, %es
	movq saved_rsp, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbp
	popq %rbx
	ret

unexpected_trap:
	movq $boot_stack_top, %rsp
	call fatal_trap
4:	cli
	hlt
	jmp 4b

/* ------------------------------------------------------------------ */
/* void run_snippet(struct ctx *c): iretq into the snippet described by c. */
	.globl run_snippet
run_snippet:
	endbr64
	pushq %rbx
	pushq %rbp
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, saved_rsp
	movl $1, in_snippet

	pushq CTX_SS(%rdi)
	pushq CTX_RSP(%rdi)
	pushq CTX_RFLAGS(%rdi)
	pushq CTX_CS(%rdi)
	pushq CTX_RIP(%rdi)

	/* CR4 first (CET may need to be on), then the MSRs, then the GPRs */
	movq CTX_CR4(%rdi), %rax
	movq %rax, %cr4
	cmpl $0, skip_cet_msrs	/* no CET, or a dry run */
	jne 5f
	movl $MSR_U_CET, %ecx
	movl CTX_U_CET(%rdi), %eax
	movl CTX_U_CET+4(%rdi), %edx
	wrmsr
	movl $MSR_S_CET, %ecx
	movl CTX_S_CET(%rdi), %eax
	movl CTX_S_CET+4(%rdi), %edx
	wrmsr
5:
	movq CTX_RAX(%rdi), %rax
	movq CTX_RBX(%rdi), %rbx
	movq CTX_RCX(%rdi), %rcx
	movq CTX_RDX(%rdi), %rdx
	movq CTX_RSI(%rdi), %rsi
	movq CTX_RDI(%rdi), %rdi
	xorl %ebp, %ebp
	iretq

/* ------------------------------------------------------------------ */
	.data
	.balign 16
	.globl gdt
gdt:
	.quad 0
	.quad 0x00af9a000000ffff	/* 0x08 ring-0 64-bit code */
	.quad 0x00cf92000000ffff	/* 0x10 ring-0 data */
	.quad 0x00cffa000000ffff	/* 0x18 ring-3 32-bit code */
	.quad 0x00cff2000000ffff	/* 0x20 ring-3 data */
	.quad 0x00affa000000ffff	/* 0x28 ring-3 64-bit code */
	.quad 0x00cf9a000000ffff	/* 0x30 ring-0 32-bit code */
	.quad 0, 0			/* 0x38 TSS, filled by kmain */
	.quad 0, 0			/* 0x48 64-bit call gate, set per test */
	.quad 0x00cffa000000ffff	/* 0x58 ring-3 32-bit code, base set per test */
gdt_end:
	.balign 8
	.word 0
gdt_desc:
	.word gdt_end - gdt - 1
	.quad gdt

	.globl mb_magic, mb_info, in_snippet, la57_on
mb_magic:	.long 0
mb_info:	.long 0
in_snippet:	.long 0
la57_on:	.long 0
la57_token:	.asciz "cet-insn.la57"
	.balign 8
saved_rsp:	.quad 0

	.bss
	.balign 4096
	.globl pml5, pml4, pdpt, pd
pml5:	.skip 4096
pml4:	.skip 4096
pdpt:	.skip 4096
pd:	.skip 4096
	.balign 16
	.skip 16384
	.globl boot_stack_top
boot_stack_top:
