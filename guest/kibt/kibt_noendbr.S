/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function without ENDBR, for kibt_test's mode=noendbr.  SYM_CODE_START
 * (unlike SYM_FUNC_START) emits no ENDBR; ANNOTATE_NOENDBR tells objtool
 * that the missing landing pad is deliberate.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/unwind_hints.h>

	.text
SYM_CODE_START(kibt_noendbr)
	UNWIND_HINT_FUNC
	ANNOTATE_NOENDBR
	movl	$42, %eax
	RET
SYM_CODE_END(kibt_noendbr)
