// SPDX-License-Identifier: GPL-2.0
/*
 * uibt bench: workloads for measuring what IBT costs.  Built with nolibc and
 * -fcf-protection=branch, so that all of its code has landing pads and the
 * binary carries the IBT property: it runs with IBT on by default and off
 * under "cetcmd --off".
 *
 * "bench [N]": a CPU-bound workload, what IBT enforcement costs in an
 * emulator.  Two loops, each timed with gettimeofday (nolibc has no
 * clock_gettime):
 *   indirect   calls through a table of function pointers (each call arms the
 *              tracker, each target's ENDBR64 is checked)
 *   straight   the same arithmetic inlined, with no indirect branch
 * Output: "bench: ibt=<0|1> indirect_ms=<n> straight_ms=<n>".
 *
 * "bench exec|signal|pipe N": what IBT costs the kernel, counted in
 * instructions by a TCG plugin (tools/plugin/kinsn.c).  Each of the N
 * operations runs between two marker instructions, multi-byte NOPs that the
 * plugin recognises by their bytes; it counts the kernel's instructions in
 * between, whichever process runs them.  The tag of a sample says which
 * operation it is and whether IBT was on: TAG = OP * 2 + IBT.
 *   exec     a child execs this (static) program, "bench exec-child", from
 *            just before execve() to the first instruction of its main()
 *   signal   the process sends itself a signal, whose handler returns: from
 *            before kill() to after rt_sigreturn
 *   pipe     a round trip of one byte through two pipes to a child process
 *            and back: two context switches
 * Output: "kbench: op=<op> ibt=<0|1> n=<N>".  Without the plugin the markers
 * are NOPs.
 */
#define ARCH_CET_STATUS 0x3001

static unsigned long __attribute__((noinline)) f0(unsigned long x) { return x * 3 + 1; }
static unsigned long __attribute__((noinline)) f1(unsigned long x) { return x ^ (x >> 7); }
static unsigned long __attribute__((noinline)) f2(unsigned long x) { return x + 0x9e3779b9; }
static unsigned long __attribute__((noinline)) f3(unsigned long x) { return (x << 5) - x; }

static unsigned long (*const table[4])(unsigned long) = { f0, f1, f2, f3 };

static long now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int ibt_enabled(void)
{
	unsigned long status[3] = { 0 };

	if (syscall(__NR_arch_prctl, ARCH_CET_STATUS, status))
		return 0;
	return status[0] & 1;
}

static int timed(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000;
	unsigned long acc = 1, i;
	long t0, t1, t2;

	t0 = now_ms();
	for (i = 0; i < n; i++)
		acc = table[acc & 3](acc + i);
	t1 = now_ms();
	for (i = 0; i < n; i++) {
		unsigned long x = acc + i;

		switch (acc & 3) {
		case 0: acc = x * 3 + 1; break;
		case 1: acc = x ^ (x >> 7); break;
		case 2: acc = x + 0x9e3779b9; break;
		default: acc = (x << 5) - x; break;
		}
	}
	t2 = now_ms();
	printf("bench: ibt=%d indirect_ms=%ld straight_ms=%ld acc=%lx\n",
	       ibt_enabled(), t1 - t0, t2 - t1, acc);
	return 0;
}

/* --- kernel instruction counts ----------------------------------------- */

enum { OP_EXEC = 1, OP_SIGNAL = 2, OP_PIPE = 3 };

/*
 * nopl 0x4b4d01TT(%rax) starts a sample tagged TT, nopl 0x4b4d0200(%rax)
 * ends it.  The tag is an immediate: one asm statement per tag.
 */
#define MARK_START(tag) \
	__asm__ volatile("nopl %c0(%%rax)" :: "i" (0x4b4d0100 | (tag)) : "memory")
#define MARK_END() \
	__asm__ volatile("nopl 0x4b4d0200(%%rax)" ::: "memory")

