// SPDX-License-Identifier: GPL-2.0
/* An unmarked library that marked programs are linked with (DT_NEEDED). */
int needed_value(void)
{
	return 7;
}
