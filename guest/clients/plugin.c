// SPDX-License-Identifier: GPL-2.0
/* A plugin, built marked (-fcf-protection=branch) and unmarked (none). */
int plugin_value(void)
{
	return 42;
}
