/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the real-client programs report about IBT, from inside the process:
 * PR_GET_CFI (the kernel's word), and enforcement by experiment.
 */
#ifndef UIBT_CLIENTS_PROBE_H
#define UIBT_CLIENTS_PROBE_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_GET_CFI
#define PR_GET_CFI			80
#define PR_CFI_BRANCH_LANDING_PADS	0
#endif

/* PR_GET_CFI's state (1 enabled, 2 disabled, | 4 locked), or -errno. */
static inline long cfi_state(void)
{
	unsigned long state = 0;

	if (prctl(PR_GET_CFI, PR_CFI_BRANCH_LANDING_PADS, &state, 0, 0))
		return -(long)errno;
	return state;
}

/* A function without a landing pad, whatever the compiler's options. */
__asm__(".text\n"
	".globl uibt_no_landing\n"
	".type uibt_no_landing, @function\n"
	"uibt_no_landing:\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size uibt_no_landing, .-uibt_no_landing\n");
int uibt_no_landing(void);

/*
 * 1 if a child calling uibt_no_landing through a pointer dies of SIGSEGV
 * (IBT enforced), 0 if the call returns, -1 if the probe failed.
 */
static inline int ibt_enforced(void)
{
	int (*volatile fp)(void) = uibt_no_landing;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		_exit(fp());
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

#endif
