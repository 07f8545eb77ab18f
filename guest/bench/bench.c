// SPDX-License-Identifier: GPL-2.0
/*
 * uibt bench: a CPU-bound workload for measuring what IBT enforcement costs
 * in an emulator.  Built with nolibc and -fcf-protection=branch, so that all
 * of its code has landing pads and the binary carries the IBT property: it
 * runs with IBT on by default and off under "cetcmd --off".
 *
 * Two loops, each timed with gettimeofday (nolibc has no clock_gettime):
 *   indirect   calls through a table of function pointers (each call arms the
 *              tracker, each target's ENDBR64 is checked)
 *   straight   the same arithmetic inlined, with no indirect branch
 *
 * Output: "bench: ibt=<0|1> indirect_ms=<n> straight_ms=<n>".
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

int main(int argc, char **argv)
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
