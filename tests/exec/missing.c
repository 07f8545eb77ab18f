// SPDX-License-Identifier: GPL-2.0
/*
 * The subject of uibt exec's own tests (harness/exec_test.py), built with
 * "./uibt cc": a marked program with four indirect-branch targets without
 * ENDBR, each called twice: an assembly function (missing_asm.S), a
 * nocf_check function, a JIT-written stub and an assembly function of a
 * marked shared library (libmissing.S).  It prints "sum 48" and exits with
 * 24 when all of them ran.
 *
 *   missing io    copy standard input to standard output, write a line to
 *                 standard error and the file "uibt-exec-out" in the
 *                 working directory, exit with 3
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int asm_nolanding(void);	/* returns 1 */
int lib_nolanding(void);	/* returns 12 */

static int __attribute__((nocf_check, noinline)) nocf_function(void)
{
	return 4;
}

static int call(int (*volatile f)(void))
{
	return f();
}

static int io(void)
{
	char buf[4096];
	size_t n;
	FILE *f;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, stdout);
	fprintf(stderr, "missing: to standard error\n");
	f = fopen("uibt-exec-out", "w");
	if (!f || fputs("written in the guest\n", f) < 0 || fclose(f))
		return 1;
	return 3;
}

int main(int argc, char **argv)
{
	/* mov $7, %eax; ret: no ENDBR */
	static const unsigned char jit[] = { 0xb8, 7, 0, 0, 0, 0xc3 };
	int (*stub)(void);
	int i, sum = 0;

	if (argc > 1 && !strcmp(argv[1], "io"))
		return io();
	stub = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stub == MAP_FAILED)
		return 1;
	memcpy(stub, jit, sizeof(jit));
	for (i = 0; i < 2; i++)
		sum += call(asm_nolanding) + call(nocf_function) + call(stub) +
		       call(lib_nolanding);
	printf("sum %d\n", sum);
	return sum == 48 ? 24 : 1;
}
