/* SPDX-License-Identifier: GPL-2.0 */
/* A function without ENDBR, in an object marked for IBT (cet.h's note). */
#include <cet.h>

	.text
	.globl	asm_nolanding
	.type	asm_nolanding, @function
asm_nolanding:
	movl	$1, %eax
	ret
	.size	asm_nolanding, . - asm_nolanding
	.section .note.GNU-stack, "", @progbits
