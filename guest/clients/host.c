// SPDX-License-Identifier: GPL-2.0
/*
 * A real client of the C library's CET support: a program built with
 * -fcf-protection=branch that loads plugins with dlopen(), and, in its
 * "-needed" builds, calls an unmarked DT_NEEDED library.
 *
 * It prints, one line each:
 *   preinit-cfi S     PR_GET_CFI before any other code of the program
 *                     (its first preinit_array function)
 *   needed V          needed_value() of the DT_NEEDED library ("needed")
 *   plugin NAME V     plugin_value() of dlopen()ed NAME ("dlopen:NAME")
 *   dlopen-failed NAME ERROR
 *   target NAME ADDR  before each call into a library: where it goes
 *   end-cfi S         PR_GET_CFI at the end
 *   enforced E        1 if IBT stops a call to code without ENDBR
 * A SIGSEGV prints "sigsegv CODE ADDR" and exits 3.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "probe.h"

static long preinit_cfi = -1000;

static void at_preinit(void)
{
	preinit_cfi = cfi_state();
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit[])(void) = { at_preinit };

static void on_sigsegv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char buf[64];
	int n;

	n = snprintf(buf, sizeof(buf), "sigsegv %d %p\n", si->si_code,
		     si->si_addr);
	if (write(1, buf, n) != n)
		_exit(4);
	_exit(3);
}

#ifdef WITH_NEEDED
int needed_value(void);

static void call_needed(void)
{
	printf("target needed_value %p\n",
	       dlsym(RTLD_DEFAULT, "needed_value"));
	fflush(stdout);
	printf("needed %d\n", needed_value());
}
#else
static void call_needed(void)
{
	printf("needed not-linked\n");
}
#endif

static void call_plugin(const char *name)
{
	int (*fn)(void);
	void *h;

	h = dlopen(name, RTLD_NOW);
	if (!h) {
		printf("dlopen-failed %s %s\n", name, dlerror());
		return;
	}
	fn = (int (*)(void))dlsym(h, "plugin_value");
	if (!fn) {
		printf("dlsym-failed %s\n", name);
		return;
	}
	printf("target %s %p\n", name, (void *)fn);
	fflush(stdout);
	printf("plugin %s %d\n", name, fn());
}

int main(int argc, char *argv[])
{
	struct sigaction sa = {
		.sa_sigaction = on_sigsegv,
		.sa_flags = SA_SIGINFO,
	};
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGSEGV, &sa, NULL);
	printf("preinit-cfi %ld\n", preinit_cfi);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "needed"))
			call_needed();
		else if (!strncmp(argv[i], "dlopen:", 7))
			call_plugin(argv[i] + 7);
		else
			printf("bad-argument %s\n", argv[i]);
	}
	printf("end-cfi %ld\n", cfi_state());
	printf("enforced %d\n", ibt_enforced());
	return 0;
}
