// SPDX-License-Identifier: GPL-2.0
/*
 * binds ROOT FILE: bind-mount, under ROOT, each SOURCE over its TARGET, as
 * listed in FILE one pair a line, "SOURCE<tab>TARGET".  For the init of
 * "uibt exec" (guest/exec/init): the CET glibc over the host's, about
 * twenty files.  One process for all of them, where a shell loop of
 * "mount --bind" takes a fork and exec each, most of a second in
 * emulation.  Exit status 0, or 1 with the first pair that failed on
 * standard error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

int main(int argc, char *argv[])
{
	char line[8192], src[8192], dst[8192];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: binds ROOT FILE\n");
		return 2;
	}
	f = fopen(argv[2], "r");
	if (!f) {
		fprintf(stderr, "binds: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');

		if (!tab || !nl)
			continue;
		*tab = *nl = '\0';
		snprintf(src, sizeof(src), "%s%s", argv[1], line);
		snprintf(dst, sizeof(dst), "%s%s", argv[1], tab + 1);
		if (mount(src, dst, NULL, MS_BIND, NULL)) {
			fprintf(stderr, "%s over %s: %s\n", line, tab + 1,
				strerror(errno));
			return 1;
		}
	}
	return 0;
}
