/* SPDX-License-Identifier: GPL-2.0 */
/* libmissing.so: a marked library whose function has no ENDBR. */
#include <cet.h>

	.text
	.globl	lib_nolanding
	.type	lib_nolanding, @function
lib_nolanding:
	movl	$12, %eax
	ret
	.size	lib_nolanding, . - lib_nolanding
	.section .note.GNU-stack, "", @progbits