static void start_sample(int op, int ibt)
{
	switch (op * 2 + ibt) {
	case OP_EXEC * 2:	MARK_START(OP_EXEC * 2); break;
	case OP_EXEC * 2 + 1:	MARK_START(OP_EXEC * 2 + 1); break;
	case OP_SIGNAL * 2:	MARK_START(OP_SIGNAL * 2); break;
	case OP_SIGNAL * 2 + 1:	MARK_START(OP_SIGNAL * 2 + 1); break;
	case OP_PIPE * 2:	MARK_START(OP_PIPE * 2); break;
	default:		MARK_START(OP_PIPE * 2 + 1); break;
	}
}

static int fail(const char *what)
{
	printf("kbench: %s failed: errno %d\n", what, errno);
	return 1;
}

/* Exec this program again, as "bench exec-child IBT", n times. */
static int op_exec(const char *self, unsigned long n, int ibt)
{
	char *argv[] = { (char *)self, "exec-child", ibt ? "1" : "0", NULL };
	unsigned long i;
	int status;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return fail("fork");
		if (pid == 0) {
			start_sample(OP_EXEC, ibt);
			execve(self, argv, environ);
			exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || status != 0)
			return fail("exec-child");
	}
	return 0;
}

/* The program exec'ed: end the sample, then check its IBT state. */
static int exec_child(const char *want)
{
	MARK_END();
	return ibt_enabled() == (want[0] == '1') ? 0 : 1;
}

/* rt_sigaction()'s struct, and the sigreturn trampoline nolibc lacks. */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

#define SA_RESTORER_FLAG 0x04000000

void bench_restorer(void);
__asm__(".text\n"
	".globl bench_restorer\n"
	"bench_restorer:\n"
	"\tmov $15, %eax\n"	/* __NR_rt_sigreturn */
	"\tsyscall\n");

static volatile unsigned long handled;

static void on_signal(int sig)
{
	handled++;
}

/* Send this process a signal n times; the handler returns. */
static int op_signal(unsigned long n, int ibt)
{
	struct ksigaction sa = {
		.handler = on_signal,
		.flags = SA_RESTORER_FLAG,
		.restorer = bench_restorer,
	};
	pid_t self = getpid();
	unsigned long i;

	if (syscall(__NR_rt_sigaction, SIGUSR1, &sa, NULL, 8))
		return fail("rt_sigaction");
	for (i = 0; i < n; i++) {
		start_sample(OP_SIGNAL, ibt);
		kill(self, SIGUSR1);
		MARK_END();
	}
	return handled == n ? 0 : fail("signal count");
}

/* n round trips of one byte to a child and back. */
static int op_pipe(unsigned long n, int ibt)
{
	int to[2], from[2], status;
	unsigned long i;
	char c = 0;
	pid_t pid;

	if (pipe(to) || pipe(from))
		return fail("pipe");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		while (read(to[0], &c, 1) == 1)
			if (write(from[1], &c, 1) != 1)
				exit(1);
		exit(0);
	}
	close(to[0]);
	close(from[1]);
	for (i = 0; i < n; i++) {
		start_sample(OP_PIPE, ibt);
		if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
			return fail("pipe round trip");
		MARK_END();
	}
	close(to[1]);
	if (waitpid(pid, &status, 0) != pid || status != 0)
		return fail("pipe child");
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100;
	int ibt = ibt_enabled(), ret;
	const char *op = argc > 1 ? argv[1] : "";

	if (!strcmp(op, "exec-child"))
		return exec_child(argc > 2 ? argv[2] : "");
	if (!strcmp(op, "exec"))
		ret = op_exec(argv[0], n, ibt);
	else if (!strcmp(op, "signal"))
		ret = op_signal(n, ibt);
	else if (!strcmp(op, "pipe"))
		ret = op_pipe(n, ibt);
	else
		return timed(argc, argv);
	printf("kbench: op=%s ibt=%d n=%lu%s\n", op, ibt, n, ret ? " failed" : "");
	return ret;
}
