// SPDX-License-Identifier: GPL-2.0
/*
 * xsave_layout MASK FEATURE: where the compacted XSAVE format puts FEATURE,
 * worked out from the CPU's own enumeration, for the features in MASK (the
 * kernel's "Enabled xstate features" line, i.e. XCOMP_BV).  Prints
 * "OFFSET SIZE".
 *
 * SDM Vol. 1, 13.4.3 "Extended Region of an XSAVE Area", compacted form:
 * the extended region starts at 576 (legacy area and header); the
 * components i >= 2 that are set in XCOMP_BV follow in order of i, each
 * CPUID.(EAX=0DH,ECX=i):EAX bytes long, and a component whose
 * CPUID.(EAX=0DH,ECX=i):ECX[1] is set starts at the next multiple of 64.
 * This is the oracle for xstate.sh, which compares it with the offset the
 * kernel computed: the two are written from the SDM independently.
 */

static void cpuid(unsigned int leaf, unsigned int sub, unsigned int r[4])
{
	__asm__ volatile("cpuid"
			 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}

int main(int argc, char **argv)
{
	unsigned long mask, feature, off = 576;
	unsigned int r[4];
	unsigned int i;
	char *end1, *end2;

	if (argc != 3)
		return 2;
	mask = strtoul(argv[1], &end1, 16);
	feature = strtoul(argv[2], &end2, 10);
	if (*end1 || *end2 || feature < 2 || feature > 63 ||
	    !(mask & (1UL << feature)))
		return 2;
	for (i = 2; i <= feature; i++) {
		if (!(mask & (1UL << i)))
			continue;
		cpuid(0xd, i, r);
		if (r[2] & 2)
			off = (off + 63) & ~63UL;
		if (i == feature) {
			printf("%lu %u\n", off, r[0]);
			return 0;
		}
		off += r[0];
	}
	return 2;
}
