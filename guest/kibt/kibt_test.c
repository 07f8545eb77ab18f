// SPDX-License-Identifier: GPL-2.0
/*
 * kibt_test - make indirect calls that kernel IBT must (or must not) stop.
 *
 *   mode=noendbr  call kibt_noendbr, a function of this module without ENDBR
 *   mode=addr     call the kernel function at addr= (the guest test reads it
 *                 from /proc/kallsyms: kallsyms_lookup_name is not exported)
 *   mode=control  call jiffies_to_msecs, exported and so starting with ENDBR
 *
 * Each call is made through a volatile pointer, so the compiler cannot turn
 * it into a direct call.  Before calling, the module prints what the target
 * starts with: endbr64, the seal poison objtool's sealing leaves
 * (66 0f 1f 00, a 4-byte NOP), or something else.  The test boots with
 * ibt=warn, so a missing ENDBR is reported and execution continues.
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

static char *mode = "noendbr";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "noendbr, addr or control");

static unsigned long addr;
module_param(addr, ulong, 0444);
MODULE_PARM_DESC(addr, "kernel function to call in mode=addr");

int kibt_noendbr(void);

static const char *first_insn(const void *p)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const u8 poison[] = { 0x66, 0x0f, 0x1f, 0x00 };

	if (!memcmp(p, endbr64, sizeof(endbr64)))
		return "endbr64";
	if (!memcmp(p, poison, sizeof(poison)))
		return "seal-poison";
	return "other";
}

static int __init kibt_init(void)
{
	unsigned int (*volatile msecs)(const unsigned long j);
	int (*volatile fn)(void);
	long ret;

	if (!strcmp(mode, "noendbr")) {
		fn = kibt_noendbr;
		pr_info("kibt: target kibt_noendbr starts with %s\n", first_insn(fn));
		ret = fn();
	} else if (!strcmp(mode, "addr")) {
		if (!addr)
			return -EINVAL;
		fn = (void *)addr;
		pr_info("kibt: target %pS starts with %s\n", fn, first_insn(fn));
		ret = fn();
	} else if (!strcmp(mode, "control")) {
		msecs = jiffies_to_msecs;
		pr_info("kibt: target %pS starts with %s\n", msecs, first_insn(msecs));
		ret = msecs(HZ);
	} else {
		return -EINVAL;
	}
	pr_info("kibt: call returned %ld\n", ret);
	return 0;
}

static void __exit kibt_exit(void)
{
}

module_init(kibt_init);
module_exit(kibt_exit);
MODULE_DESCRIPTION("uibt: kernel IBT test calls");
MODULE_LICENSE("GPL");
